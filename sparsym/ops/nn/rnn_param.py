"""_rnn_param_view: one weight or bias of a fused RNN parameter vector (cuDNN layout), so a
FusedRNNCell can unroll into ordinary ops while keeping MXNet's single ``parameters`` array."""
from __future__ import annotations

import numpy as np

from .. import rules
from ..grad import bw, kept
from ..params import Field
from ..registry import Dispatch, OpDef, register
from ._common import Checked, D, require

GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}
_PARTS = ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")


def _check(op, a):
    require(a.state_size >= 1, op, f"state_size must be positive, got {a.state_size}")
    require(a.num_layers >= 1, op, f"num_layers must be positive, got {a.num_layers}")
    require(0 <= a.layer < a.num_layers, op, f"layer {a.layer} out of range")
    require(a.direction in (0, 1) and (a.direction == 0 or a.bidirectional), op,
            f"direction {a.direction} invalid")


_VIEW = Checked(_check, mode=Field("str", choices=tuple(GATES)), state_size=Field("int"),
                num_layers=Field("int"), bidirectional=Field("bool", False),
                layer=Field("int"), direction=Field("int", 0),
                part=Field("str", choices=_PARTS))


def layout(mode, h, num_layers, bidirectional, num_input):
    """{(layer, direction, part): (offset, shape)} and the total size of the vector."""
    g, b = GATES[mode], 2 if bidirectional else 1
    out, p = {}, 0
    for li in range(num_layers):
        n_in = num_input if li == 0 else b * h
        for d in range(b):
            out[(li, d, "i2h_weight")] = (p, (g * h, n_in))
            p += g * h * n_in
            out[(li, d, "h2h_weight")] = (p, (g * h, h))
            p += g * h * h
    for li in range(num_layers):
        for d in range(b):
            for part in ("i2h_bias", "h2h_bias"):
                out[(li, d, part)] = (p, (g * h,))
                p += g * h
    return out, p


def _part_shape(a, num_input):
    table, total = layout(a.mode, a.state_size, a.num_layers, a.bidirectional, num_input)
    return table[(a.layer, a.direction, a.part)], total


def view_shape(attrs, ins, outs):
    data = ins[1]
    if data is None or data[-1] is None:
        return ins, outs
    (off, shape), total = _part_shape(attrs, data[-1])
    rules.set_shape(ins, 0, (total,))
    rules.set_shape(outs, 0, shape, "output")
    return ins, outs


def _view(a, xs):
    (off, shape), total = _part_shape(a, xs[1].shape[-1])
    p = xs[0]
    if p.shape != (total,):
        from ...base import ShapeError
        raise ShapeError(f"fused RNN parameters: expected ({total},), got {p.shape}")
    return (p[off:off + int(np.prod(shape))].reshape(shape).copy(),)


def _view_bwd(a, xs):
    g, p, data = xs
    (off, shape), _ = _part_shape(a, data.shape[-1])
    out = np.zeros_like(p)
    out[off:off + int(np.prod(shape))] = g.reshape(-1)
    return (out,)


register(OpDef(
    "_rnn_param_view", params=_VIEW, inputs=("parameters", "data"),
    dispatch=(Dispatch((D, D), (D,), _view),), infer_shape=view_shape,
    infer_type=rules.first_input_type,
    gradient=lambda node, og: [bw("_backward_rnn_param_view",
                                  [og[0], node.inputs[0], node.inputs[1]], node, "backward",
                                  **kept(node)), None],
    doc="One weight/bias block of a fused RNN parameter vector (internal)."))
register(OpDef(
    "_backward_rnn_param_view", params=_VIEW, inputs=("ograd", "parameters", "data"),
    dispatch=(Dispatch((D, D, D), (D,), _view_bwd),),
    infer_shape=lambda a, i, o: (i, [i[1]]), infer_type=lambda a, i, o: (i, [i[1]])))
