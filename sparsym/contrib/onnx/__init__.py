"""``mx.contrib.onnx``: read ONNX models into sparsym (MXNet 1.9.1's importer API).

- :func:`import_model`: an ONNX file -> ``(sym, arg_params, aux_params)``;
- :func:`get_model_metadata`: names, shapes and dtypes of its inputs and outputs;
- :func:`import_to_gluon`: an ONNX file -> a ``gluon.SymbolBlock`` with its parameters;
- :func:`export_model`: the same as ``mx.onnx.export_model`` (MXNet's older path).

Needs the ``onnx`` package (``pip install sparsym[onnx]``). Files from any exporter load if
their operators have a translation (``supported_onnx_ops()``; an unknown one is named in
the error). Initializers become parameters (BatchNormalization's running statistics become
auxiliary states); constants that only give shapes, axes or pads are read as attributes.
"""
from __future__ import annotations

from ._import import (
    get_model_metadata,
    import_model,
    import_to_gluon,
    supported_onnx_ops,
)

__all__ = ["import_model", "get_model_metadata", "import_to_gluon", "export_model",
           "supported_onnx_ops"]


def export_model(*args, **kwargs):
    """``mx.onnx.export_model`` under its earlier path (see :func:`sparsym.onnx.export_model`)."""
    from ...onnx import export_model as _export
    return _export(*args, **kwargs)
