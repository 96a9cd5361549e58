"""Operators AMP casts for float16 targets (MXNet 1.9.1's ``symbol_fp16`` lists:
``FP16_FUNCS``, ``FP16_FP32_FUNCS``, ``FP32_FUNCS``, ``CONDITIONAL_FP32_FUNCS``,
``WIDEST_TYPE_CASTS``, ``LOSS_OUTPUT_FUNCTIONS``)."""
from . import _constants

globals().update(_constants("float16", "FP16"))
