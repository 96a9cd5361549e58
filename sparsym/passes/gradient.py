"""Gradient pass: append backward nodes built from the ops' ``gradient`` rules."""
from __future__ import annotations

from ..base import MXNetError
from ..graph import IndexedGraph
from ..ops.core.node import make_node


def _sum(entries, name):
    """Sum gradient contributions as a chain of elemwise_add: each term dies as soon as it
    is added (an add_n keeps every term alive until the last one exists)."""
    acc = entries[0]
    for i, e in enumerate(entries[1:]):
        acc = (make_node("elemwise_add", [acc, e], f"{name}_sum{i}"), 0)
    return acc


def gradient(heads, wrt, head_grads, graph=None):
    """Return one gradient entry (or None meaning zero) per node in ``wrt``.

    heads: forward output entries; head_grads: matching entries (variables) seeding the
    backward sweep; wrt: variable nodes whose gradients are wanted; graph: the indexed
    graph of ``heads`` when the caller has it.
    """
    if graph is None:
        graph = IndexedGraph(heads)
    wanted = {id(n) for n in wrt}
    needs = set()
    for n in graph.nodes:
        if n.op is None:
            if id(n) in wanted:
                needs.add(id(n))
            continue
        for c, _ in n.inputs:
            if id(c) in needs:
                needs.add(id(n))
                break
    grads: dict = {}
    for (n, i), g in zip(heads, head_grads):
        grads.setdefault((id(n), i), []).append(g)
    for node in reversed(graph.nodes):
        if node.op is None or id(node) not in needs:
            continue
        nout = node.num_outputs()
        ograds = [grads.get((id(node), i)) for i in range(nout)]
        if ograds.count(None) == nout:
            continue
        ograds = [_sum(g, f"{node.name}_out{i}") if g else
                  (make_node("zeros_like", [(node, i)], f"{node.name}_zero{i}"), 0)
                  for i, g in enumerate(ograds)]
        if node.op.gradient is None:
            raise MXNetError(f"Operator {node.op.name} is non-differentiable because it didn't "
                             f"register FGradient attribute (node {node.name})")
        in_grads = node.op.gradient(node, ograds)
        if len(in_grads) != len(node.inputs):
            raise MXNetError(f"gradient of {node.op.name} returned {len(in_grads)} entries for "
                             f"{len(node.inputs)} inputs")
        for (child, idx), g in zip(node.inputs, in_grads):
            if g is not None and id(child) in needs:
                grads.setdefault((id(child), idx), []).append(g)
    out = []
    for n in wrt:
        gs = grads.get((id(n), 0))
        out.append(_sum(gs, f"{n.name}_grad") if gs else None)
    return out
