"""BatchNorm with moving statistics as auxiliary states (updated in training)."""
from __future__ import annotations

import numpy as np

from ...base import MXNetError
from ...kernels import norm as knorm
from ...kernels.onednn import to_plain
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, norm_axis, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register
from . import _onednn_layers as _dnn
from .activation import POST_OPS


def _bn_check(op, a):
    require(a.eps > 0, op, f"eps must be positive, got {a.eps}")


# the leading parameters every batch-norm flavour declares, in MXNet's order
BN_FIELDS = dict(
    eps=Field("float", 1e-3, doc="added to the variance"),
    momentum=Field("float", 0.9, doc="moving average momentum"),
    fix_gamma=Field("bool", True, doc="treat gamma as 1 (its gradient is 0)"),
    use_global_stats=Field("bool", False, doc="use the moving statistics in training too"),
    output_mean_var=Field("bool", False, doc="also output the mean and the inverse std"))

_BN = Checked(
    _bn_check,
    **BN_FIELDS,
    axis=Field("int", 1, doc="the channel axis"),
    cudnn_off=Field("bool", False, doc="ignored (no cuDNN)"),
    min_calib_range=Field("float_or_none", None, doc="quantization only; ignored"),
    max_calib_range=Field("float_or_none", None, doc="quantization only; ignored"))


def bn_shape(attrs, ins, outs):
    if ins[0] is None and outs[0] is not None:
        rules.set_shape(ins, 0, outs[0])
    if ins[0] is None:
        return ins, outs
    ax = norm_axis(attrs.axis, len(ins[0]), "BatchNorm")
    c = ins[0][ax]
    for i in range(1, 5):
        rules.set_shape(ins, i, (c,))
    rules.set_shape(outs, 0, ins[0], "output")
    rules.set_shape(outs, 1, (c,), "output")
    rules.set_shape(outs, 2, (c,), "output")
    return ins, outs


def _layout(a, x):
    ax = norm_axis(a.axis, x.ndim, "BatchNorm")
    red = tuple(i for i in range(x.ndim) if i != ax)
    bshape = [1] * x.ndim
    bshape[ax] = x.shape[ax]
    return red, tuple(bshape)


def _batch_stats(a):
    return a.get("__is_train__", False) and not a.use_global_stats


def _fast(x):
    """float32/float64 data runs on the numba kernels (others, e.g. float16, on NumPy)."""
    return x.dtype in (np.float32, np.float64)


def _bn_fwd(a, xs):
    post = a.get("__post_ops__", ())  # activations fused by passes/fuse.py
    x, gamma, beta, mm, mv = xs
    out = _dnn.bn_fwd(a, x, gamma, beta, mm, mv, _batch_stats(a))
    if out is not None:
        if post and post != (("relu",),):  # oneDNN fuses relu only
            y = to_plain(out[0])
            for o in post:
                y = POST_OPS[o[0]](y)
            out = (y,) + tuple(out[1:])
        return out
    y, mean, invstd = _bn_fwd_numba(a, to_plain(x), gamma, beta, mm, mv)
    for o in post:
        y = POST_OPS[o[0]](y)
    return y, mean, invstd


def _bn_fwd_numba(a, x, gamma, beta, mm, mv):
    """BatchNorm forward on the Numba kernels (NumPy for other dtypes)."""
    red, bs = _layout(a, x)
    ax = norm_axis(a.axis, x.ndim, "BatchNorm")
    fast = _fast(x)
    if fast:
        x = np.ascontiguousarray(x)
    if _batch_stats(a):
        if fast:
            mean = np.empty(x.shape[ax])
            var = np.empty(x.shape[ax])
            knorm.channel_mean_var(knorm.as3(x, ax), mean, var)
        else:
            xd = x.astype(np.float64) if x.dtype == np.float16 else x
            mean = xd.mean(axis=red)
            var = ((xd - mean.reshape(bs)) ** 2).mean(axis=red)
        knorm.update_moving(mm, mv, mean, var, a.momentum)
    else:
        mean, var = mm.astype(np.float64), mv.astype(np.float64)
    invstd = 1.0 / np.sqrt(var + a.eps)
    g = np.ones_like(gamma) if a.fix_gamma else gamma
    scale = g * invstd
    dt = x.dtype
    if fast:
        # y = x * scale + (beta - mean * scale): one pass, per-channel constants in x's dtype
        shift = beta - mean * scale
        y = np.empty_like(x)
        knorm.channel_affine(knorm.as3(x, ax), scale.astype(dt), shift.astype(dt),
                             knorm.as3(y, ax))
    else:
        y = (x - mean.reshape(bs)) * scale.reshape(bs) + beta.reshape(bs)
    return (y.astype(dt, copy=False), np.asarray(mean, dt), np.asarray(invstd, dt))


