"""mx.contrib.quantization: MXNet's INT8 quantization, which sparsym does not implement.

Importing works (scripts that only import it run); using any name raises a clear error
(UnsupportedFeatureError: a NotImplementedError, and an AttributeError for hasattr).
"""
from ..base import unsupported_module

__getattr__ = unsupported_module("mx.contrib.quantization",
                                 "INT8 quantization (MKL-DNN / cuDNN calibration) is "
                                 "not implemented in sparsym; models run in float32 / "
                                 "float16")
