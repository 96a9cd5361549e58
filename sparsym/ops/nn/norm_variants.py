"""BatchNorm_v1 (MXNet's first batch norm: channel axis 1, outputs (out, mean, var)) and
_contrib_BatchNormWithReLU (BatchNorm followed by ReLU, the gradient masked by the
output): thin records over BatchNorm's kernels in norm.py."""
from __future__ import annotations

import numpy as np

from ..grad import kept, multi_bw
from ..params import Attrs
from ..registry import Dispatch, OpDef, register
from ._common import Checked, D
from .norm import (
    _BN,
    BN_FIELDS,
    BN_LAYOUT,
    _bn_bwd,
    _bn_bwd_shape,
    _bn_check,
    _bn_fwd,
    bn_bwd_var,
    bn_fwd_var,
    bn_shape,
)

_V1 = Checked(_bn_check, **BN_FIELDS)


def _as_bn(a):
    """BatchNorm parameters of a BatchNorm_v1 node (channel axis 1)."""
    return Attrs(a, axis=1)


def _v1_fwd(a, xs):
    return bn_fwd_var(_as_bn(a), xs)


def _v1_bwd(a, xs):
    return bn_bwd_var(_as_bn(a), xs)


def _bn_like_grad(bname):
    def grad(node, og):
        ins = [og[0], node.inputs[0], node.inputs[1], (node, 1), (node, 2)]
        if bname.endswith("ReLU"):
            ins.append((node, 0))
        return multi_bw(bname, ins, node, "backward", 3, **kept(node)) + [None, None]
    return grad


register(OpDef(
    "BatchNorm_v1", params=_V1, **BN_LAYOUT,
    dispatch=(Dispatch((D,) * 5, (D,), _v1_fwd),),
    infer_shape=lambda a, ins, outs: bn_shape(_as_bn(a), ins, outs),
    gradient=_bn_like_grad("_backward_BatchNorm_v1"),
    doc="""MXNet's first BatchNorm: BatchNorm over channel axis 1 (its parameters but
    ``axis``, ``cudnn_off`` and the calibration ranges), whose optional extra outputs
    (``output_mean_var``) are the mean and the variance; BatchNorm's are the mean and the
    inverse std."""))
register(OpDef(
    "_backward_BatchNorm_v1", params=_V1, inputs=("ograd", "data", "gamma", "mean", "var"),
    num_outputs=3, needs_is_train=True, dispatch=(Dispatch((D,) * 5, (D,), _v1_bwd),),
    infer_shape=_bn_bwd_shape))


def _relu_fwd(a, xs):
    y, mean, invstd = _bn_fwd(a, xs)
    return np.maximum(y, 0, out=y), mean, invstd


def _relu_bwd(a, xs):
    g, x, gamma, mean, invstd, y = xs
    return _bn_bwd(a, (np.where(y > 0, g, 0).astype(g.dtype), x, gamma, mean, invstd))


register(OpDef(
    "_contrib_BatchNormWithReLU", params=_BN, **BN_LAYOUT,
    dispatch=(Dispatch((D,) * 5, (D,), _relu_fwd),), infer_shape=bn_shape,
    gradient=_bn_like_grad("_backward_contrib_BatchNormWithReLU"),
    doc="""BatchNorm followed by ReLU (MXNet's fused contrib op): ``relu(BatchNorm(...))``
    with BatchNorm's parameters, auxiliary states and extra outputs; see BatchNorm."""))
register(OpDef(
    "_backward_contrib_BatchNormWithReLU", params=_BN,
    inputs=("ograd", "data", "gamma", "mean", "invstd", "out"), num_outputs=3,
    needs_is_train=True, dispatch=(Dispatch((D,) * 6, (D,), _relu_bwd),),
    infer_shape=_bn_bwd_shape))