def _bn_bwd(a, xs):
    g, x, gamma, mean, invstd = xs
    out = _dnn.bn_bwd(a, g, x, gamma, mean, invstd, _batch_stats(a))
    if out is not None:
        return out
    g, x = to_plain(g), to_plain(x)
    red, bs = _layout(a, x)
    ax = norm_axis(a.axis, x.ndim, "BatchNorm")
    gam = np.ones_like(gamma) if a.fix_gamma else gamma
    dt = x.dtype
    if _fast(x) and g.dtype == dt:
        x, g = np.ascontiguousarray(x), np.ascontiguousarray(g)
        x3, g3 = knorm.as3(x, ax), knorm.as3(g, ax)
        mu = mean.astype(np.float64)
        inv = invstd.astype(np.float64)
        dbeta = np.empty(x.shape[ax])
        sgx = np.empty(x.shape[ax])
        knorm.grad_sums(g3, x3, mu, dbeta, sgx)
        dgamma = sgx * inv
        k1 = gam.astype(np.float64) * inv
        if _batch_stats(a):
            m = x.size // x.shape[ax]
            k2, k3 = -k1 * inv * dgamma / m, -k1 * dbeta / m
        else:
            k2 = k3 = np.zeros_like(k1)
        dx = np.empty_like(x)
        knorm.grad_dx(g3, x3, mu, k1.astype(dt), k2.astype(dt), k3.astype(dt),
                      knorm.as3(dx, ax))
    else:
        xhat = (x - mean.reshape(bs)) * invstd.reshape(bs)
        dbeta = g.sum(axis=red)
        dgamma = (g * xhat).sum(axis=red)
        if _batch_stats(a):
            m = x.size // x.shape[ax]
            dx = (gam * invstd).reshape(bs) * (g - dbeta.reshape(bs) / m
                                               - xhat * dgamma.reshape(bs) / m)
        else:
            dx = g * (gam * invstd).reshape(bs)
    if a.fix_gamma:
        dgamma = np.zeros_like(gamma)
    return (dx.astype(dt, copy=False), dgamma.astype(gamma.dtype, copy=False),
            dbeta.astype(gamma.dtype, copy=False))


def bn_fwd_var(a, xs):
    """BatchNorm's forward whose third output is the variance (BatchNorm_v1 and
    SyncBatchNorm report it so), not the inverse std."""
    y, mean, invstd = _bn_fwd(a, xs)
    var = 1.0 / np.square(invstd.astype(np.float64)) - a.eps
    return y, mean, var.astype(invstd.dtype)


def bn_bwd_var(a, xs):
    """Gradient of :func:`bn_fwd_var`: inputs (ograd, data, gamma, mean, var)."""
    g, x, gamma, mean, var = xs
    invstd = (1.0 / np.sqrt(var.astype(np.float64) + a.eps)).astype(var.dtype)
    return _bn_bwd(a, (g, x, gamma, mean, invstd))


def _bn_grad(node, og):
    ins = [og[0], node.inputs[0], node.inputs[1], (node, 1), (node, 2)]
    return multi_bw("_backward_BatchNorm", ins, node, "backward", 3, **kept(node)) + [None, None]


# inputs (ograd, data, gamma, mean, invstd): gradients of data, gamma and beta (gamma's shape)
_bn_bwd_shape = rules.grads_like_inputs(1, sources=(0, 1, 1))


def _bn_check_fallback(attrs, in_stypes):
    """MXNet refuses sparse inputs with fix_gamma (its storage inference fails)."""
    if attrs.fix_gamma:
        raise MXNetError("fix_gamma=True is not supported for sparse ndarrays. Tracked at "
                         "#11647")


# the inputs, auxiliary states and outputs every batch-norm record declares (MXNet's layout)
BN_LAYOUT = dict(
    inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
    aux=("moving_mean", "moving_var"), mutates=(3, 4), needs_is_train=True,
    num_outputs=3, num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
    output_names=("output", "mean", "var"),
    input_init=(("moving_mean", '["zero", {}]'), ("moving_var", '["one", {}]')))


register(OpDef(
    "BatchNorm", params=_BN,
    **BN_LAYOUT,
    dispatch=(Dispatch((DNS, DNS, DNS, DNS, DNS), (DNS,), _bn_fwd, blocked=True),),
    fuses_post_ops=True, affine_fold=lambda a: a.axis == 1,
    check_fallback=_bn_check_fallback,
    infer_shape=bn_shape, infer_type=rules.same_type, gradient=_bn_grad,
    doc="""Batch normalization over all axes but ``axis``.

    Training (``is_train=True`` and not use_global_stats): normalise with the batch mean and
    (biased) variance and update the auxiliary states in place:
    ``moving = moving * momentum + batch * (1 - momentum)``. Otherwise use the moving
    statistics. (MXNet 1.9 applies the same update during the backward pass instead, so
    there a training forward without backward leaves the statistics unchanged; here the
    training forward updates them, as the fused SBNet blocks do.)
    ``fix_gamma=True`` uses gamma = 1 and gives gamma a zero gradient. With
    ``output_mean_var`` the outputs are (out, mean, inverse std) as in MXNet.

    Parameters
    ----------
    data, gamma, beta : Symbol or NDArray (gamma/beta shaped (channels,))
    moving_mean, moving_var : auxiliary states, shaped (channels,)
    eps : float, default 1e-3
    momentum : float, default 0.9
    fix_gamma : bool, default True
    use_global_stats : bool, default False
    output_mean_var : bool, default False
    axis : int, default 1

    Examples
    --------
    >>> import sparsym as mx
    >>> bn = mx.sym.BatchNorm(mx.sym.var('x'), name='bn')
    >>> bn.list_arguments(), bn.list_auxiliary_states()
    (['x', 'bn_gamma', 'bn_beta'], ['bn_moving_mean', 'bn_moving_var'])
    """))
register(OpDef(
    "_backward_BatchNorm", params=_BN, inputs=("ograd", "data", "gamma", "mean", "invstd"),
    num_outputs=3, needs_is_train=True,
    dispatch=(Dispatch((DNS, DNS, DNS, DNS, DNS), (DNS,), _bn_bwd, blocked=True),),
    infer_shape=_bn_bwd_shape, infer_type=rules.same_type))
