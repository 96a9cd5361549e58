"""Record MXNet 1.9.1's AMP operator lists into ``sparsym/contrib/amp/op_lists.json``.

Run with an interpreter that has MXNet 1.9.1 installed (the lists are MXNet's data: which
operators AMP casts to the low-precision type, keeps in float32, runs in the widest input
type, or casts conditionally; ``amp.list_*`` return them)::

    python tools/make_amp_lists.py
"""
import json
import os

from mxnet.contrib.amp import lists


def main():
    """Write the JSON file next to the sparsym amp package."""
    out = {}
    for key, mod, lp in (("float16", lists.symbol_fp16, "FP16"),
                         ("bfloat16", lists.symbol_bf16, "BF16")):
        out[key] = {
            "lp16": list(getattr(mod, f"{lp}_FUNCS")),
            "fp32": list(mod.FP32_FUNCS),
            "lp16_fp32": list(getattr(mod, f"{lp}_FP32_FUNCS")),
            "conditional_fp32": [list(c) for c in mod.CONDITIONAL_FP32_FUNCS],
            "widest_type_cast": list(mod.WIDEST_TYPE_CASTS),
            "loss_output": list(mod.LOSS_OUTPUT_FUNCTIONS),
            "lp16_use_fp32_params": (
                {k: list(v) for k, v in mod.BF16_USE_FP32_PARAMS.items()}
                if lp == "BF16" else None),
        }
    path = os.path.join(os.path.dirname(__file__), "..", "sparsym", "contrib", "amp",
                        "op_lists.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
