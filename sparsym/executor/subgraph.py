"""Running and inferring the subgraphs of the control-flow operators (ops/control/control_flow.py).

Each body is bound once per input signature (shapes, dtypes, storage types, training mode,
whether gradients are wanted): the plan comes from the passes like any bound graph, and
one Executor is kept on the subgraph and reused for every step of every call.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import storage as st
from ..graph import IndexedGraph
from ..ndarray.ndarray import wrap
from ..ops.control import control_flow as cf
from ..ops.core import rules
from ..passes.infer_attr import infer_attr
from .executor import Executor
from .plan import build_plan

_LOCK = threading.Lock()


def _graph(sub):
    g = sub.cache.get("graph")
    if g is None:
        g = sub.cache["graph"] = IndexedGraph(sub.heads)
    return g


def _positions(sub, g):
    """Index into ``sub.inputs`` of each input node of the graph."""
    where = {id(n): i for i, n in enumerate(sub.inputs)}
    return [where[id(n)] for n in g.input_nodes]


def _infer(sub, ins, outs, kind):
    g = _graph(sub)
    values = [None] * g.num_entries
    for n, i in zip(g.input_nodes, _positions(sub, g)):
        values[g.eid(n)] = None if ins[i] is None else (
            tuple(ins[i]) if kind == "shape" else np.dtype(ins[i]))
    for (n, i), v in zip(g.heads, outs):
        if v is None:
            continue
        e = g.eid(n, i)
        if kind == "shape":
            values[e] = rules.merge_shape(values[e], tuple(v))
        elif values[e] is None:
            values[e] = np.dtype(v)
    if kind == "shape":
        values = infer_attr(g, values, lambda op: op.infer_shape, rules.known, (), "shape")
    else:
        values = infer_attr(g, values, lambda op: op.infer_type, lambda v: v is not None,
                            (), "type")
    new_ins = list(ins)
    for n, i in zip(g.input_nodes, _positions(sub, g)):
        new_ins[i] = values[g.eid(n)]
    return new_ins, [values[g.eid(n, i)] for n, i in g.heads]


def infer_shape(sub, ins, outs):
    """Complete the body's input and output shapes (partial ones allowed)."""
    return _infer(sub, ins, outs, "shape")


def infer_type(sub, ins, outs):
    """Complete the body's input and output dtypes."""
    return _infer(sub, ins, outs, "type")


def _bound(sub, raws, want_grad):
    """(executor, arg positions, aux positions, lock) for this input signature."""
    g = _graph(sub)
    pos = _positions(sub, g)
    sig = tuple((tuple(r.shape), np.dtype(r.dtype), st.stype_of(r)) for r in raws)
    key = (sig, want_grad)
    hit = sub.cache.get(key)
    if hit is not None:
        return hit
    shapes, dtypes, stypes, reqs = {}, {}, {}, {}
    for n, i in zip(g.input_nodes, pos):
        shapes[n.name] = sig[i][0]
        dtypes[n.name] = sig[i][1]
        stypes[n.name] = sig[i][2]
        floating = np.issubdtype(sig[i][1], np.floating)
        reqs[n.name] = "write" if want_grad and floating else "null"
    plan = build_plan(g, shapes, dtypes, stypes, reqs)
    where = {id(n): i for i, n in enumerate(sub.inputs)}
    arg_pos = [where[id(n)] for n in g.arg_nodes]
    aux_pos = [where[id(n)] for n in g.aux_nodes]
    exe = Executor(g, None, plan, [None] * len(arg_pos), [None] * len(arg_pos),
                   [None] * len(aux_pos), list(plan.grad_reqs))
    hit = (exe, arg_pos, aux_pos, threading.Lock())
    with _LOCK:
        sub.cache[key] = hit
    return hit


def run(sub, raws, is_train):
    """The body's outputs (raw values) on the inputs ``raws`` (one per ``sub.inputs``)."""
    exe, arg_pos, aux_pos, lock = _bound(sub, raws, False)
    with lock:
        exe.arg_arrays = [wrap(raws[i]) for i in arg_pos]
        exe.aux_arrays = [wrap(raws[i]) for i in aux_pos]
        outs = exe.forward(is_train=is_train)
        # copies: the next call reuses the executor's buffers (a step's outputs live on)
        return [o._raw.copy() for o in outs]


def grad(sub, raws, ograds, is_train):
    """(outputs, one dense gradient per input) of the body at ``raws`` for the head
    gradients ``ograds``; inputs that are not floating point (counters) get zeros."""
    exe, arg_pos, aux_pos, lock = _bound(sub, raws, True)
    with lock:
        exe.arg_arrays = [wrap(raws[i]) for i in arg_pos]
        exe.aux_arrays = [wrap(raws[i]) for i in aux_pos]
        exe.grad_arrays = [wrap(np.zeros(raws[i].shape, raws[i].dtype)) if r != "null"
                           else None for i, r in zip(arg_pos, exe._grad_req_list)]
        outs = [o._raw.copy() for o in exe.forward(is_train=is_train)]
        heads = [wrap(np.asarray(st.todense(g), dtype=o.dtype).reshape(o.shape))
                 for g, o in zip(ograds, outs)]
        exe.backward(heads)
        grads = [np.zeros(r.shape, r.dtype) for r in (st.todense(x) for x in raws)]
        for i, gr in zip(arg_pos, exe.grad_arrays):
            if gr is not None:
                grads[i] = st.todense(gr._raw)
        return outs, grads


cf.HOOKS.infer_shape = infer_shape
cf.HOOKS.infer_type = infer_type
cf.HOOKS.run = run
cf.HOOKS.grad = grad
