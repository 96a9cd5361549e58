"""LayerNorm, InstanceNorm, GroupNorm, L2Normalization and LRN (MXNet 1.9.1 semantics).

The three affine normalisations share one kernel pair: data are viewed so that the
statistics reduce over some axes and gamma/beta broadcast along one axis; the backward op
recomputes the statistics (cheaper than keeping them alive across the graph).
"""
from __future__ import annotations

import numpy as np

from ...kernels.normalization import affine_norm_bwd, affine_norm_fwd
from ...kernels.normalization import cdtype as _cdtype
from ...kernels.normalization import channel_window_sum as _channel_window_sum
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, norm_axis, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register
from . import _onednn_layers as _dnn


def _eps_check(op, a):
    require(a.eps >= 0, op, f"eps must be non-negative, got {a.eps}")


def _data_shape(ins, outs):
    """The data shape, taken from the output when only that is known."""
    if ins[0] is None and outs[0] is not None:
        rules.set_shape(ins, 0, outs[0])
    return ins[0]


# inputs (ograd, data, gamma, ...): gradients of data, gamma and beta (gamma's shape)
_affine_bwd_shape = rules.grads_like_inputs(1, sources=(0, 1, 1))


def _affine_grad(bname):
    def grad(node, og):
        ins = [og[0], node.inputs[0], node.inputs[1]]
        return multi_bw(bname, ins, node, "backward", 3, **kept(node))
    return grad


def _register_affine(name, params, shape_rule, layout, n_out, doc, out_names=("output",)):
    """Register ``name`` and ``_backward_<name>``; ``layout(attrs, x) -> (view, red, pax)``."""
    def fwd(a, xs):
        x, gamma, beta = xs
        v, red, pax = layout(a, x)
        out, mean, std = affine_norm_fwd(v, red, pax, gamma, beta, a.eps)
        res = (out.reshape(x.shape),)
        if n_out == 3:
            res += _stats_out(a, x, mean, std)
        return res

    def bwd(a, xs):
        g, x, gamma = xs
        v, red, pax = layout(a, x)
        dx, dgamma, dbeta = affine_norm_bwd(g.reshape(v.shape), v, red, pax, gamma, a.eps)
        return dx.reshape(x.shape), dgamma, dbeta

    _stats_out = STATS_OUT.get(name)
    register(OpDef(
        name, params=params, inputs=("data", "gamma", "beta"),
        num_outputs=n_out, output_names=out_names,
        num_visible_outputs=(lambda a: 3 if a.output_mean_var else 1) if n_out == 3 else None,
        dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), fwd),), infer_shape=shape_rule,
        infer_type=rules.same_type, gradient=_affine_grad(f"_backward_{name}"), doc=doc))
    register(OpDef(
        f"_backward_{name}", params=params, inputs=("ograd", "data", "gamma"), num_outputs=3,
        dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), bwd),), infer_shape=_affine_bwd_shape,
        infer_type=rules.same_type))


STATS_OUT = {
    # LayerNorm: mean and std keep the data's rank (the normalised axis has size 1)
    "LayerNorm": lambda a, x, mean, std: (mean, std),
    # GroupNorm: mean and std are (batch, num_groups)
    "GroupNorm": lambda a, x, mean, std: (mean.reshape(x.shape[0], a.num_groups),
                                          std.reshape(x.shape[0], a.num_groups)),
}


# ----------------------------------------------------------------------------- LayerNorm
_LN = Checked(_eps_check,
              axis=Field("int", -1, doc="the axis normalised over"),
              eps=Field("float", 1e-5, doc="added to the variance"),
              output_mean_var=Field("bool", False, doc="also output the mean and the std"))


def _ln_layout(a, x):
    ax = norm_axis(a.axis, x.ndim, "LayerNorm")
    return x, (ax,), ax


def ln_shape(attrs, ins, outs):
    x = _data_shape(ins, outs)
    if x is None:
        return ins, outs
    ax = norm_axis(attrs.axis, len(x), "LayerNorm")
    rules.set_shape(ins, 1, (x[ax],))
    rules.set_shape(ins, 2, (x[ax],))
    rules.set_shape(outs, 0, x, "output")
    stat = tuple(1 if i == ax else d for i, d in enumerate(x))
    rules.set_shape(outs, 1, stat, "output")
    rules.set_shape(outs, 2, stat, "output")
    return ins, outs


_register_affine("LayerNorm", _LN, ln_shape, _ln_layout, 3, out_names=("output", "mean", "std"),
                 doc="""Layer normalization over one axis: ``(x - mean) / sqrt(var + eps) * gamma
    + beta``, gamma and beta shaped (data.shape[axis],).

    With ``output_mean_var`` the outputs are (out, mean, std), mean and std shaped like
    data with ``axis`` of size 1.

    Parameters
    ----------
    data, gamma, beta : Symbol or NDArray
    axis : int, default -1
    eps : float, default 1e-5
    output_mean_var : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1., 2., 3.], [2., 2., 2.]])
    >>> mx.nd.LayerNorm(x, mx.nd.ones(3), mx.nd.zeros(3)).asnumpy().round(3)
    array([[-1.225,  0.   ,  1.225],
           [ 0.   ,  0.   ,  0.   ]], dtype=float32)
    """)


