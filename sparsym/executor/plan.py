"""Frozen execution plans: passes run once per (graph, shapes, dtypes, stypes, grad_req)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..base import DTypeError, MXNetError, ShapeError
from ..ops import rules
from ..ops.registry import report_fallback
from ..passes.gradient import gradient
from ..passes.infer_shape import infer_shape
from ..passes.infer_storage import infer_storage
from ..passes.infer_type import infer_type
from ..storage import nbytes as _nbytes  # noqa: F401  (re-exported for reports)
from ..symbol.graph import IndexedGraph, Node


@dataclass(frozen=True)
class Step:
    """One node to run: kernel over entry ids; ``fallback`` densifies inputs first."""

    index: int
    name: str
    op_name: str
    kernel: object
    attrs: object
    train_attrs: object
    in_eids: tuple
    out_eids: tuple
    in_stypes: tuple
    out_stypes: tuple
    mode: str

    def describe(self):
        return f"node {self.name} ({self.op_name})"


@dataclass(frozen=True)
class Plan:
    """Everything an executor needs, independent of any particular arrays."""

    graph: IndexedGraph
    arg_names: tuple
    aux_names: tuple
    output_names: tuple
    arg_eids: tuple
    aux_eids: tuple
    head_eids: tuple
    head_grad_eids: tuple       # per head: eid of its gradient variable, or None if unused
    grad_eids: tuple            # per argument: eid of its gradient, or None (zero / not wanted)
    grad_reqs: tuple
    shapes: tuple
    dtypes: tuple
    stypes: tuple
    forward_steps: tuple
    backward_steps: tuple
    fallbacks: tuple            # (op, in stypes, out stypes, attrs) to report at bind time


_CACHE: "OrderedDict[tuple, Plan]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 256
stats = {"hits": 0, "misses": 0}


def _signature(graph: IndexedGraph):
    """Structure of a graph: ops, params, attrs that matter, wiring, and names."""
    sig = []
    for n in graph.nodes:
        if n.op is None:
            sig.append((None, n.name, n.attr.get("__shape__"), n.attr.get("__dtype__"),
                        n.attr.get("__storage_type__")))
        else:
            sig.append((n.op.name, n.name, hash(n.params),
                        tuple((graph.node_id[id(c)], i) for c, i in n.inputs)))
    sig.append(tuple((graph.node_id[id(n)], i) for n, i in graph.heads))
    return tuple(sig)


def clear_cache():
    with _CACHE_LOCK:
        _CACHE.clear()
        stats["hits"] = stats["misses"] = 0


def get_plan(symbol, shapes, dtypes, stypes, grad_reqs):
    """Return a cached plan or build one; ``shapes`` etc. are dicts name -> value."""
    fwd = IndexedGraph(symbol._outputs)
    key = (_signature(fwd),
           tuple(sorted((k, tuple(v)) for k, v in shapes.items())),
           tuple(sorted((k, np.dtype(v).str) for k, v in dtypes.items())),
           tuple(sorted(stypes.items())),
           tuple(grad_reqs.get(n.name, "null") for n in fwd.arg_nodes))
    with _CACHE_LOCK:
        plan = _CACHE.get(key)
        if plan is not None:
            _CACHE.move_to_end(key)
            stats["hits"] += 1
    if plan is not None:
        for f in plan.fallbacks:
            report_fallback(*f)
        return plan
    plan = build_plan(fwd, shapes, dtypes, stypes, grad_reqs)
    with _CACHE_LOCK:
        stats["misses"] += 1
        _CACHE[key] = plan
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return plan


def _unknown_error(kind, names_values, flag):
    shown = names_values[:10]
    listing = ", ".join(f"{n}: {v}" for n, v in shown) + (", ..." if len(names_values) > 10 else "")
    cls = ShapeError if kind == "InferShape" else DTypeError
    raise cls(f"{kind} pass cannot decide {flag} for the following arguments (-1 means unknown "
              f"{'dimensions' if kind == 'InferShape' else 'dtype'}). Please consider providing "
              f"them as inputs:\n{listing}")


def build_plan(fwd: IndexedGraph, shapes, dtypes, stypes, grad_reqs) -> Plan:
    heads = list(fwd.heads)
    args = list(fwd.arg_nodes)
    wrt = [n for n in args if grad_reqs.get(n.name, "null") != "null"]
    head_grad_vars, grad_entries = [], [None] * len(args)
    if wrt:
        head_grad_vars = [Node(None, f"_head_grad{i}", None, {}) for i in range(len(heads))]
        g = gradient(heads, wrt, [(v, 0) for v in head_grad_vars])
        pos = {id(n): i for i, n in enumerate(args)}
        for n, e in zip(wrt, g):
            grad_entries[pos[id(n)]] = e
    full_heads = heads + [e for e in grad_entries if e is not None]
    graph = IndexedGraph(full_heads)
    hg_eids = tuple(graph.eid(v) if id(v) in graph.node_id else None for v in head_grad_vars) \
        or tuple(None for _ in heads)
    head_eids = tuple(graph.eid(n, i) for n, i in heads)
    ties = [(h, g) for h, g in zip(head_eids, hg_eids) if g is not None]

    by_name = {n.name: n for n in graph.input_nodes}
    for name in list(shapes) + list(dtypes) + list(stypes):
        if name not in by_name:
            cands = "\n".join(f"\t[{i}]{n.name}" for i, n in enumerate(fwd.input_nodes))
            raise MXNetError(f"simple_bind: keyword argument name {name} not found.\n"
                             f"Candidate arguments:\n{cands}")
    shp = infer_shape(graph, {graph.eid(by_name[k]): v for k, v in shapes.items()}, ties)
    unknown = [(n.name, rules.fmt_shape(shp[graph.eid(n)])) for n in fwd.input_nodes
               if not rules.known(shp[graph.eid(n)])]
    if unknown:
        _unknown_error("InferShape", unknown, "shapes")
    bad = [k for k, n in enumerate(graph.nodes) if n.op is not None and not all(
        rules.known(shp[e]) for e in graph.out_eids(k))]
    if bad:
        n = graph.nodes[bad[0]]
        raise ShapeError(f"InferShape pass cannot decide the output shape of node {n.name} "
                         f"({n.op.name}); its inputs are "
                         f"{[rules.fmt_shape(shp[e]) for e in graph.in_eids(bad[0])]}")
    typ = infer_type(graph, {graph.eid(by_name[k]): v for k, v in dtypes.items()}, ties)
    st, choice = infer_storage(graph, {graph.eid(by_name[k]): v for k, v in stypes.items()},
                               report=False)
    fwd_ids = {id(n) for n in fwd.nodes}
    fsteps, bsteps, fallbacks = [], [], []
    for k, n in enumerate(graph.nodes):
        if n.op is None:
            continue
        row, mode = choice[k]
        ins = tuple(st[e] for e in graph.in_eids(k))
        outs = tuple(st[e] for e in graph.out_eids(k))
        if mode == "fallback":
            f = (n.op.name, n.params.to_strings(), ins, outs)
            fallbacks.append(f)
            report_fallback(*f)
        train_attrs = n.params
        if n.op.needs_is_train:
            train_attrs = type(n.params)(n.params, __is_train__=True)
            attrs = type(n.params)(n.params, __is_train__=False)
        else:
            attrs = n.params
        if n.op.needs_out_shapes:
            oshp = tuple(shp[e] for e in graph.out_eids(k))
            attrs = type(attrs)(attrs, __out_shapes__=oshp)
            train_attrs = type(train_attrs)(train_attrs, __out_shapes__=oshp)
        step = Step(k, n.name, n.op.name, row.kernel, attrs, train_attrs,
                    tuple(graph.in_eids(k)), tuple(graph.out_eids(k)), ins, outs, mode)
        (fsteps if id(n) in fwd_ids else bsteps).append(step)
    arg_eids = tuple(graph.eid(n) for n in args)
    return Plan(
        graph=graph, arg_names=tuple(n.name for n in args),
        aux_names=tuple(n.name for n in fwd.aux_nodes),
        output_names=tuple(_out_name(e) for e in heads),
        arg_eids=arg_eids, aux_eids=tuple(graph.eid(n) for n in fwd.aux_nodes),
        head_eids=head_eids, head_grad_eids=hg_eids,
        grad_eids=tuple(graph.eid(*e) if e is not None else None for e in grad_entries),
        grad_reqs=tuple(grad_reqs.get(n.name, "null") for n in args),
        shapes=tuple(shp), dtypes=tuple(typ), stypes=tuple(st),
        forward_steps=tuple(fsteps), backward_steps=tuple(bsteps), fallbacks=tuple(fallbacks))


def _out_name(entry):
    from ..symbol.symbol import _entry_name
    return _entry_name(entry)
