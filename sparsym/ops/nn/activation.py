"""Activation, LeakyReLU, softmax / log_softmax / softmin and Dropout."""
from __future__ import annotations

import math

import numpy as np

from ... import _rng
from ...base import DTypeError, dtype_of
from ...kernels import elementwise as kelem
from ...kernels import onednn as konednn
from ...kernels import softmax as ksoftmax
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import DNS, Checked, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from . import _onednn_layers as _dnn

# ----------------------------------------------------------------------------- Activation
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softrelu(x):
    # log(1 + exp(x)) without overflow
    return np.logaddexp(0, x)


_ACT = {
    "relu": (lambda x: np.maximum(x, 0), lambda x, y: (x > 0).astype(x.dtype)),
    "sigmoid": (_sigmoid, lambda x, y: y * (1 - y)),
    "tanh": (np.tanh, lambda x, y: 1 - y * y),
    "softrelu": (_softrelu, lambda x, y: _sigmoid(x)),
    "softsign": (lambda x: x / (1 + np.abs(x)), lambda x, y: 1 / (1 + np.abs(x)) ** 2),
}


def _cast(fn):
    def k(x, *a):
        with np.errstate(over="ignore"):
            return np.asarray(fn(x, *a)).astype(x.dtype, copy=False)
    return k


_ACT_P = Params(act_type=Field("str", choices=tuple(_ACT),
                               doc="relu, sigmoid, tanh, softrelu or softsign"))


def _act_fwd(a, xs):
    if a.act_type == "relu":
        md, xs = konednn.one_layout(xs)  # a oneDNN-laid input inside a plan: relu(0) = 0
        if md is not None:               # keeps the padding, so the buffer is the tensor
            return (konednn.Tensor(md, np.maximum(xs[0].values(), 0).view(np.uint8)),)
        # cannot overflow: no errstate scope (it costs as much as the op on a small batch)
        return (np.maximum(xs[0], 0),)
    xs = [konednn.to_plain(x) for x in xs]
    return (_cast(_ACT[a.act_type][0])(xs[0]),)


def _act_bwd(a, xs):
    g, x = xs
    if a.act_type == "relu":
        md, (g, x) = konednn.one_layout(xs)
        if md is not None:
            gv = g.values()
            return (konednn.Tensor(md, np.multiply(gv, x.values() > 0, dtype=gv.dtype)
                               .view(np.uint8)),)
        g, x = konednn.to_plain(g), konednn.to_plain(x)
        # g * (x > 0) as MXNet computes it (a NaN or inf in g stays NaN where x <= 0);
        # no recomputed forward, and 2.5x faster than np.where on small batches
        return (np.multiply(g, x > 0, dtype=g.dtype),)
    g, x = konednn.to_plain(g), konednn.to_plain(x)
    fwd, deriv = _ACT[a.act_type]
    # only sigmoid's and tanh's derivatives read the output: the others skip recomputing it
    y = _cast(fwd)(x) if a.act_type in ("sigmoid", "tanh") else None
    with np.errstate(over="ignore"):
        return ((g * deriv(x, y)).astype(g.dtype, copy=False),)


# activations a producer may apply as a post-op (passes/fuse.py; oneDNN has them all)
POST_OPS = {"relu": _ACT["relu"][0], "sigmoid": _cast(_ACT["sigmoid"][0]),
            "tanh": _cast(_ACT["tanh"][0])}


register(OpDef(
    "Activation", params=_ACT_P, dispatch=(Dispatch((DNS,), (DNS,), _act_fwd, blocked=True),),
    post_op=lambda a: (a.act_type,) if a.act_type in POST_OPS else None,
    monitor_input_names=("input0",),
    infer_type=rules.floating_input(rules.same_type),
    gradient=lambda node, og: [bw("_backward_Activation", [og[0], node.inputs[0]], node,
                                  "backward", **kept(node))],
    doc="""Elementwise activation: relu, sigmoid, tanh, softrelu (log(1+exp(x))) or softsign.

    Parameters
    ----------
    data : Symbol or NDArray
    act_type : {'relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'}, required

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.Activation(mx.nd.array([-1., 2.]), act_type='relu').asnumpy().tolist()
    [0.0, 2.0]
    """))
register(OpDef("_backward_Activation", params=_ACT_P, inputs=("ograd", "data"),
               dispatch=(Dispatch((DNS, DNS), (DNS,), _act_bwd, blocked=True),)))


