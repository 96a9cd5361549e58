"""MXNet's fused ``RNN`` operator (rnn_relu, rnn_tanh, lstm, gru; layers; bidirectional).

The kernels (sparsym/kernels/rnn.py) run the recurrence directly on the flat cuDNN-layout
parameter vector. A training forward keeps every step's gate activations (MXNet's reserve
space) for the backward op, found through the call's hidden seed output; a backward that
cannot find them (the seed array was copied) reruns the forward keeping them. Dropout
between layers draws its masks from a per-call seed kept in that hidden output, so a rerun
sees the same masks. float32 calls that oneDNN takes run on its RNN primitives (one per
layer, kernels/onednn/rnn.py) where oneDNN is selected, the others on the NumPy kernels
(float32 LSTM and GRU through kernels/rnn_steps.py's Numba-fused gates). When there is an
idle core for each worker thread, LSTM and GRU calls run in batch blocks on the worker
threads (kernels/rnn.py batch_parts), each block the whole stack on one thread: the rows'
recurrences are independent, and oneDNN's own two-thread GRU was slower than one."""
from __future__ import annotations

import numpy as np

from ... import _rng
from ...kernels import onednn as dnn
from ...kernels._kept import KeptWith
from ...kernels.onednn import rnn as drnn
from ...kernels.rnn import GATES, batch_parts, layout, rnn_backward, rnn_forward
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    require(a.state_size >= 1, op, f"state_size must be positive, got {a.state_size}")
    require(a.num_layers >= 1, op, f"num_layers must be positive, got {a.num_layers}")
    require(0 <= a.p < 1, op, f"p must be in [0, 1), got {a.p}")
    require(a.projection_size is None or (a.mode == "lstm" and a.projection_size >= 1), op,
            f"projection_size is only supported for mode 'lstm' with a positive size, got "
            f"projection_size={a.projection_size} for mode '{a.mode}'")
    require(a.lstm_state_clip_min is None and a.lstm_state_clip_max is None, op,
            "lstm_state_clip_min/max are not supported")
    require(not a.use_sequence_length, op, "use_sequence_length is not supported")


_RNN = Checked(
    _check,
    state_size=Field("int", doc="hidden units per direction"),
    num_layers=Field("int", doc="stacked layers"),
    bidirectional=Field("bool", False),
    mode=Field("str", choices=tuple(GATES), doc="rnn_relu, rnn_tanh, lstm or gru"),
    p=Field("float", 0.0, doc="dropout between layers (training)"),
    state_outputs=Field("bool", False, doc="also output the final states"),
    projection_size=Field("int_or_none", None, doc="LSTM projection (LSTMP) width"),
    lstm_state_clip_min=Field("float_or_none", None, doc="not supported"),
    lstm_state_clip_max=Field("float_or_none", None, doc="not supported"),
    lstm_state_clip_nan=Field("bool", False, doc="ignored"),
    use_sequence_length=Field("bool", False, doc="not supported"))


def _lstm(a):
    return a.mode == "lstm"


def _inputs(a):
    return ("data", "parameters", "state") + (("state_cell",) if _lstm(a) else ())


def _n_states(a):
    return 2 if _lstm(a) else 1


def _n_out(a):
    # output, final state(s), and the hidden dropout seed
    return 1 + _n_states(a) + 1


def rnn_shape(attrs, ins, outs):
    h, b = attrs.state_size, 2 if attrs.bidirectional else 1
    r = attrs.projection_size or h  # the recurrent state's and each direction's width
    data = ins[0]
    if data is None and outs[0] is not None:
        rules.set_shape(ins, 0, tuple(outs[0][:2]) + (None,))
        data = ins[0]
    rules.set_shape(outs, _n_out(attrs) - 1, (1,), "output")
    if data is None:
        return ins, outs
    t, n, c = data
    if c is not None:
        _, total = layout(attrs.mode, h, attrs.num_layers, attrs.bidirectional, c,
                          attrs.projection_size)
        rules.set_shape(ins, 1, (total,))
    for i in range(_n_states(attrs)):
        w = r if i == 0 else h
        rules.set_shape(ins, 2 + i, (attrs.num_layers * b, n, w))
        rules.set_shape(outs, 1 + i, (attrs.num_layers * b, n, w), "output")
        st = ins[2 + i]
        if n is None and st is not None and st[1] is not None:
            n = st[1]
            rules.set_shape(ins, 0, (t, n, c))
    rules.set_shape(outs, 0, (t, n, b * r), "output")
    return ins, outs


