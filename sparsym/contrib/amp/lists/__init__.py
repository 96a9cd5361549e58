"""MXNet 1.9.1's AMP operator lists (``symbol_fp16``, ``symbol_bf16``), read from
``op_lists.json`` (written by ``tools/make_amp_lists.py`` from MXNet itself)."""
import json as _json
import os as _os


def _constants(kind, lp):
    """MXNet's module constants for one target type (``'float16'``/``'FP16'`` or
    ``'bfloat16'``/``'BF16'``): ``FP16_FUNCS``, ``FP32_FUNCS``, ``WIDEST_TYPE_CASTS``..."""
    path = _os.path.join(_os.path.dirname(_os.path.dirname(__file__)), "op_lists.json")
    with open(path) as f:
        lists = _json.load(f)[kind]
    out = {f"{lp}_FUNCS": lists["lp16"], f"{lp}_FP32_FUNCS": lists["lp16_fp32"],
           "FP32_FUNCS": lists["fp32"],
           "CONDITIONAL_FP32_FUNCS": [tuple(c) for c in lists["conditional_fp32"]],
           "WIDEST_TYPE_CASTS": lists["widest_type_cast"],
           "LOSS_OUTPUT_FUNCTIONS": lists["loss_output"]}
    if lists["lp16_use_fp32_params"] is not None:
        out[f"{lp}_USE_FP32_PARAMS"] = lists["lp16_use_fp32_params"]
    return out


from . import symbol_bf16, symbol_fp16  # noqa: E402,F401