# ----------------------------------------------------------------------------- LeakyReLU
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _lrelu_check(op, a):
    require(a.lower_bound <= a.upper_bound, op,
            f"lower_bound {a.lower_bound} must not exceed upper_bound {a.upper_bound}")


_LRELU = Checked(
    _lrelu_check,
    act_type=Field("str", "leaky", choices=("elu", "gelu", "leaky", "prelu", "rrelu", "selu")),
    slope=Field("float", 0.25, doc="slope of the negative part (leaky, elu)"),
    lower_bound=Field("float", 0.125, doc="rrelu: lower bound of the random slope"),
    upper_bound=Field("float", 0.334, doc="rrelu: upper bound of the random slope"))


def _lrelu_inputs(a):
    return ("data", "gamma") if a.act_type == "prelu" else ("data",)


def lrelu_shape(attrs, ins, outs):
    ins, outs = rules.first_input_shape(attrs, ins, outs)
    if attrs.act_type == "prelu" and ins[0] is not None:
        if ins[1] is None:  # MXNet: one slope per channel (axis 1) unless gamma is given
            rules.set_shape(ins, 1, (ins[0][1],) if len(ins[0]) >= 2 else (1,))
        elif rules.known(ins[0]) and rules.known(ins[1]):
            _gamma_shape(ins[1], ins[0])
    return ins, outs


def _gamma_shape(gshape, dshape):
    """MXNet's prelu broadcast of gamma onto data: gamma's axes align from the right with
    data's axes 0 and 1 (a dim equal to data's, or 1); every other axis of data gets 1."""
    out, s = [1] * len(dshape), len(gshape) - 1
    for i in range(len(dshape) - 1, -1, -1):
        if s >= 0 and i <= 1 and gshape[s] in (dshape[i], 1):
            out[i] = gshape[s]
            s -= 1
    if s != -1:
        from ...base import ShapeError
        raise ShapeError(f"LeakyReLU(prelu): cannot broadcast gamma {tuple(gshape)} to data "
                         f"{tuple(dshape)}")
    return tuple(out)


def _gamma_b(x, gamma):
    """PReLU gamma broadcast onto x (see _gamma_shape)."""
    return gamma.reshape(_gamma_shape(gamma.shape, x.shape))


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_d(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _leaky(x, slope):
    """x > 0 ? x : slope * x in x's dtype (for 0 < slope <= 1, max(x, slope * x): two
    passes, where np.where takes a mask and three)."""
    y = x * x.dtype.type(slope) if x.dtype.kind == "f" else slope * x
    if 0 < slope <= 1:
        return np.maximum(x, y, out=y if y.dtype == x.dtype else None)
    np.copyto(y, x, where=x > 0)
    return y


def _lrelu_fwd(a, xs):
    x, t = xs[0], a.act_type
    with np.errstate(over="ignore"):
        if t == "leaky":
            y = _leaky(x, a.slope)
        elif t == "elu":
            y = np.where(x > 0, x, a.slope * np.expm1(np.minimum(x, 0)))
        elif t == "selu":
            y = _SELU_LAMBDA * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0)))
        elif t == "gelu":
            y = _gelu(x)
        elif t == "prelu":
            y = np.where(x > 0, x, _gamma_b(x, xs[1]) * x)
        else:  # rrelu: random slope per element in training, the mean slope otherwise
            if a.get("__is_train__"):
                s = _rng.rng().uniform(a.lower_bound, a.upper_bound, size=x.shape)
            else:
                s = (a.lower_bound + a.upper_bound) / 2
            y = np.where(x > 0, x, s * x)
    return (np.asarray(y).astype(x.dtype, copy=False),)


def _lrelu_bwd(a, xs):
    g, x, y = xs[0], xs[1], xs[2]
    t = a.act_type
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if t == "leaky":  # x > 0 ? g : slope * g, in g's dtype
            return (kelem.positive_or_scaled(x, g, a.slope),)
        elif t == "elu":
            d = np.where(x > 0, 1.0, a.slope * np.exp(np.minimum(x, 0)))
        elif t == "selu":
            d = _SELU_LAMBDA * np.where(x > 0, 1.0, _SELU_ALPHA * np.exp(np.minimum(x, 0)))
        elif t == "gelu":
            d = _gelu_d(x)
        elif t == "prelu":
            d = np.where(x > 0, 1.0, _gamma_b(x, xs[3]))
        else:  # rrelu: the slope used in the forward is y / x on the negative part
            mean = (a.lower_bound + a.upper_bound) / 2
            d = np.where(x > 0, 1.0, np.where(x != 0, y / np.where(x != 0, x, 1), mean))
    dx = (g * d).astype(g.dtype, copy=False)
    if t != "prelu":
        return (dx,)
    gam = xs[3]
    contrib = np.where(x > 0, 0.0, x) * g
    gb = _gamma_shape(gam.shape, x.shape)
    dg = contrib.sum(axis=tuple(i for i, n in enumerate(gb) if n == 1 and x.shape[i] != 1))
    return dx, dg.astype(gam.dtype, copy=False).reshape(gam.shape)


