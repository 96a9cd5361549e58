"""Loss heads: SoftmaxOutput, the regression outputs and MakeLoss (backward ignores ograd)."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...kernels._arrays import rows2
from ..core import rules
from ..core.grad import bw
from ..core.helpers import CSR, DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

# ----------------------------------------------------------------------------- SoftmaxOutput
_SOFTMAX = Params(
    grad_scale=Field("float", 1.0, doc="scale of the gradient"),
    ignore_label=Field("float", -1.0, doc="label value ignored when use_ignore"),
    multi_output=Field("bool", False, doc="softmax over axis 1 of (n, c, d1, ...)"),
    use_ignore=Field("bool", False, doc="zero the gradient of ignore_label positions"),
    preserve_shape=Field("bool", False, doc="softmax over the last axis, shape kept"),
    normalization=Field("str", "null", choices=("null", "batch", "valid")),
    out_grad=Field("bool", False, doc="multiply the gradient by the head gradient"),
    smooth_alpha=Field("float", 0.0, doc="label smoothing"))


def _softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=axis, keepdims=True)
    return z


def _softmax_layout(attrs, shape):
    """(axis, label shape) for a data shape under SoftmaxOutput's modes."""
    if attrs.preserve_shape:
        return len(shape) - 1, tuple(shape[:-1])
    if attrs.multi_output:
        return 1, (shape[0],) + tuple(shape[2:])
    return 1, (shape[0],)


def _softmax_fwd(a, xs):
    x = xs[0]
    if not a.preserve_shape and not a.multi_output and x.ndim != 2:
        return (_softmax(rows2(x, x.shape[0]), 1).reshape(x.shape),)
    axis, _ = _softmax_layout(a, x.shape)
    return (_softmax(x, axis),)


def _softmax_bwd(a, xs):
    p, label = xs[0], st.todense(xs[1])
    shape = p.shape
    if not a.preserve_shape and not a.multi_output and p.ndim != 2:
        p = rows2(p, shape[0])
    axis, lshape = _softmax_layout(a, p.shape)
    if label.size == p.size and label.size != int(np.prod(lshape, dtype=np.int64)):
        # a label with the data's shape holds target probabilities: grad = p - label
        grad = (p - label.reshape(p.shape)) * a.grad_scale
        if a.normalization == "batch":
            grad /= shape[0]
        return (grad.reshape(shape).astype(xs[0].dtype, copy=False),)
    label = label.reshape(lshape).astype(np.int64)
    k = p.shape[axis]
    grad = p.copy()
    valid = np.ones(lshape, dtype=bool)
    if a.use_ignore:
        valid = label != int(a.ignore_label)
    lab = np.clip(label, 0, k - 1)
    pm = np.moveaxis(grad, axis, -1)
    if a.smooth_alpha:
        pm -= a.smooth_alpha / (k - 1)
        np.put_along_axis(pm, lab[..., None], np.take_along_axis(pm, lab[..., None], -1)
                          - (1 - a.smooth_alpha) + a.smooth_alpha / (k - 1), axis=-1)
    else:
        np.put_along_axis(pm, lab[..., None], np.take_along_axis(pm, lab[..., None], -1) - 1,
                          axis=-1)
    if a.use_ignore:
        pm[~valid] = 0
    scale = a.grad_scale
    if a.normalization == "batch":
        scale /= shape[0]
    elif a.normalization == "valid":
        scale /= max(int(valid.sum()), 1)
    if a.multi_output and a.normalization != "valid":
        # MXNet (checked against 1.9.1): multi_output also divides by the spatial size
        scale /= max(int(np.prod(lshape[1:], dtype=np.int64)), 1)
    grad *= scale
    if a.out_grad and len(xs) > 2:
        grad *= xs[2].reshape(grad.shape)
    return (grad.reshape(shape).astype(xs[0].dtype, copy=False),)


def softmax_output_shape(attrs, ins, outs):
    data, label = ins[0], ins[1]
    if data is None and outs[0] is not None:
        data = outs[0]
        rules.set_shape(ins, 0, data)
    if rules.known(data):
        _, lshape = _softmax_layout(attrs, data)
        if label is not None and rules.known(label) and tuple(label) != lshape:
            # MXNet also accepts a label with the data's full shape (probabilities) or (n, 1)
            if not (tuple(label) == tuple(data) or int(np.prod(label)) == int(np.prod(lshape))):
                raise rules.Conflict("shape", 1, "input", lshape, label)
        else:
            rules.set_shape(ins, 1, lshape)
        rules.set_shape(outs, 0, data, "output")
    return ins, outs


def _loss_grad(bname, with_og=False):
    def grad(node, og):
        inputs = [(node, 0), node.inputs[1]] + ([og[0]] if with_og else [])
        return [bw(bname, inputs, node, "backward", **_kept(node)), None]
    return grad


def _kept(node):
    return {k: v for k, v in node.params.items()}


