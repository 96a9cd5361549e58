"""SoftmaxActivation, SVMOutput, softmax_cross_entropy and IdentityAttachKLSparseReg."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


def _softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=axis, keepdims=True)
    return z


def _one(bname, inputs, node):
    return multi_bw(bname, inputs, node, "backward", 1, **kept(node))[0]


# ----------------------------------------------------------------------------- SoftmaxActivation
_SA = Params(mode=Field("str", "instance", choices=("channel", "instance"),
                        doc="instance: softmax over the last axis; channel: axis 1"))


def _sa_view(a, x):
    """(view, axis) the softmax runs on."""
    # MXNet 1.9.1's instance mode normalises the last axis only (not all non-batch axes)
    return x, (1 if a.mode == "channel" else -1)


def _sa_fwd(a, xs):
    x = xs[0]
    if a.mode == "channel" and x.ndim < 2:
        from ...base import ShapeError
        raise ShapeError(f"operator SoftmaxActivation: channel mode needs data with at least "
                         f"2 dims, got shape {x.shape}")
    v, ax = _sa_view(a, x)
    return (_softmax(v.astype(np.float64 if x.dtype == np.float64 else np.float32), ax)
            .reshape(x.shape).astype(x.dtype, copy=False),)


def _sa_bwd(a, xs):
    g, y = xs
    gv, ax = _sa_view(a, g)
    yv = y.reshape(gv.shape)
    dx = yv * (gv - (gv * yv).sum(axis=ax, keepdims=True))
    return (dx.reshape(y.shape).astype(y.dtype, copy=False),)


register(OpDef(
    "SoftmaxActivation", params=_SA, dispatch=(Dispatch((DNS,), (DNS,), _sa_fwd),),
    monitor_input_names=("input0",),
    infer_shape=rules.same_shape, infer_type=rules.floating_input(rules.same_type),
    gradient=lambda node, og: [_one("_backward_SoftmaxActivation", [og[0], (node, 0)], node)],
    doc="""Softmax over the last axis (``mode='instance'``, as MXNet 1.9.1 computes it) or axis 1
    (``mode='channel'``); MXNet's deprecated form of ``softmax``.

    Parameters
    ----------
    data : Symbol or NDArray
    mode : {'instance', 'channel'}, default 'instance'
    """))
register(OpDef(
    "_backward_SoftmaxActivation", params=_SA, inputs=("ograd", "out"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _sa_bwd),),
    infer_shape=rules.same_shape, infer_type=rules.same_type))


# ----------------------------------------------------------------------------- SVMOutput
_SVM = Params(margin=Field("float", 1.0, doc="the margin"),
              regularization_coefficient=Field("float", 1.0, doc="scale of the gradient"),
              use_linear=Field("bool", False, doc="L1-SVM (hinge) instead of L2-SVM"))


def svm_shape(attrs, ins, outs):
    if ins[0] is None and outs[0] is not None:
        rules.set_shape(ins, 0, outs[0])
    x = ins[0]
    if x is not None:
        rules.set_shape(ins, 1, tuple(x[:-1]))
        rules.set_shape(outs, 0, x, "output")
    return ins, outs


def _svm_bwd(a, xs):
    out, label = xs[0], st.todense(xs[1])
    k = out.shape[-1]
    o2 = out.reshape(-1, k)
    lab = label.reshape(-1).astype(np.int64)
    sign = -np.ones_like(o2)
    sign[np.arange(o2.shape[0]), np.clip(lab, 0, k - 1)] = 1.0
    slack = o2.dtype.type(a.margin) - sign * o2  # in the data's dtype, as MXNet
    if a.use_linear:
        g = -sign * (slack > 0)
    else:
        g = -2.0 * sign * np.maximum(slack, 0)
    g *= o2.dtype.type(a.regularization_coefficient)
    return (g.reshape(out.shape).astype(out.dtype),)


register(OpDef(
    "SVMOutput", params=_SVM, inputs=("data", "label"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (xs[0].copy(),)),),
    infer_shape=svm_shape, infer_type=rules.first_input_type,
    gradient=lambda node, og: [_one("_backward_SVMOutput", [(node, 0), node.inputs[1]], node),
                               None],
    doc="""Support vector machine head: identity forward; backward gives the gradient of
    the L2-SVM (or, with ``use_linear``, the L1-SVM) loss for the class label of each row
    (classes along the last axis).

    Parameters
    ----------
    data : Symbol (..., num_classes)
    label : Symbol (...), class indices
    margin : float, default 1
    regularization_coefficient : float, default 1
    use_linear : bool, default False
    """))
register(OpDef(
    "_backward_SVMOutput", params=_SVM, inputs=("out", "label"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _svm_bwd),),
    infer_shape=rules.first_input_shape, infer_type=rules.first_input_type))


# ------------------------------------------------------------------ softmax_cross_entropy
def sce_shape(attrs, ins, outs):
    x = ins[0]
    if x is not None:
        if len(x) != 2:
            raise rules.Conflict("shape", 0, "input", "2-D data (batch, classes)", x)
        rules.set_shape(ins, 1, (x[0],))
    rules.set_shape(outs, 0, (1,), "output")
    return ins, outs


def _sce_parts(x, label):
    xd = x.astype(np.float64)
    p = _softmax(xd, 1)
    lab = st.todense(label).reshape(-1).astype(np.int64)
    if lab.size and (lab.min() < 0 or lab.max() >= x.shape[1]):
        from ...base import MXNetError
        raise MXNetError(f"operator softmax_cross_entropy: labels must lie in "
                         f"[0, {x.shape[1]}), got values in [{lab.min()}, {lab.max()}]")
    return p, lab


def _sce_fwd(a, xs):
    x = xs[0]
    p, lab = _sce_parts(x, xs[1])
    with np.errstate(divide="ignore"):
        loss = -np.log(p[np.arange(x.shape[0]), lab]).sum()
    return (np.array([loss], dtype=x.dtype),)


def _sce_bwd(a, xs):
    g, x, label = xs
    p, lab = _sce_parts(x, label)
    p[np.arange(x.shape[0]), lab] -= 1.0
    return (p * g.reshape(-1)[0]).astype(x.dtype), np.zeros(label.shape, label.dtype)


register(OpDef(
    "softmax_cross_entropy", inputs=("data", "label"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _sce_fwd),),
    infer_shape=sce_shape, infer_type=rules.first_input_type,
    gradient=lambda node, og: multi_bw("_backward_softmax_cross_entropy",
                                       [og[0], node.inputs[0], node.inputs[1]], node,
                                       "backward", 2),
    doc="""Sum over the batch of the cross entropy of softmax(data) with integer labels.

    Parameters
    ----------
    data : Symbol or NDArray (batch, classes)
    label : Symbol or NDArray (batch,), class indices

    Returns
    -------
    A (1,)-shaped array.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.softmax_cross_entropy(mx.nd.zeros((2, 4)), mx.nd.array([0, 3])).asnumpy()
    array([2.7725887], dtype=float32)
    """))
register(OpDef(
    "_backward_softmax_cross_entropy", inputs=("ograd", "data", "label"), num_outputs=2,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _sce_bwd),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))


# ----------------------------------------------------------------------------- KL sparse reg
def _kl_check(op, a):
    require(0 < a.sparseness_target < 1, op,
            f"sparseness_target must lie in (0, 1), got {a.sparseness_target}")


_KL = Checked(_kl_check,
              sparseness_target=Field("float", 0.1, doc="the target mean activation"),
              penalty=Field("float", 0.001, doc="weight of the KL penalty"),
              momentum=Field("float", 0.9, doc="momentum of the moving mean activation"))


def kl_shape(attrs, ins, outs):
    ins2, outs = rules.same_shape(attrs, ins[:1], outs)
    ins[0] = ins2[0]
    if ins[0] is not None:
        if len(ins[0]) < 2:
            raise rules.Conflict("shape", 0, "input", "at least 2 dims (batch, units, ...)",
                                 ins[0])
        rules.set_shape(ins, 1, (ins[0][1],))
    return ins, outs


def _kl_fwd(a, xs):
    x, avg = xs
    if a.get("__is_train__", False):
        # MXNet: moving_avg = momentum * moving_avg + (1 - momentum) * mean over all axes
        # but 1; the backward reads the updated average
        red = tuple(i for i in range(x.ndim) if i != 1)
        avg *= a.momentum
        avg += ((1 - a.momentum) * x.astype(np.float64).mean(axis=red)).astype(avg.dtype)
    return (x.copy(),)


def _kl_bwd(a, xs):
    g, avg = xs
    rho = a.sparseness_target
    m = avg.astype(np.float64)
    with np.errstate(divide="ignore"):
        pen = a.penalty * (-rho / m + (1 - rho) / (1 - m))
    shape = [1] * g.ndim
    shape[1] = g.shape[1]
    return ((g + pen.reshape(shape)).astype(g.dtype),)


register(OpDef(
    "IdentityAttachKLSparseReg", params=_KL, inputs=("data", "moving_avg"),
    aux=("moving_avg",), mutates=(1,), needs_is_train=True,
    input_init=(("moving_avg", '["zero", {}]'),),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _kl_fwd),), infer_shape=kl_shape,
    infer_type=rules.same_type,
    gradient=lambda node, og: [_one("_backward_IdentityAttachKLSparseReg",
                                    [og[0], node.inputs[1]], node), None],
    doc="""Identity forward; in training the backward adds the gradient of a KL sparseness
    penalty, ``penalty * (-rho / m + (1 - rho) / (1 - m))``, where m is the moving mean
    activation per unit (axis 1), an auxiliary state updated in training.

    Parameters
    ----------
    data : Symbol (batch, units, ...), activations in (0, 1)
    sparseness_target : float, default 0.1
    penalty : float, default 0.001
    momentum : float, default 0.9
    """))


def _kl_bwd_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, ins[0], "output")
    return ins, outs


register(OpDef(
    "_backward_IdentityAttachKLSparseReg", params=_KL, inputs=("ograd", "moving_avg"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _kl_bwd),), infer_shape=_kl_bwd_shape,
    infer_type=rules.first_input_type))