def _lrelu_grad(node, og):
    ins = [og[0], node.inputs[0], (node, 0)] + list(node.inputs[1:])
    return multi_bw("_backward_LeakyReLU", ins, node, "backward", len(node.inputs),
                    **kept(node))


# inputs (ograd, data, out[, gamma]): gradients of data and (prelu) gamma
_lrelu_bwd_shape = rules.grads_like_inputs(1, sources=(0, 2))


register(OpDef(
    "LeakyReLU", params=_LRELU, inputs=_lrelu_inputs, dispatch=(
        Dispatch((DNS,), (DNS,), _lrelu_fwd), Dispatch((DNS, DNS), (DNS,), _lrelu_fwd)),
    infer_shape=lrelu_shape, infer_type=rules.same_type, gradient=_lrelu_grad,
    needs_is_train=True, input_init=(("gamma", '["Constant", {"value": 0.25}]'),),
    doc="""Leaky rectified linear units and relatives.

    act_type: 'leaky' (x or slope*x), 'elu' (slope*(exp(x)-1) for x<0), 'selu', 'gelu'
    (x*Phi(x), erf form), 'prelu' (learned gamma per channel, axis 1), 'rrelu' (random slope
    in [lower_bound, upper_bound] in training, their mean at inference).

    Parameters
    ----------
    data : Symbol or NDArray
    gamma : Symbol or NDArray (prelu only; shape (channels,))
    act_type : str, default 'leaky'
    slope : float, default 0.25
    lower_bound, upper_bound : float, default 0.125, 0.334
    """))
register(OpDef(
    "_backward_LeakyReLU", params=_LRELU,
    inputs=lambda a: ("ograd", "data", "out") + (("gamma",) if a.act_type == "prelu" else ()),
    num_outputs=lambda a: 2 if a.act_type == "prelu" else 1,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _lrelu_bwd),
              Dispatch((DNS, DNS, DNS, DNS), (DNS,), _lrelu_bwd)),
    infer_shape=_lrelu_bwd_shape, infer_type=rules.same_type))


# ----------------------------------------------------------------------------- softmax family
def _sm_check(op, a):
    require(a.temperature is None or a.temperature != 0, op, "temperature must be nonzero")


_SM = Checked(
    _sm_check,
    axis=Field("int", -1, doc="axis of the softmax"),
    temperature=Field("float_or_none", None, doc="divide the input by this (default 1)"),
    dtype=Field("dtype", None, doc="output dtype (default: the input's)"),
    use_length=Field("bool", False, doc="take a length input masking positions >= length"))


def _sm_inputs(a):
    return ("data", "length") if a.use_length else ("data",)


def sm_shape(attrs, ins, outs):
    if ins[0] is None and outs[0] is not None:
        rules.set_shape(ins, 0, outs[0])
    if ins[0] is not None:
        rules.set_shape(outs, 0, ins[0], "output")
        if attrs.use_length:
            ax = norm_axis(attrs.axis, len(ins[0]), "softmax")
            rules.set_shape(ins, 1, tuple(d for i, d in enumerate(ins[0]) if i != ax))
    return ins, outs


