"""Frozen execution plans: the passes run once per (graph, shapes, dtypes, stypes, grad_req).

``get_plan`` looks the key up first: a hit returns the frozen plan without running any
pass (the graph signature is cached on the Symbol, so a hit costs one dict lookup once the
symbol has been seen). A miss runs gradient -> infer_shape -> infer_type -> infer_storage
-> plan_memory and freezes the result.
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..base import DTypeError, ShapeError
from ..graph import IndexedGraph, entry_name
from ..ops.core import rules
from ..ops.core.node import Node
from ..ops.core.registry import report_fallback
from ..passes import fuse
from ..passes.gradient import gradient
from ..passes.infer_shape import infer_shape
from ..passes.infer_storage import infer_storage
from ..passes.infer_type import infer_type
from ..passes.plan_memory import POOL_MIN_BYTES, MemoryPlan, plan_memory, schedule
from ..storage import nbytes as _nbytes  # noqa: F401  (re-exported for reports)

__all__ = ["Step", "Plan", "get_plan", "build_plan", "clear_cache", "stats"]


class Step(NamedTuple):
    """One node to run: kernel over entry ids; ``fallback`` densifies inputs first.

    ``writes_out``: the kernel accepts preallocated outputs; ``out_slots`` /
    ``out_inplace`` / ``out_grad`` say, per output, which pool slot holds it (-1: none),
    which input position it may overwrite (-1: none) and which argument's gradient array
    it may be written to directly (-1: none). (A NamedTuple: plans have thousands.)
    """

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
    out_names: tuple = ()
    writes_out: bool = False
    out_slots: tuple = ()
    out_inplace: tuple = ()
    out_grad: tuple = ()
    out_shapes: tuple = ()
    out_dtypes: tuple = ()
    blocked: bool = False       # takes and may return oneDNN Tensors (Dispatch.blocked)

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
    fallbacks: tuple            # (op, attrs, in stypes, out stypes) to report at bind time
    memory: MemoryPlan = None
    build_seconds: float = 0.0
    build_times: tuple = ()     # (phase, seconds) for the passes that built this plan
    stateful_forward: bool = False  # a forward op depends on is_train or updates state
    blocked: bool = False       # some step may leave a oneDNN Tensor in the environment

    @property
    def input_names(self):
        return tuple(n.name for n in self.graph.input_nodes)


_CACHE: OrderedDict[tuple, Plan] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 256
stats = {"hits": 0, "misses": 0}


def clear_cache():
    """Forget every cached plan and reset the hit/miss counters."""
    with _CACHE_LOCK:
        _CACHE.clear()
        stats["hits"] = stats["misses"] = 0


def cache_key(graph, shapes, dtypes, stypes, grad_reqs):
    """(structure, shapes, dtypes, stypes, grad_req, fusion on): everything a plan depends
    on."""
    return (graph.signature(),
            tuple(sorted(shapes.items())),
            tuple(sorted((k, np.dtype(v).str) for k, v in dtypes.items())),
            tuple(sorted(stypes.items())),
            tuple(grad_reqs.get(n.name, "null") for n in graph.arg_nodes),
            fuse.enabled())


def get_plan(fwd: IndexedGraph, shapes: dict, dtypes: dict, stypes: dict,
             grad_reqs: dict) -> Plan:
    """Return a cached plan of graph ``fwd`` or build one; ``shapes`` etc. are dicts
    name -> value."""
    key = cache_key(fwd, shapes, dtypes, stypes, grad_reqs)
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


def _unknown_error(cls, kind, what, unit, names_values):
    shown = names_values[:10]
    listing = "".join(f"{n}: {v}, " for n, v in shown) + ("..." if len(names_values) > 10
                                                           else "")
    raise cls(f"{kind} pass cannot decide {what} for the following arguments (-1 means unknown "
              f"{unit}). Please consider providing them as inputs:\n{listing}\n")


class _Node(NamedTuple):
    """A node of the full graph on its way to a Step: the dispatch row chosen for it."""

    k: int              # index in the graph
    node: Node
    row: object         # registry.Dispatch
    mode: str           # 'sparse' | 'dense' | 'fallback'
    in_stypes: tuple
    out_stypes: tuple
    writes_out: bool    # the row takes preallocated outputs (and every output is dense)
    forward: bool


class _Clock:
    """(phase, seconds) for each phase of one build."""

    def __init__(self):
        self.start = self.last = time.perf_counter()
        self.phases = []

    def mark(self, name):
        now = time.perf_counter()
        self.phases.append((name, now - self.last))
        self.last = now


def _gradient_phase(fwd, grad_reqs):
    """(graph with the backward nodes, head gradient variables, per argument its gradient
    entry or None)."""
    heads, args = list(fwd.heads), list(fwd.arg_nodes)
    wrt = [n for n in args if grad_reqs.get(n.name, "null") != "null"]
    head_grad_vars, grad_entries = [], [None] * len(args)
    if not wrt:
        return fwd, head_grad_vars, grad_entries
    head_grad_vars = [Node(None, f"_head_grad_{i}", None, {}) for i in range(len(heads))]
    g = gradient(heads, wrt, [(v, 0) for v in head_grad_vars], fwd)
    pos = {id(n): i for i, n in enumerate(args)}
    for n, e in zip(wrt, g):
        grad_entries[pos[id(n)]] = e
    graph = IndexedGraph(heads + [e for e in grad_entries if e is not None])
    return graph, head_grad_vars, grad_entries


def _known_by_eid(graph, by_name, values):
    return {graph.eid(by_name[k]): v for k, v in values.items() if k in by_name}


def _infer_shapes(graph, fwd, by_name, shapes, ties, entry_shapes=None):
    """Every entry's shape; an argument or node left unknown raises ShapeError."""
    known = _known_by_eid(graph, by_name, shapes)
    for (node, i), s in (entry_shapes or {}).items():
        known[graph.eid(node, i)] = s
    shp = infer_shape(graph, known, ties)
    unknown = [(n.name, rules.fmt_shape(shp[graph.eid(n)])) for n in fwd.input_nodes
               if not rules.known(shp[graph.eid(n)])]
    if unknown:
        _unknown_error(ShapeError, "InferShape", "shapes", "dimensions", unknown)
    for k, n in enumerate(graph.nodes):
        if n.op is not None and not all(rules.known(shp[e]) for e in graph.out_eids(k)):
            raise ShapeError(
                f"InferShape pass cannot decide the output shape of node {n.name} "
                f"({n.op.name}): inputs {[rules.fmt_shape(shp[e]) for e in graph.in_eids(k)]}, "
                f"outputs {[rules.fmt_shape(shp[e]) for e in graph.out_eids(k)]}")
    return shp


