"""The fused ``RNN`` operator's runner: the unrolled cells of FusedRNNCell bound in an
executor, cached per (attrs, data shape, dtype).

The op record (ops/nn/rnn_op.py) cannot build graphs or executors (ops sit below symbol and
executor), so this module installs itself as its runner when ``sparsym.rnn`` is imported.
One cached executor holds one call's arrays at a time: a lock per executor serialises calls
from several threads.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .. import symbol as sym
from ..ndarray.ndarray import wrap
from ..ops.nn import rnn_op
from .rnn_cell import FusedRNNCell

_CACHE: OrderedDict = OrderedDict()
_LOCK = threading.Lock()
_CACHE_SIZE = 16


def _bind(a, data_shape, dtype):
    n_states = 2 if a.mode == "lstm" else 1
    cell = FusedRNNCell(a.state_size, a.num_layers, a.mode, a.bidirectional, dropout=a.p,
                        get_next_state=True, prefix="rnn_")
    states = [sym.Variable(f"state{i}") for i in range(n_states)]
    out, final = cell.unroll(data_shape[0], sym.Variable("data"), begin_state=states,
                             layout="TNC", merge_outputs=True)
    group = sym.Group([out] + list(final))
    dt = {k: np.dtype(dtype) for k in group.list_arguments()}
    return group.simple_bind(None, grad_req="write", type_dict=dt, data=tuple(data_shape))


def _inner(a, data_shape, dtype):
    """(executor, its lock) for these attrs, data shape and dtype, built once."""
    key = (a, tuple(data_shape), np.dtype(dtype).str)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    hit = (_bind(a, data_shape, dtype), threading.Lock())
    with _LOCK:
        hit = _CACHE.setdefault(key, hit)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return hit


def _load(exe, xs):
    exe.arg_dict["data"][:] = xs[0]
    exe.arg_dict["rnn_parameters"][:] = xs[1]
    for i, s in enumerate(xs[2:]):
        exe.arg_dict[f"state{i}"][:] = s


def forward(a, xs, train, with_seed):
    """Outputs of the unrolled cells on raw inputs (data, parameters, states...)."""
    exe, lock = _inner(a, xs[0].shape, xs[0].dtype)
    with lock:
        _load(exe, xs)
        outs = with_seed(lambda: exe.forward(is_train=train))
        return tuple(o.asnumpy().copy() for o in outs)


def backward(a, ograds, fwd_ins, with_seed):
    """Gradients of (data, parameters, states...) given the head gradients."""
    exe, lock = _inner(a, fwd_ins[0].shape, fwd_ins[0].dtype)
    with lock:
        _load(exe, fwd_ins)

        def run():
            exe.forward(is_train=True)
            exe.backward([wrap(np.asarray(g, dtype=fwd_ins[0].dtype)) for g in ograds])
        with_seed(run)
        names = ["data", "rnn_parameters"] + [f"state{i}" for i in range(len(fwd_ins) - 2)]
        return tuple(exe.grad_dict[n].asnumpy().copy() for n in names)


rnn_op.set_runner(forward, backward)