def sm_type(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_type(outs, 0, dtype_of(attrs.dtype) if attrs.dtype else ins[0], "output")
        if attrs.use_length and ins[1] is None:
            ins[1] = np.dtype(np.int32)
        # a float length binds, as in MXNet, and is refused when the op runs (_mask)
    return ins, outs


def _mask(a, x, xs):
    """Boolean mask of valid positions (use_length), or None."""
    if not a.use_length:
        return None
    ax = norm_axis(a.axis, x.ndim, "softmax")
    if np.asarray(xs[1]).dtype.kind not in "iu":
        # MXNet's text; 1.7 truncated float lengths silently
        raise DTypeError("softmax: This operation only support integer types, not "
                         f"{np.asarray(xs[1]).dtype} (the length input)")
    length = np.expand_dims(np.asarray(xs[1]).astype(np.int64), ax)
    shape = [1] * x.ndim
    shape[ax] = x.shape[ax]
    return np.arange(x.shape[ax]).reshape(shape) < length


_PLAIN_SM = (np.dtype(np.float32), np.dtype(np.float64))


def _sm_plain(x, ax, log):
    """softmax / log_softmax of float32/64 ``x`` whose maxima along ``ax`` are finite, or
    None: exp never overflows and the sums are >= 1, so no errstate scope is needed (on a
    loss's small batch the scope cost as much as the math)."""
    zmax = x.max(axis=ax, keepdims=True)
    if not np.isfinite(zmax).all():
        return None
    z = x - zmax
    if log:
        z -= np.log(np.exp(z).sum(axis=ax, keepdims=True))
    else:
        np.exp(z, out=z)
        z /= z.sum(axis=ax, keepdims=True)
    return z


def _sm_core(a, xs, log, neg=False):
    x = xs[0].astype(np.float64) if xs[0].dtype == np.float16 else xs[0]
    ax = norm_axis(a.axis, x.ndim, "softmax")
    if not neg and not a.use_length and a.temperature in (None, 1.0) and x.size and \
            x.dtype in _PLAIN_SM:
        z = _sm_plain(x, ax, log)
        if z is not None:
            return z
    t = 1.0 if a.temperature is None else a.temperature
    z = (-x if neg else x) / t if neg or t != 1.0 else x
    m = _mask(a, x, xs)
    if m is not None:
        z = np.where(m, z, -np.inf)
    zmax = np.max(z, axis=ax, keepdims=True)
    zmax = np.where(np.isfinite(zmax), zmax, 0)
    z = z - zmax  # a new array: the passes below work in place
    with np.errstate(divide="ignore", invalid="ignore"):
        if log:
            z -= np.log(np.exp(z).sum(axis=ax, keepdims=True))
        else:
            np.exp(z, out=z)
            z /= z.sum(axis=ax, keepdims=True)
    if m is not None:
        z = np.where(m, z, 0)
    return z


def _out_dtype(a, x):
    return dtype_of(a.dtype) if a.dtype else x.dtype


def _sm_fwd(kind):
    def k(a, xs):
        y = _dnn.softmax_fwd(a, xs[0], kind)
        if y is None:
            y = _sm_core(a, xs, kind == "log_softmax", kind == "softmin")
        return (y.astype(_out_dtype(a, xs[0]), copy=False),)
    return k


def _sm_bwd(kind):
    def k(a, xs):
        g, y = xs[0], xs[1]
        if kind != "softmin" and not a.use_length and a.temperature in (None, 1.0) \
                and g.dtype == y.dtype == xs[-1].dtype and y.dtype in _PLAIN_SM:
            return (ksoftmax.softmax_grad(g, y, norm_axis(a.axis, y.ndim, kind),
                                          kind == "log_softmax"),)
        # float32 (or float64) throughout, the row sums accumulated in float64
        wd = np.result_type(xs[0].dtype, xs[1].dtype, np.float32)
        g, y = xs[0].astype(wd, copy=False), xs[1].astype(wd, copy=False)
        ax = norm_axis(a.axis, y.ndim, kind)
        t = 1.0 if a.temperature is None else a.temperature
        if kind == "log_softmax":
            dx = g - np.exp(y) * g.sum(axis=ax, keepdims=True, dtype=np.float64).astype(wd)
        else:
            dx = g - (g * y).sum(axis=ax, keepdims=True, dtype=np.float64).astype(wd)
            dx *= y
            if kind == "softmin":
                dx = -dx
        if t != 1.0:
            dx /= wd.type(t)
        if a.use_length:
            dx = np.where(_mask(a, y, [None, xs[2]]), dx, 0)
        out = (dx.astype(xs[2 if not a.use_length else 3].dtype, copy=False),)
        return out + ((np.zeros(xs[2].shape, xs[2].dtype),) if a.use_length else ())
    return k


def _sm_grad(kind):
    def grad(node, og):
        ins = [og[0], (node, 0)] + list(node.inputs[1:]) + [node.inputs[0]]
        return multi_bw("_backward_" + kind, ins, node, "backward", len(node.inputs),
                        **kept(node))
    return grad


def _sm_bwd_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, ins[1], "output")
    if attrs.use_length:
        rules.set_shape(outs, 1, ins[2], "output")
    return ins, outs


