"""Operators AMP casts for bfloat16 targets (MXNet 1.9.1's ``symbol_bf16`` lists:
``BF16_FUNCS``, ``BF16_FP32_FUNCS``, ``FP32_FUNCS``, ``CONDITIONAL_FP32_FUNCS``,
``WIDEST_TYPE_CASTS``, ``LOSS_OUTPUT_FUNCTIONS``, ``BF16_USE_FP32_PARAMS``)."""
from . import _constants

globals().update(_constants("bfloat16", "BF16"))