def _infer_types(graph, by_name, dtypes, ties):
    """Every entry's dtype; a node left unknown raises DTypeError."""
    typ = infer_type(graph, _known_by_eid(graph, by_name, dtypes), ties)
    for k, n in enumerate(graph.nodes):
        if any(typ[e] is None for e in graph.out_eids(k)):
            raise DTypeError(f"InferType pass cannot decide the output dtype of node {n.name} "
                             f"({n.op.name if n.op else 'variable'}): inputs "
                             f"{[str(typ[e]) for e in graph.in_eids(k)]}")
    return typ


def _lower(graph, fwd, st, choice):
    """One _Node per operator node, and the fallbacks to report (reported now as well)."""
    fwd_ids = {id(n) for n in fwd.nodes}
    nodes, fallbacks = [], []
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
        writes_out = row.writes_out and mode != "fallback" and all(o == "default" for o in outs)
        nodes.append(_Node(k, n, row, mode, ins, outs, writes_out, id(n) in fwd_ids))
    return nodes, fallbacks


def _direct_gradients(graph, nodes, grad_eids, reqs, keep, st):
    """Gradient eid -> argument index whose gradient array the producing kernel may write
    into directly (req 'write', one producer that takes ``out``, read by nothing else)."""
    consumed = {e for p in nodes for e in graph.in_eids(p.k)}
    grad_count = {}
    for e in grad_eids:
        if e is not None:
            grad_count[e] = grad_count.get(e, 0) + 1
    producer_out = {e for p in nodes if p.writes_out for e in graph.out_eids(p.k)}
    direct = {}
    for a, (e, r) in enumerate(zip(grad_eids, reqs)):
        if e is not None and r == "write" and e in producer_out and grad_count[e] == 1 \
                and e not in keep and e not in consumed and st[e] == "default":
            direct[e] = a
    return direct


