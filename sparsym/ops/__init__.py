"""Operator records. Importing this package registers every operator family: each
subpackage except ``core`` (the record, registry and shared helpers) is imported with all
its modules not starting with ``_``, so a new family is a new folder and a new operator
file in a family is picked up as it is."""
import importlib as _importlib
import pkgutil as _pkgutil

from .core import registry  # noqa: F401
from .core.registry import Dispatch, OpDef, all_ops, get_op, register  # noqa: F401


def _import_all(pkg_name, path):
    for info in sorted(_pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name == "core" or info.name.startswith("_"):
            continue
        mod = _importlib.import_module(f"{pkg_name}.{info.name}")
        if info.ispkg:
            _import_all(mod.__name__, mod.__path__)


_import_all(__name__, __path__)