def rnn_type(attrs, ins, outs):
    n = _n_out(attrs)
    ins, o = rules.same_type(attrs, ins, list(outs[:n - 1]))
    outs[:n - 1] = o
    rules.set_type(outs, n - 1, np.dtype(np.float64), "output")
    return ins, outs


def _masks(a, seed):
    """The dropout masks' generator of one call; seed -1 means no dropout (inference)."""
    return np.random.default_rng(seed) if seed >= 0 and a.p > 0 and a.num_layers > 1 else None


# the training forward's activations, kept with the call's seed output (they live as long
# as the call's outputs)
_KEPT = KeptWith()


def _rnn_fwd(a, xs):
    train = bool(a.get("__is_train__", False))
    seed = int(_rng.rng().integers(0, 2 ** 31 - 1)) if train and a.p > 0 else -1
    out, finals, cache = _forward(a, xs, seed, train)
    seed_arr = np.array([seed], np.float64)
    if cache is not None:
        _KEPT.put(seed_arr, cache)
    return (out, *finals, seed_arr)


def _rnn_bwd(a, xs):
    ns = _n_states(a)
    ograds, fwd_ins, seed = xs[:1 + ns], xs[1 + ns:-1], xs[-1]
    cache = _KEPT.get(seed)
    if cache is None:
        cache = _rerun(a, fwd_ins, int(np.asarray(seed).reshape(-1)[0]))
    back = drnn.rnn_backward if cache.get("onednn") else rnn_backward
    dx, dparams, dstates = back(a.mode, cache, ograds[0], list(ograds[1:]), a.num_layers,
                                a.bidirectional)
    return (dx, dparams, *dstates)


def _rerun(a, fwd_ins, seed):
    """The activations of the forward call with ``seed`` (its dropout masks), recomputed."""
    return _forward(a, fwd_ins, seed, True)[2]


def _forward(a, xs, seed, keep):
    """The fused forward on oneDNN where it is selected and takes the call, else on the
    NumPy kernels; (out, finals, cache or None)."""
    args = (a.mode, xs[0], xs[1], list(xs[2:]), a.num_layers, a.bidirectional, a.p,
            _masks(a, seed))
    if drnn.supported(a.mode, xs[0], xs[1], xs[2:], a.projection_size) and dnn.enabled():
        parts = batch_parts(a.mode, xs[0], xs[2:], a.num_layers, a.bidirectional,
                            a.projection_size)
        return drnn.rnn_forward(*args, keep=keep, parts=parts)
    return rnn_forward(*args, keep=keep, proj=a.projection_size)


def _rnn_grad(node, og):
    a = node.params
    ns = _n_states(a)
    ins = list(og[:1 + ns]) + list(node.inputs) + [(node, 1 + ns)]
    return multi_bw("_backward_RNN", ins, node, "backward", len(node.inputs), **kept(node))


def _names(a):
    # MXNet's names: rnn_output, rnn_state_output, rnn_statecell_output
    return ("output", "state_output") + (("statecell_output",) if _lstm(a) else ()) + ("seed",)


register(OpDef(
    "RNN", params=_RNN, inputs=_inputs, num_outputs=_n_out, output_names=_names,
    num_visible_outputs=lambda a: 1 + _n_states(a) if a.state_outputs else 1,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _rnn_fwd),
              Dispatch((DNS, DNS, DNS, DNS), (DNS,), _rnn_fwd)),
    infer_shape=rnn_shape, infer_type=rnn_type, gradient=_rnn_grad, needs_is_train=True,
    doc="""Fused multi-layer RNN over time-major data (MXNet's ``RNN`` operator).

    data (T, N, C); parameters: the flat cuDNN-layout vector (see FusedRNNCell);
    state (L*D, N, H) and, for lstm, state_cell. Output (T, N, D*H), plus the final
    state(s) when ``state_outputs``. Numerically identical to the unrolled cells.

    Parameters
    ----------
    state_size, num_layers : int
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    bidirectional : bool, default False
    p : float, default 0 (dropout between layers)
    state_outputs : bool, default False
    """))
register(OpDef(
    "_backward_RNN", params=_RNN,
    inputs=lambda a: ("ograd",) + tuple(f"ograd_state{i}" for i in range(_n_states(a)))
    + _inputs(a) + ("seed",),
    num_outputs=lambda a: len(_inputs(a)),
    # dense rows only, like the forward: a sparse head gradient falls back (densified)
    dispatch=(Dispatch((DNS, "..."), (DNS,), _rnn_bwd),),
    infer_shape=rules.grads_like_inputs(lambda a: 1 + _n_states(a)),
    infer_type=rules.grads_like_inputs_type(lambda a: 1 + _n_states(a))))