def _freeze(graph, nodes, shp, typ, mem, direct, read):
    """The frozen forward and backward Steps; ``read``: the entries something reads (an
    op, a head, a gradient)."""
    fsteps, bsteps = [], []
    for p in nodes:
        n, k = p.node, p.k
        train_attrs = attrs = n.params
        if n.op.needs_is_train:
            train_attrs = type(n.params)(n.params, __is_train__=True)
            attrs = type(n.params)(n.params, __is_train__=False)
        oe = tuple(graph.out_eids(k))
        oshp = tuple([shp[e] for e in oe])
        if n.op.skips_unused_outputs and p.mode != "fallback" and not p.writes_out:
            unused = tuple(i for i, e in enumerate(oe) if e not in read)
            if unused:
                attrs = type(attrs)(attrs, __unused__=unused)
                train_attrs = type(train_attrs)(train_attrs, __unused__=unused)
        if n.op.needs_out_shapes:
            attrs = type(attrs)(attrs, __out_shapes__=oshp)
            train_attrs = type(train_attrs)(train_attrs, __out_shapes__=oshp)
        blocked = p.row.blocked and p.mode != "fallback" and not p.writes_out
        if blocked:
            attrs = type(attrs)(attrs, __blocked__=True)
            train_attrs = type(train_attrs)(train_attrs, __blocked__=True)
        if p.writes_out:
            slots = tuple([mem.slot_of.get(e, -1) for e in oe])
            inplace = tuple([mem.inplace_src.get(e, -1) for e in oe])
            to_grad = tuple([direct.get(e, -1) for e in oe])
        else:
            slots = inplace = to_grad = ()
        step = Step(k, n.name, n.op.name, p.row.kernel, attrs, train_attrs,
                    tuple(graph.in_eids(k)), oe, p.in_stypes, p.out_stypes, p.mode,
                    tuple(n.op.out_names(n.params)), p.writes_out, slots, inplace, to_grad,
                    oshp, tuple([typ[e] for e in oe]), blocked)
        (fsteps if p.forward else bsteps).append(step)
    return tuple(fsteps), tuple(bsteps)


