"""MXNet 1.9.1's ``_contrib_hawkesll``: the log-likelihood of marked, self-exciting Hawkes
processes with exponential decay (kernels/hawkes.py), and its gradient in the background
intensities, branching ratios and decay rates."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ...kernels import hawkes as kh
from ..core import rules
from ..core.grad import multi_bw
from ..core.helpers import DNS
from ..core.params import Params
from ..core.registry import Dispatch, OpDef, register

_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _shape(attrs, ins, outs):
    lda, lags = ins[0], ins[4]
    if lda is None or lags is None:
        return ins, outs
    if len(lda) != 2 or len(lags) != 2:
        raise ShapeError(f"hawkesll: lda must be (N, K) and lags (N, T), got {lda} and {lags}")
    (n, k), t = lda, lags[1]
    want = {1: (k,), 2: (k,), 3: (n, k), 5: (n, t), 6: (n,), 7: (n,)}
    for i, shape in want.items():
        rules.set_shape(ins, i, shape)
    rules.set_shape(outs, 0, (n,), "output")
    rules.set_shape(outs, 1, (n, k), "out_state")
    return ins, outs


def _type(attrs, ins, outs):
    dt = ins[0] if ins[0] is not None else outs[0]
    if dt is not None:
        for i in range(8):
            rules.set_type(ins, i, np.dtype(np.int32) if i == 5 else dt)
        rules.set_type(outs, 0, dt, "output")
        rules.set_type(outs, 1, dt, "out_state")
    return ins, outs


def _forward(attrs, xs):
    ll, state = kh.hawkesll(*xs)
    dt = xs[0].dtype
    return ll.astype(dt), state.astype(dt)


def _backward(attrs, xs):
    og, _og_state, *ins = xs
    gmu, galpha, gbeta = kh.hawkesll_grad(og, *ins)
    dt = ins[0].dtype
    # (MXNet differentiates neither the starting state nor the observations)
    return (gmu.astype(dt), galpha.astype(dt), gbeta.astype(dt),
            *(np.zeros(np.shape(x), np.asarray(x).dtype) for x in ins[3:]))


register(OpDef(
    "_contrib_backward_hawkesll", params=Params(),
    inputs=("ograd", "ograd_state") + _INPUTS, num_outputs=lambda a: 8,
    dispatch=(Dispatch((DNS,) * 10, (DNS,) * 8, _backward),),
    infer_shape=lambda a, ins, outs: (ins, [ins[2 + i] if outs[i] is None else outs[i]
                                            for i in range(8)]),
    infer_type=lambda a, ins, outs: (ins, [ins[2 + i] if outs[i] is None else outs[i]
                                           for i in range(8)])))


def _gradient(node, og):
    g = multi_bw("_contrib_backward_hawkesll", list(og) + list(node.inputs), node,
                 "backward", 8)
    return g[:4] + [None] * 4


register(OpDef(
    "_contrib_hawkesll", params=Params(), inputs=_INPUTS, num_outputs=lambda a: 2,
    output_names=lambda a: ("output", "out_state"),
    dispatch=(Dispatch((DNS,) * 8, (DNS, DNS), _forward),), infer_shape=_shape, infer_type=_type,
    gradient=_gradient, aliases=("hawkesll",),
    doc="""Log-likelihood of univariate Hawkes processes, one per mark (MXNet's
    ``nd.contrib.hawkesll``).

    The conditional intensity of mark k is ``lda_k + alpha_k * sum_{t_i < t, y_i = k}
    beta_k * exp(-beta_k * (t - t_i))``. ``lags`` and ``marks`` (N, T) are left-aligned
    ragged rows of inter-arrival times and int32 marks, ``valid_length`` (N,) the number of
    points of each row, ``max_time`` (N,) the end of each observation interval ``(0,
    max_time]``. ``state`` (N, K) is the memory ``s_k(0) = sum_{t_i < 0} exp(-beta_k (0 -
    t_i))`` carried from earlier points; the second output is ``s_k(max_time)``. The first
    output (N,) is each row's log-likelihood. Gradients reach ``lda``, ``alpha`` and
    ``beta``.
    """))
