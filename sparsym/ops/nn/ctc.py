"""CTCLoss (aliases ctc_loss, _contrib_CTCLoss, _contrib_ctc_loss): MXNet's connectionist
temporal classification loss over (T, N, alphabet) activations.

The forward also yields the activation gradient as a hidden second output (MXNet keeps it
the same way); the backward op scales it by each sequence's head gradient.
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ...kernels.ctc import ctc_loss
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import DNS, Checked
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register

_CTC = Checked(lambda op, a: None,
               use_data_lengths=Field("bool", False, doc="read data_lengths (N,)"),
               use_label_lengths=Field("bool", False, doc="read label_lengths (N,)"),
               blank_label=Field("str", "first", choices=("first", "last"),
                                 doc="blank is class 0 (labels padded with 0) or the last "
                                     "class (labels padded with -1)"))


def _inputs(a):
    return (("data", "label") + (("data_lengths",) if a.use_data_lengths else ())
            + (("label_lengths",) if a.use_label_lengths else ()))


def _shape(a, ins, outs):
    d, lab = ins[0], ins[1]
    if d is not None:
        if len(d) != 3:
            raise ShapeError(f"CTCLoss: data must be (sequence, batch, alphabet), got {d}")
        rules.set_shape(outs, 0, (d[1],), "output")
        rules.set_shape(outs, 1, tuple(d), "output")
        k = 2
        if a.use_data_lengths:
            rules.set_shape(ins, k, (d[1],))
            k += 1
        if a.use_label_lengths:
            rules.set_shape(ins, k, (d[1],))
    if d is not None and lab is not None and None not in (d[0], lab[-1]):
        if len(lab) != 2:
            raise ShapeError(f"CTCLoss: label must be (batch, max_label_length), got {lab}")
        if d[0] < lab[1]:
            raise ShapeError(f"CTCLoss: The max number of labels cannot exceed the maximum "
                             f"sequence length of the data ({lab[1]} > {d[0]})")
    return ins, outs


def _type(a, ins, outs):
    dt = ins[0]
    if dt is not None:
        rules.set_type(outs, 0, dt, "output")
        rules.set_type(outs, 1, dt, "output")
    return ins, outs


def _label_lengths(a, label):
    """Lengths up to the first padding value (0 with blank 'first', -1 with 'last')."""
    pad = 0 if a.blank_label == "first" else -1
    is_pad = label == pad
    return np.where(is_pad.any(axis=1), is_pad.argmax(axis=1), label.shape[1])


def _fwd(a, xs):
    data, label = xs[0], xs[1]
    T, N, K = data.shape
    k = 2
    if a.use_data_lengths:
        dlen = np.asarray(xs[k]).astype(np.int64)
        k += 1
        if (dlen < 0).any() or (dlen > T).any():
            raise ShapeError(f"CTCLoss: data_lengths must lie in [0, {T}], got {dlen.tolist()}")
    else:
        dlen = np.full(N, T, np.int64)
    lab = np.asarray(label).astype(np.int64)
    llen = (np.asarray(xs[k]).astype(np.int64) if a.use_label_lengths
            else _label_lengths(a, lab))
    blank = 0 if a.blank_label == "first" else K - 1
    # MXNet takes a label equal to the blank's index too (as warp-ctc does: it is one more
    # label position of the lattice); only values outside the alphabet are refused
    for n in range(N):
        used = lab[n, :llen[n]]
        if llen[n] > lab.shape[1] or ((used < 0) | (used > K - 1)).any():
            raise ShapeError(f"CTCLoss: labels of sequence {n} must be classes in [0, {K - 1}]"
                             f" (blank_label={a.blank_label!r}), got {used.tolist()}")
    loss, grad = ctc_loss(data, lab, dlen, llen, blank)
    return loss.astype(data.dtype), grad.astype(data.dtype)


def _bwd(a, xs):
    og, grad = xs
    return ((grad * og.reshape(1, -1, 1)).astype(grad.dtype, copy=False),)


def _grad(node, og):
    d = bw("_backward_CTCLoss", [og[0], (node, 1)], node, "backward", **kept(node))
    return [d] + [None] * (len(node.inputs) - 1)


register(OpDef(
    "CTCLoss", params=_CTC, inputs=_inputs, num_outputs=2, num_visible_outputs=1,
    dispatch=(Dispatch((DNS, DNS), (DNS,), _fwd), Dispatch((DNS, DNS, DNS), (DNS,), _fwd),
              Dispatch((DNS, DNS, DNS, DNS), (DNS,), _fwd)),
    infer_shape=_shape, infer_type=_type, gradient=_grad,
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    doc="""Connectionist temporal classification loss, one value per sequence.

    ``data`` (sequence_length, batch, alphabet_size) holds unnormalised activations (a
    softmax is applied inside); ``label`` (batch, max_label_length) holds class indices.
    With ``blank_label='first'`` the blank is class 0 and labels are padded with 0; with
    ``'last'`` the blank is the last class and labels are padded with -1. ``data_lengths``
    and ``label_lengths`` (batch,) are read when ``use_data_lengths`` /
    ``use_label_lengths``. A label that no alignment fits gives an infinite loss (MXNet
    1.9.1 gives 0).

    Parameters
    ----------
    data, label : Symbol or NDArray
    data_lengths, label_lengths : Symbol or NDArray, optional
    use_data_lengths : bool, default False
    use_label_lengths : bool, default False
    blank_label : {'first', 'last'}, default 'first'

    Examples
    --------
    >>> import sparsym as mx
    >>> loss = mx.nd.ctc_loss(mx.nd.zeros((2, 1, 3)), mx.nd.array([[1]]))
    >>> round(float(loss.asscalar()), 4)   # 3 of 9 equally likely paths emit [1]
    1.0986
    """))
register(OpDef(
    "_backward_CTCLoss", params=_CTC, inputs=("ograd", "grad"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _bwd),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(1)))