def build_plan(fwd: IndexedGraph, shapes, dtypes, stypes, grad_reqs,
               entry_shapes=None) -> Plan:
    """Run every pass for one binding and freeze the result: gradient, inference (shape,
    type, storage), lowering to dispatch rows, backward scheduling, direct gradients and
    the memory plan, then the frozen steps. ``entry_shapes`` ({(node, index): shape})
    seeds shapes that inference cannot derive (value-dependent outputs of a recorded run)."""
    clock = _Clock()
    if entry_shapes is None:
        fwd = _fuse(fwd, shapes, dtypes, stypes, grad_reqs)
    heads, args = list(fwd.heads), list(fwd.arg_nodes)
    graph, head_grad_vars, grad_entries = _gradient_phase(fwd, grad_reqs)
    clock.mark("gradient")
    hg_eids = tuple(graph.eid(v) if id(v) in graph.node_id else None for v in head_grad_vars) \
        or tuple(None for _ in heads)
    head_eids = tuple(graph.eid(n, i) for n, i in heads)
    ties = [(h, g) for h, g in zip(head_eids, hg_eids) if g is not None]
    by_name = {n.name: n for n in graph.input_nodes}
    shp = _infer_shapes(graph, fwd, by_name, shapes, ties, entry_shapes)
    clock.mark("infer_shape")
    typ = _infer_types(graph, by_name, dtypes, ties)
    clock.mark("infer_type")
    st, choice = infer_storage(graph, _known_by_eid(graph, by_name, stypes), report=False,
                               ties=ties)
    clock.mark("infer_storage")

    arg_eids = tuple(graph.eid(n) for n in args)
    aux_eids = tuple(graph.eid(n) for n in fwd.aux_nodes)
    grad_eids = tuple(graph.eid(*e) if e is not None else None for e in grad_entries)
    reqs = tuple(grad_reqs.get(n.name, "null") for n in args)
    nodes, fallbacks = _lower(graph, fwd, st, choice)
    n_fwd = sum(1 for p in nodes if p.forward)
    clock.mark("dispatch")

    nbytes = [0] * graph.num_entries
    for e in range(graph.num_entries):
        if st[e] == "default":
            nbytes[e] = math.prod(shp[e]) * typ[e].itemsize
    keep = set(arg_eids) | set(aux_eids) | set(head_eids) | {e for e in hg_eids if e is not None}
    if n_fwd < len(nodes) and not any(p.node.op.mutates for p in nodes):
        order = schedule([(graph.in_eids(p.k), graph.out_eids(p.k)) for p in nodes], n_fwd,
                         nbytes, keep)
        nodes = nodes[:n_fwd] + [nodes[i] for i in order]
    clock.mark("schedule")
    direct = _direct_gradients(graph, nodes, grad_eids, reqs, keep, st)
    final = {e for e in grad_eids if e is not None}
    poolable = [e for p in nodes if p.writes_out for e in graph.out_eids(p.k)
                if e not in keep and e not in direct and nbytes[e] >= POOL_MIN_BYTES]
    mem = plan_memory([(graph.in_eids(p.k), graph.out_eids(p.k)) for p in nodes], n_fwd,
                      keep, final, nbytes, poolable,
                      [p.node.op.inplace if p.writes_out else () for p in nodes])
    clock.mark("plan_memory")
    read = {e for p in nodes for e in graph.in_eids(p.k)} | set(head_eids) | final
    fsteps, bsteps = _freeze(graph, nodes, shp, typ, mem, direct, read)
    clock.mark("steps")
    return Plan(
        graph=graph, arg_names=tuple(n.name for n in args),
        aux_names=tuple(n.name for n in fwd.aux_nodes),
        output_names=tuple(entry_name(e) for e in heads),
        arg_eids=arg_eids, aux_eids=aux_eids,
        head_eids=head_eids, head_grad_eids=hg_eids, grad_eids=grad_eids, grad_reqs=reqs,
        shapes=tuple(shp), dtypes=tuple(typ), stypes=tuple(st),
        forward_steps=fsteps, backward_steps=bsteps, fallbacks=tuple(fallbacks),
        memory=mem, build_seconds=time.perf_counter() - clock.start,
        build_times=tuple(clock.phases),
        blocked=any(s.blocked for s in fsteps + bsteps),
        stateful_forward=any(n.op is not None and (n.op.needs_is_train or n.op.mutates or n.op.aux)
                             for n in fwd.nodes))


def _fuse(fwd, shapes, dtypes, stypes, grad_reqs):
    """The graph with its embedding bags fused, and post-op fusion applied when the plan
    computes no gradient (the backward reads unfused values), when the inputs stay the
    same; else ``fwd``."""
    if not fuse.enabled():
        return fwd
    heads, fused = fuse.fuse_embedding_bags(fwd.heads, shapes, dtypes, stypes, grad_reqs)
    if not any(grad_reqs.get(n.name, "null") != "null" for n in fwd.arg_nodes):
        heads, more = fuse.fuse_post_ops(heads)
        fused += more
    if not fused:
        return fwd
    g = IndexedGraph(heads)
    if [n.name for n in g.input_nodes] != [n.name for n in fwd.input_nodes]:
        return fwd
    return g

