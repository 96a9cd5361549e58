"""_contrib_SyncBatchNorm: BatchNorm over the channel axis 1 whose batch statistics MXNet
would synchronise across ``ndev`` devices. One device is plain BatchNorm; several need a
cross-device barrier that sparsym's eager execution does not have, so ``ndev > 1`` is
refused when the parameters are parsed."""
from __future__ import annotations

from ..grad import kept, multi_bw
from ..params import Attrs, Field
from ..registry import Dispatch, OpDef, register
from ._common import Checked, D, require
from .norm import BN_FIELDS, BN_LAYOUT, _bn_bwd_shape, bn_bwd_var, bn_fwd_var, bn_shape


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


def _as_bn(a):
    """The BatchNorm parameters of a SyncBatchNorm node (channel axis 1)."""
    return Attrs(a, axis=1)


def _sync_grad(node, og):
    ins = [og[0], node.inputs[0], node.inputs[1], (node, 1), (node, 2)]
    return multi_bw("_backward__contrib_SyncBatchNorm", ins, node, "backward", 3,
                    **kept(node)) + [None, None]


register(OpDef(
    "_contrib_SyncBatchNorm", params=_SYNC,
    **BN_LAYOUT,
    dispatch=(Dispatch((D, D, D, D, D), (D,), lambda a, xs: bn_fwd_var(_as_bn(a), xs)),),
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
    dispatch=(Dispatch((D, D, D, D, D), (D,), lambda a, xs: bn_bwd_var(_as_bn(a), xs)),),
    infer_shape=_bn_bwd_shape))
