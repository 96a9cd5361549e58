"""Operator records. Importing this package registers every operator family: each module
(and subpackage) of ``sparsym.ops`` is imported, so a new family is a new file."""
import importlib as _importlib
import pkgutil as _pkgutil

from . import registry  # noqa: F401
from .registry import Dispatch, OpDef, all_ops, get_op, register  # noqa: F401

_INFRA = {"registry", "params", "rules", "shape_codes", "node", "grad", "grad_expr"}


def _import_all(pkg_name, path):
    for info in sorted(_pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name in _INFRA or info.name.startswith("_"):
            continue
        mod = _importlib.import_module(f"{pkg_name}.{info.name}")
        if info.ispkg:
            _import_all(mod.__name__, mod.__path__)


_import_all(__name__, __path__)
