"""The importer's table and its error: the graph walk (``_import.py``) and the translators
(``_import_ops*.py``) both build on this module, so neither imports the other for them."""
from __future__ import annotations

from ...base import MXNetError
from ...onnx._tables import registrar


class ImportError_(MXNetError, ValueError):
    """An ONNX node whose attributes have no sparsym equivalent."""


# ONNX operator name -> fn(graph, node, attrs) -> outputs, filled by _import_ops*
IMPORTS: dict = {}
register = registrar(IMPORTS)
