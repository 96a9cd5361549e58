"""The other forms of batch norm, thin records over BatchNorm's kernels (batch_norm.py):

- BatchNorm_v1 (MXNet's first batch norm: channel axis 1, outputs (out, mean, var));
- _contrib_BatchNormWithReLU (BatchNorm followed by ReLU, the gradient masked by the output);
- _contrib_SyncBatchNorm: BatchNorm over the channel axis 1 whose batch statistics MXNet
  would synchronise across ``ndev`` devices. One device is plain BatchNorm; several need a
  cross-device barrier that sparsym's eager execution does not have, so ``ndev > 1`` is
  refused when the parameters are parsed."""
from __future__ import annotations

import numpy as np

from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Attrs, Field
from ..core.registry import Dispatch, OpDef, register
from .batch_norm import (
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
    """BatchNorm parameters of a BatchNorm_v1 or SyncBatchNorm node (channel axis 1)."""
    return Attrs(a, axis=1)


def _axis1_fwd(a, xs):
    return bn_fwd_var(_as_bn(a), xs)


def _axis1_bwd(a, xs):
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
    dispatch=(Dispatch((DNS,) * 5, (DNS,), _axis1_fwd),),
    infer_shape=lambda a, ins, outs: bn_shape(_as_bn(a), ins, outs),
    gradient=_bn_like_grad("_backward_BatchNorm_v1"),
    doc="""MXNet's first BatchNorm: BatchNorm over channel axis 1 (its parameters but
    ``axis``, ``cudnn_off`` and the calibration ranges), whose optional extra outputs
    (``output_mean_var``) are the mean and the variance; BatchNorm's are the mean and the
    inverse std."""))
register(OpDef(
    "_backward_BatchNorm_v1", params=_V1, inputs=("ograd", "data", "gamma", "mean", "var"),
    num_outputs=3, needs_is_train=True, dispatch=(Dispatch((DNS,) * 5, (DNS,), _axis1_bwd),),
    infer_shape=_bn_bwd_shape))


def _relu_fwd(a, xs):
    y, mean, invstd = _bn_fwd(a, xs)
    return np.maximum(y, 0, out=y), mean, invstd


def _relu_bwd(a, xs):
    g, x, gamma, mean, invstd, y = xs
    return _bn_bwd(a, (np.where(y > 0, g, 0).astype(g.dtype), x, gamma, mean, invstd))


register(OpDef(
    "_contrib_BatchNormWithReLU", params=_BN, **BN_LAYOUT,
    dispatch=(Dispatch((DNS,) * 5, (DNS,), _relu_fwd),), infer_shape=bn_shape,
    gradient=_bn_like_grad("_backward_contrib_BatchNormWithReLU"),
    doc="""BatchNorm followed by ReLU (MXNet's fused contrib op): ``relu(BatchNorm(...))``
    with BatchNorm's parameters, auxiliary states and extra outputs; see BatchNorm."""))
register(OpDef(
    "_backward_contrib_BatchNormWithReLU", params=_BN,
    inputs=("ograd", "data", "gamma", "mean", "invstd", "out"), num_outputs=3,
    needs_is_train=True, dispatch=(Dispatch((DNS,) * 6, (DNS,), _relu_bwd),),
    infer_shape=_bn_bwd_shape))


# ------------------------------------------------------------------ SyncBatchNorm
def _sync_check(op, a):
    require(a.eps > 0, op, f"eps must be positive, got {a.eps}")
    require(a.ndev >= 1, op, f"ndev must be at least 1, got {a.ndev}")
    if a.ndev > 1:
        raise NotImplementedError(
            f"{op}: ndev={a.ndev} synchronises batch statistics across devices, which sparsym "
            "does not support; use ndev=1 (one context), or BatchNorm per device")


_SYNC = Checked(
    _sync_check,
    **BN_FIELDS,
    ndev=Field("int", 1, doc="devices sharing the batch statistics (only 1 is supported)"),
    key=Field("str", doc="the layer's key among synchronised layers (required)"))


def _sync_grad(node, og):
    ins = [og[0], node.inputs[0], node.inputs[1], (node, 1), (node, 2)]
    return multi_bw("_backward__contrib_SyncBatchNorm", ins, node, "backward", 3,
                    **kept(node)) + [None, None]


register(OpDef(
    "_contrib_SyncBatchNorm", params=_SYNC,
    **BN_LAYOUT,
    dispatch=(Dispatch((DNS,) * 5, (DNS,), _axis1_fwd),),
    infer_shape=lambda a, ins, outs: bn_shape(_as_bn(a), ins, outs),
    gradient=_sync_grad,
    doc="""Batch normalization with statistics shared by ``ndev`` devices (MXNet's
    contrib.SyncBatchNorm); the channel axis is 1.

    With ``ndev=1`` it computes exactly what ``BatchNorm(axis=1)`` computes, including the
    in-place update of the moving statistics in training, except that its extra outputs
    (``output_mean_var``) are the mean and the variance, as MXNet's. ``ndev > 1`` raises
    NotImplementedError: sparsym runs one device's call at a time and has no cross-device
    barrier.

    Parameters
    ----------
    data, gamma, beta : Symbol or NDArray
    moving_mean, moving_var : auxiliary states, shaped (channels,)
    eps : float, default 1e-3
    momentum : float, default 0.9
    fix_gamma : bool, default True
    use_global_stats : bool, default False
    output_mean_var : bool, default False
    ndev : int, default 1
    key : str (required)

    Examples
    --------
    >>> import sparsym as mx
    >>> s = mx.sym.contrib.SyncBatchNorm(mx.sym.var('x'), key='bn', name='bn')
    >>> s.list_auxiliary_states()
    ['bn_moving_mean', 'bn_moving_var']
    """))
register(OpDef(
    "_backward__contrib_SyncBatchNorm", params=_SYNC,
    inputs=("ograd", "data", "gamma", "mean", "var"), num_outputs=3, needs_is_train=True,
    dispatch=(Dispatch((DNS,) * 5, (DNS,), _axis1_bwd),),
    infer_shape=_bn_bwd_shape))