# ----------------------------------------------------------------------------- InstanceNorm
_IN = Checked(_eps_check, eps=Field("float", 1e-3, doc="added to the variance"))


def _in_layout(a, x):
    if x.ndim < 3:
        from ...base import ShapeError
        raise ShapeError(f"operator InstanceNorm: data must have at least 3 dims "
                         f"(batch, channel, spatial...), got shape {x.shape}")
    return x, tuple(range(2, x.ndim)), 1


def in_shape(attrs, ins, outs):
    x = _data_shape(ins, outs)
    if x is None:
        return ins, outs
    if len(x) < 3:
        raise rules.Conflict("shape", 0, "input", "at least 3 dims (N, C, spatial...)", x)
    rules.set_shape(ins, 1, (x[1],))
    rules.set_shape(ins, 2, (x[1],))
    rules.set_shape(outs, 0, x, "output")
    return ins, outs


_register_affine("InstanceNorm", _IN, in_shape, _in_layout, 1,
                 doc="""Instance normalization: each (sample, channel) plane is normalised over
    its spatial axes, then scaled by gamma and shifted by beta (both shaped (channels,)).

    Parameters
    ----------
    data : Symbol or NDArray, at least 3-D (N, C, spatial...)
    gamma, beta : Symbol or NDArray, shaped (C,)
    eps : float, default 1e-3
    """)


# ----------------------------------------------------------------------------- GroupNorm
def _gn_check(op, a):
    _eps_check(op, a)
    require(a.num_groups >= 1, op, f"num_groups must be positive, got {a.num_groups}")


_GN = Checked(_gn_check,
              num_groups=Field("int", 1, doc="number of channel groups"),
              eps=Field("float", 1e-5, doc="added to the variance"),
              output_mean_var=Field("bool", False, doc="also output the mean and the std"))


