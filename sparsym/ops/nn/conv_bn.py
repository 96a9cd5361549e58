"""A convolution followed by its BatchNorm, as one step of an inference plan.

``passes/fuse.py`` folds a BatchNorm that reads the only use of a convolution (records:
Convolution's ``folds_affine`` names this op, BatchNorm's ``affine_fold`` says whether its
parameters allow it) into one node of this op: the convolution's inputs, then the
BatchNorm's gamma, beta, moving mean and moving variance. Running on the moving statistics
(``is_train`` off, or ``use_global_stats``), the BatchNorm is an affine map per output
channel, so oneDNN convolves with ``w * scale`` and bias ``(b - mean) * scale + beta``
(``scale = gamma / sqrt(var + eps)``); the scaled, reordered weight is cached while the
weight and the statistics are unchanged (``kernels/onednn/core.reordered``). Otherwise (batch
statistics, the Numba path) the two kernels run one after the other, as unfused. A residual
add reading it (``sums_inputs``) joins as oneDNN's sum post-op: the node then takes the other
summand as its last input and the convolution accumulates into a copy of it.
"""
from __future__ import annotations

import numpy as np

from ...kernels import onednn as dnn
from ...kernels.onednn import conv as dconv
from ..core import rules
from ..core.helpers import DNS
from ..core.registry import Dispatch, OpDef, register
from . import batch_norm as _bn
from . import conv as _conv
from .activation import POST_OPS

_BN_INPUTS = ("gamma", "beta", "moving_mean", "moving_var")


def _parts(a, xs):
    """(conv inputs, BatchNorm attrs, gamma, beta, moving mean, moving var, the summand or
    None)."""
    acc = None
    if a.get("__sum__"):
        xs, acc = xs[:-1], xs[-1]
    k = len(xs) - 4
    return (xs[:k], a["__bn__"]) + tuple(xs[k:]) + (acc,)


def _conv_bn_fwd(a, xs):
    cx, bn, gamma, beta, mm, mv, acc = _parts(a, xs)
    post = a.get("__post_ops__", ())
    train = a.get("__is_train__", False)
    if not (train and not bn.use_global_stats) and not _conv._channel_last(a):
        y = _folded(a, bn, cx, gamma, beta, mm, mv, post, acc)
        if y is not NotImplemented:
            return y
    conv_a = type(a)(a, __post_ops__=(), __bn__=None, __sum__=False)
    y = _conv._conv_fwd(conv_a, cx)[0]
    blocked = a.get("__blocked__", False)
    bn_a = type(bn)(bn, __post_ops__=() if acc is not None else post, __is_train__=train,
                    __blocked__=blocked and acc is None)
    out = _bn._bn_fwd(bn_a, (y, gamma, beta, mm, mv))
    if acc is None:
        return out
    y = dnn.to_plain(out[0]) + dnn.to_plain(acc)
    for o in post:
        y = POST_OPS[o[0]](y)
    return (y,) + tuple(out[1:])


def _folded(a, bn, cx, gamma, beta, mm, mv, post, acc):
    """The folded convolution on oneDNN (the summand ``acc`` added before ``post``), or
    NotImplemented."""
    w = cx[1]
    invstd = 1.0 / np.sqrt(mv.astype(np.float64) + bn.eps)
    g = np.ones(gamma.shape) if bn.fix_gamma else gamma.astype(np.float64)
    scale = g * invstd
    b = 0.0 if a.no_bias else cx[2].astype(np.float64)
    shift = ((b - mm) * scale + beta).astype(w.dtype)
    s, p, d = _conv._geom(a)
    y = dnn.attempt(dconv.conv_forward, cx[0], w, shift, s, p, d, a.num_group, a.layout,
                    plain=not _conv._keep_blocked(a), scale=scale.astype(w.dtype), acc=acc,
                    post_ops=([("sum", 1.0)] if acc is not None else [])
                    + [("eltwise", getattr(dnn.E, _conv._DNN_POST[o[0]]), 0.0, 0.0)
                       for o in post])
    if y is NotImplemented:
        return y
    if not isinstance(y, dnn.Tensor):
        y = y.astype(w.dtype, copy=False)
    return y, mm.astype(w.dtype), invstd.astype(w.dtype)


def _inputs(a):
    return _conv._inputs(a) + _BN_INPUTS + (("sum",) if a.get("__sum__") else ())


def _shape(a, ins, outs):
    ins = list(ins)
    summand = [ins.pop()] if a.get("__sum__") else []
    k = len(ins) - 4
    cins, couts = _conv.conv_shape(a, ins[:k], list(outs[:1]))
    if summand:  # the summand has the output's shape
        rules.set_shape(couts, 0, summand[0], "output")
        rules.set_shape(summand, 0, couts[0])
    f = (a.num_filter,)
    bins, bouts = ins[k:], list(outs[1:])
    for i in range(4):
        rules.set_shape(bins, i, f)
    for i in range(2):
        rules.set_shape(bouts, i, f, "output")
    return list(cins) + bins + summand, list(couts) + bouts


register(OpDef(
    "_fused_conv_bn", params=_conv._CONV, inputs=_inputs,
    aux=("moving_mean", "moving_var"), needs_is_train=True,
    num_outputs=3, num_visible_outputs=1, output_names=("output", "mean", "var"),
    dispatch=(Dispatch((DNS,) * 6 + ("...",), (DNS,), _conv_bn_fwd, blocked=True),),
    fuses_post_ops=True, fuses_sum=True, infer_shape=_shape, infer_type=rules.same_type,
    doc="""Convolution then BatchNorm in one step (built by the fusion pass of inference
    plans, never by users): the BatchNorm folded into the convolution's weight and bias
    when it runs on its moving statistics; with ``__sum__`` a last input is added before
    the post-ops (a residual add, oneDNN's sum post-op)."""))
