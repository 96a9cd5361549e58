"""``mx.contrib.amp``: automatic mixed precision is not supported.

MXNet's AMP rewrites graphs to run float16 (GPU) or bfloat16 (MKL-DNN) kernels with loss
scaling. sparsym computes on the CPU with NumPy, which has no bfloat16 and no faster float16
path, so every AMP entry point raises NotImplementedError saying so: drop the ``amp.*``
calls and the script trains in float32 (``amp_cast``/``amp_multicast`` remain as operators
for graphs that contain them).
"""
from __future__ import annotations

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_symbol", "list_lp16_ops", "list_fp32_ops",
           "list_lp16_fp32_ops", "list_conditional_fp32_ops", "list_widest_type_cast",
           "list_loss_output_functions", "list_lp16_use_fp32_params"]


def _unsupported(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"mx.contrib.amp.{name}: automatic mixed precision is not supported by sparsym "
            "(CPU NumPy kernels have no bfloat16 and no faster float16); remove the amp "
            "calls and train in float32")
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"MXNet's ``amp.{name}``: not supported here (NotImplementedError)."
    return refuse


init = _unsupported("init")
init_trainer = _unsupported("init_trainer")
scale_loss = _unsupported("scale_loss")
unscale = _unsupported("unscale")
convert_model = _unsupported("convert_model")
convert_hybrid_block = _unsupported("convert_hybrid_block")
convert_symbol = _unsupported("convert_symbol")
list_lp16_ops = _unsupported("list_lp16_ops")
list_fp32_ops = _unsupported("list_fp32_ops")
list_lp16_fp32_ops = _unsupported("list_lp16_fp32_ops")
list_conditional_fp32_ops = _unsupported("list_conditional_fp32_ops")
list_widest_type_cast = _unsupported("list_widest_type_cast")
list_loss_output_functions = _unsupported("list_loss_output_functions")
list_lp16_use_fp32_params = _unsupported("list_lp16_use_fp32_params")