def _gn_layout(a, x):
    g = a.num_groups
    if x.ndim < 2 or x.shape[1] % g:
        from ...base import ShapeError
        raise ShapeError(f"operator GroupNorm: channels of data {x.shape} must be divisible "
                         f"by num_groups={g}")
    v = x.reshape((x.shape[0], g, x.shape[1] // g) + x.shape[2:])
    return v, tuple(range(2, v.ndim)), 1


def gn_shape(attrs, ins, outs):
    x = _data_shape(ins, outs)
    g = attrs.num_groups
    rules.set_shape(ins, 1, (g,))
    rules.set_shape(ins, 2, (g,))
    if x is None:
        return ins, outs
    if len(x) < 2 or (x[1] is not None and x[1] % g):
        raise rules.Conflict("shape", 0, "input", f"channels divisible by num_groups={g}", x)
    rules.set_shape(outs, 0, x, "output")
    rules.set_shape(outs, 1, (x[0], g), "output")
    rules.set_shape(outs, 2, (x[0], g), "output")
    return ins, outs


_register_affine("GroupNorm", _GN, gn_shape, _gn_layout, 3, out_names=("output", "mean", "std"),
                 doc="""Group normalization: the channels are split into ``num_groups`` groups,
    each (sample, group) normalised over its channels and spatial axes; gamma and beta are
    shaped (num_groups,) as in MXNet 1.9.1.

    Parameters
    ----------
    data : Symbol or NDArray (N, C, ...), C divisible by num_groups
    gamma, beta : Symbol or NDArray, shaped (num_groups,)
    num_groups : int, default 1
    eps : float, default 1e-5
    output_mean_var : bool, default False (outputs mean, std shaped (N, num_groups))
    """)


# ----------------------------------------------------------------------------- L2Normalization
_L2 = Checked(
    _eps_check,
    eps=Field("float", 1e-10, doc="added to the sum of squares"),
    mode=Field("str", "instance", choices=("channel", "instance", "spatial"),
               doc="instance: per sample; channel: across axis 1; spatial: per channel plane"))


def _l2_axes(a, ndim):
    if a.mode == "instance":
        if ndim < 2:
            return None
        return tuple(range(1, ndim))
    if ndim < 3:
        return None
    return (1,) if a.mode == "channel" else tuple(range(2, ndim))


def _l2_red(a, x):
    red = _l2_axes(a, x.ndim)
    if red is None:
        from ...base import ShapeError
        need = 2 if a.mode == "instance" else 3
        raise ShapeError(f"operator L2Normalization: At lease {need} dimensions required in "
                         f"{a.mode} mode, got shape {x.shape}")
    return red


def l2_shape(attrs, ins, outs):
    ins, outs = rules.same_shape(attrs, ins, outs)
    if ins[0] is not None and _l2_axes(attrs, len(ins[0])) is None:
        raise rules.Conflict("shape", 0, "input",
                             f"at least {2 if attrs.mode == 'instance' else 3} dims", ins[0])
    return ins, outs


def _l2_fwd(a, xs):
    x = xs[0]
    xc = x.astype(_cdtype(x), copy=False)
    norm = np.sqrt((xc * xc).sum(axis=_l2_red(a, x), keepdims=True) + a.eps)
    return ((xc / norm).astype(x.dtype, copy=False),)


def _l2_bwd(a, xs):
    g, x = xs
    dt = _cdtype(x)
    xc, gc = x.astype(dt, copy=False), g.astype(dt, copy=False)
    red = _l2_red(a, x)
    norm = np.sqrt((xc * xc).sum(axis=red, keepdims=True) + a.eps)
    dx = gc / norm - xc * (gc * xc).sum(axis=red, keepdims=True) / norm ** 3
    return (dx.astype(x.dtype, copy=False),)


def _one_bw(bname):
    def grad(node, og):
        return multi_bw(bname, [og[0], node.inputs[0]], node, "backward", 1, **kept(node))
    return grad


register(OpDef(
    "L2Normalization", params=_L2, dispatch=(Dispatch((DNS,), (DNS,), _l2_fwd),),
    infer_shape=l2_shape, infer_type=rules.same_type,
    gradient=_one_bw("_backward_L2Normalization"),
    doc="""Normalise to unit L2 norm: ``x / sqrt(sum(x**2) + eps)``, the sum over all axes
    but the batch (instance), over axis 1 (channel) or over the spatial axes (spatial).

    Parameters
    ----------
    data : Symbol or NDArray
    eps : float, default 1e-10
    mode : {'instance', 'channel', 'spatial'}, default 'instance'

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.L2Normalization(mx.nd.array([[3., 4.]])).asnumpy()
    array([[0.6, 0.8]], dtype=float32)
    """))
register(OpDef(
    "_backward_L2Normalization", params=_L2, inputs=("ograd", "data"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _l2_bwd),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.same_type))


# ----------------------------------------------------------------------------- LRN
def _lrn_check(op, a):
    require(a.nsize >= 1, op, f"nsize must be positive, got {a.nsize}")


_LRN = Checked(_lrn_check,
               alpha=Field("float", 1e-4, doc="scale of the sum of squares"),
               beta=Field("float", 0.75, doc="exponent"),
               knorm=Field("float", 2.0, doc="added to the scaled sum"),
               nsize=Field("int", doc="window width across channels"))


def _lrn_scale(a, xc):
    return a.knorm + a.alpha / a.nsize * _channel_window_sum(xc * xc, a.nsize)


def _lrn_fwd(a, xs):
    x = xs[0]
    y = _dnn.lrn_fwd(a, x)
    if y is not None:
        return (y,)
    xc = x.astype(np.float64 if x.dtype == np.float64 else np.float32, copy=False)
    return ((xc * _lrn_scale(a, xc) ** -a.beta).astype(x.dtype, copy=False),)


def _lrn_bwd(a, xs):
    g, x = xs
    dt = np.float64 if x.dtype == np.float64 else np.float32
    xc, gc = x.astype(dt, copy=False), g.astype(dt, copy=False)
    s = _lrn_scale(a, xc)
    # the window is symmetric, so its adjoint is the same window sum
    back = _channel_window_sum(gc * xc * s ** (-a.beta - 1), a.nsize)
    dx = gc * s ** -a.beta - 2.0 * a.alpha * a.beta / a.nsize * xc * back
    return (dx.astype(x.dtype, copy=False),)


def lrn_shape(attrs, ins, outs):
    ins, outs = rules.same_shape(attrs, ins, outs)
    if ins[0] is not None and len(ins[0]) != 4:
        raise rules.Conflict("shape", 0, "input", "4-D data (N, C, H, W)", ins[0])
    return ins, outs


register(OpDef(
    "LRN", params=_LRN, dispatch=(Dispatch((DNS,), (DNS,), _lrn_fwd),),
    infer_shape=lrn_shape, infer_type=rules.same_type, gradient=_one_bw("_backward_LRN"),
    doc="""Local response normalization across channels:
    ``x / (knorm + alpha / nsize * sum(x[c-h..c+h]**2)) ** beta``, h = (nsize - 1) // 2.

    Parameters
    ----------
    data : Symbol or NDArray, 4-D (N, C, H, W)
    alpha : float, default 1e-4
    beta : float, default 0.75
    knorm : float, default 2
    nsize : int, required
    """))
register(OpDef(
    "_backward_LRN", params=_LRN, inputs=("ograd", "data"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _lrn_bwd),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.same_type))
