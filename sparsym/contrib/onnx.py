"""mx.contrib.onnx: MXNet's ONNX import/export, which sparsym does not implement.

Importing works (scripts that only import it run); using any name raises a clear error
(UnsupportedFeatureError: a NotImplementedError, and an AttributeError for hasattr).
"""
from ..base import unsupported_module

__getattr__ = unsupported_module("mx.contrib.onnx",
                                 "ONNX import/export is not implemented in sparsym; "
                                 "save models with Module.save_checkpoint or "
                                 "HybridBlock.export (MXNet's JSON + params formats)")