register(OpDef(
    "SoftmaxOutput", params=_SOFTMAX, inputs=("data", "label"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _softmax_fwd), ),
    infer_shape=softmax_output_shape, infer_type=rules.first_input_type,
    gradient=lambda node, og: _loss_grad("_backward_SoftmaxOutput",
                                         node.params.out_grad)(node, og),
    aliases=("Softmax",),
    doc="""Softmax with a cross-entropy gradient (a loss head: backward needs no head gradient).

    Parameters
    ----------
    data : Symbol
    label : Symbol
    grad_scale, ignore_label, multi_output, use_ignore, preserve_shape, normalization,
    out_grad, smooth_alpha : see MXNet 1.9's SoftmaxOutput.
    """))
register(OpDef("_backward_SoftmaxOutput", params=_SOFTMAX,
               inputs=lambda a: ("out", "label") + (("ograd",) if a.out_grad else ()),
               dispatch=(Dispatch((DNS, DNS), (DNS,), _softmax_bwd),
                         Dispatch((DNS, DNS, DNS), (DNS,), _softmax_bwd),
                         Dispatch((DNS, CSR), (DNS,), _softmax_bwd)),
               infer_shape=rules.first_input_shape, infer_type=rules.first_input_type))


# ----------------------------------------------------------------------------- regression
_REG = Params(grad_scale=Field("float", 1.0, doc="scale of the gradient"))


def regression_shape(attrs, ins, outs):
    data, label = ins
    if data is None and outs[0] is not None:
        rules.set_shape(ins, 0, outs[0])
        data = ins[0]
    if rules.known(data):
        if label is None:
            ins[1] = tuple(data)
        elif rules.known(label) and int(np.prod(label)) != int(np.prod(data)):
            raise rules.Conflict("shape", 1, "input", tuple(data), tuple(label))
        rules.set_shape(outs, 0, data, "output")
    return ins, outs


def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


def regression(name, fwd, dgrad, doc):
    bname = "_backward_" + name

    def fwd_k(a, xs):
        return (fwd(xs[0]),)

    def bwd_k(a, xs):
        out, label = xs
        if label.__class__ is not np.ndarray:
            label = st.todense(label)
        if label.shape != out.shape:
            label = label.reshape(out.shape)
        num_output = out.size // out.shape[0] if out.shape[0] else 1
        g = dgrad(out - label)
        if g.dtype == out.dtype and g.dtype.kind == "f":  # in place (float32 stays float32)
            g *= a.grad_scale / num_output
            return (g,)
        g = g * (a.grad_scale / num_output)
        return (g.astype(out.dtype, copy=False),)

    register(OpDef(
        name, params=_REG, inputs=("data", "label"),
        dispatch=(Dispatch((DNS, DNS), (DNS,), fwd_k), Dispatch((DNS, CSR), (DNS,), fwd_k)),
        infer_shape=regression_shape, infer_type=rules.first_input_type,
        gradient=_loss_grad(bname), aliases=("_sparse_" + name,), doc=doc))
    register(OpDef(bname, params=_REG, inputs=("out", "label"),
                   dispatch=(Dispatch((DNS, DNS), (DNS,), bwd_k),
                             Dispatch((DNS, CSR), (DNS,), bwd_k)),
                   infer_shape=rules.first_input_shape, infer_type=rules.first_input_type))


regression("LinearRegressionOutput", lambda x: x.copy(), lambda d: d,
           "Identity forward; gradient grad_scale/num_output * (out - label). A csr label "
           "is accepted (MXNet's sparse row).")
regression("LogisticRegressionOutput", _sigmoid, lambda d: d,
           "Sigmoid forward; gradient grad_scale/num_output * (out - label).")
regression("MAERegressionOutput", lambda x: x.copy(), np.sign,
           "Identity forward; gradient grad_scale/num_output * sign(out - label).")


# ----------------------------------------------------------------------------- MakeLoss
_MAKELOSS = Params(grad_scale=Field("float", 1.0), valid_thresh=Field("float", 0.0),
                   normalization=Field("str", "null", choices=("null", "batch", "valid")))


def _makeloss_bwd(a, xs):
    x = xs[0]
    scale = a.grad_scale
    if a.normalization == "batch":
        scale /= x.shape[0]
    elif a.normalization == "valid":
        scale /= max(int((x > a.valid_thresh).sum()), 1)
    return (np.full_like(x, scale),)


register(OpDef(
    "MakeLoss", params=_MAKELOSS,
    dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (xs[0].copy(),)),
              Dispatch((CSR,), (CSR,), lambda a, xs: (xs[0].copy(),)),
              Dispatch((RSP,), (RSP,), lambda a, xs: (xs[0].copy(),))),
    gradient=lambda node, og: [bw("_backward_MakeLoss", [node.inputs[0]], node, "backward",
                                  **_kept(node))],
    aliases=("make_loss", "_sparse_make_loss"),
    doc="Mark an output as a loss: backward starts from grad_scale (normalized) ones."))
register(OpDef("_backward_MakeLoss", params=_MAKELOSS,
               dispatch=(Dispatch((DNS,), (DNS,), _makeloss_bwd),)))