def _sm_bwd_type(attrs, ins, outs):
    rules.set_type(outs, 0, ins[-1], "output")
    if attrs.use_length:
        rules.set_type(outs, 1, ins[2], "output")
    return ins, outs


_SM_DOCS = {
    "softmax": "exp(x/T) / sum(exp(x/T), axis)",
    "log_softmax": "log(softmax(x/T))",
    "softmin": "softmax(-x/T)",
}
for _k, _f in _SM_DOCS.items():
    register(OpDef(
        _k, params=_SM, inputs=_sm_inputs,
        dispatch=(Dispatch((DNS,), (DNS,), _sm_fwd(_k)), Dispatch((DNS, DNS), (DNS,), _sm_fwd(_k))),
        infer_shape=sm_shape, infer_type=rules.floating_input(sm_type), gradient=_sm_grad(_k),
        doc=f"""Compute ``{_f}`` along ``axis``.

    Parameters
    ----------
    data : Symbol or NDArray
    length : Symbol or NDArray (only with use_length=True; data's shape without ``axis``)
    axis : int, default -1
    temperature : float or None, default None (1)
    dtype : dtype or None, default None (the input's)
    use_length : bool, default False (positions >= length along axis output 0)

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.{_k}(mx.nd.array([[0., 0.]])).shape
    (1, 2)
    """))
    register(OpDef(
        "_backward_" + _k, params=_SM,
        inputs=lambda a: ("ograd", "out") + (("length",) if a.use_length else ()) + ("data",),
        num_outputs=lambda a: 2 if a.use_length else 1,
        dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _sm_bwd(_k)),
                  Dispatch((DNS, DNS, DNS, DNS), (DNS,), _sm_bwd(_k))),
        infer_shape=_sm_bwd_shape, infer_type=_sm_bwd_type))


# ----------------------------------------------------------------------------- Dropout
def _do_check(op, a):
    require(0 <= a.p <= 1, op, f"value {a.p} for Parameter p exceed bound [0,1]")


_DO = Checked(_do_check,
              p=Field("float", 0.5, doc="fraction of the input that gets dropped"),
              mode=Field("str", "training", choices=("training", "always")),
              axes=Field("shape", (), doc="axes sharing one mask (variational dropout)"),
              cudnn_off=Field("bool", False, doc="ignored (no cuDNN)"))


def _do_fwd(a, xs):
    x = xs[0]
    active = a.mode == "always" or a.get("__is_train__", False)
    if not active or a.p == 0:
        return x.copy(), np.ones_like(x)
    mshape = list(x.shape)
    for ax in a.axes:
        mshape[norm_axis(ax, x.ndim, "Dropout")] = 1
    keep = _rng.rng().random(tuple(mshape)) >= a.p
    with np.errstate(divide="ignore", invalid="ignore"):  # MXNet: p=1 gives NaN (0/0)
        mask = (keep / (1.0 - a.p)).astype(x.dtype)
    return (x * mask).astype(x.dtype, copy=False), np.broadcast_to(mask, x.shape).copy()


def _do_shape(attrs, ins, outs):
    s = ins[0] if ins[0] is not None else outs[0]
    if s is not None:
        rules.set_shape(ins, 0, s)
        rules.set_shape(outs, 0, s, "output")
        rules.set_shape(outs, 1, s, "output")
    return ins, outs


register(OpDef(
    "Dropout", params=_DO, num_outputs=2, num_visible_outputs=1,
    output_names=("output", "mask"), dispatch=(Dispatch((DNS,), (DNS,), _do_fwd),),
    infer_shape=_do_shape, infer_type=rules.same_type, needs_is_train=True,
    gradient=lambda node, og: [bw("elemwise_mul", [og[0], (node, 1)], node, "backward")],
    doc="""Zero elements with probability ``p`` and scale the rest by 1/(1-p) during training.

    In inference (``is_train=False``) the input passes unchanged unless ``mode='always'``.
    ``axes`` share one mask along the given axes. The scaled mask is a hidden second output
    the backward pass multiplies by.

    Parameters
    ----------
    data : Symbol or NDArray
    p : float in [0, 1], default 0.5 (p=1 gives NaN in training, as MXNet)
    mode : {'training', 'always'}, default 'training'
    axes : tuple of int, default ()
    cudnn_off : bool, ignored
    """))
