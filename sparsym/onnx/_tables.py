"""The translation tables' one registration helper (``registrar``, used by the exporter here
and the importer in ``sparsym/contrib/onnx``), the exporter's table and its error. The
graph walk (``_graph.py``) and the translators (``_translations*.py``) both build on this
module, so neither imports the other's module for them."""
from __future__ import annotations

from collections.abc import Callable

from ..base import MXNetError


def registrar(table: dict) -> Callable[..., Callable[[Callable], Callable]]:
    """``register(*names)`` for ``table``: a decorator storing its function under each
    name."""
    def register(*names: str) -> Callable[[Callable], Callable]:
        def deco(fn: Callable) -> Callable:
            for n in names:
                table[n] = fn
            return fn
        return deco
    return register


class ExportError(MXNetError, ValueError):
    """An operator or a parameter value cannot be expressed in ONNX."""


# MXNet operator name -> fn(converter, node, attrs, inputs, outputs), filled by _translations*
TRANSLATIONS: dict = {}
register = registrar(TRANSLATIONS)
