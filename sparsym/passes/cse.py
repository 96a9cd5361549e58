"""Common-subexpression elimination (MXNet's ``MXNET_ELIMINATE_COMMON_EXPR``): nodes applying
the same op with the same parameters to the same inputs are computed once."""
from __future__ import annotations

from ..graph import topo_order
from ..ops.core.node import Node
from ..ops.core.registry import get_op


def _mergeable(op):
    """MXNet keeps nodes that draw random numbers, depend on the training mode or update
    state (Dropout, random ops, BatchNorm) apart."""
    return not (op.random or op.needs_is_train or op.mutates or op.aux)


def eliminate_common_expr(heads):
    """New heads over a graph where equal nodes are merged (the input graph is untouched).

    Returns ``(heads, merged)``: ``merged`` counts the nodes removed. Outputs that become
    the same entry are kept apart by a ``_copy`` node, as MXNet does, so every output stays
    its own array.
    """
    canon = {}      # id(old node) -> node of the new graph
    seen = {}       # (op, params, attrs, inputs) -> node of the new graph
    merged = 0
    for node in topo_order(heads):
        if node.op is None:
            canon[id(node)] = node
            continue
        inputs = [(canon[id(n)], i) for n, i in node.inputs]
        key = None
        if _mergeable(node.op):
            key = (node.op.name, tuple(sorted(node.given.items())),
                   tuple(sorted(node.attr.items())), tuple((id(n), i) for n, i in inputs))
            hit = seen.get(key)
            if hit is not None:
                canon[id(node)] = hit
                merged += 1
                continue
        new = Node(node.op, node.name, node.params, node.attr, inputs, dict(node.given))
        canon[id(node)] = new
        if key is not None:
            seen[key] = new
    if not merged:
        return list(heads), 0
    out, used = [], set()
    copy_op = get_op("_copy")
    for n, i in heads:
        entry = (canon[id(n)], i)
        if (id(entry[0]), i) in used:
            entry = (Node(copy_op, f"{n.name}_copy", inputs=[entry]), 0)
        used.add((id(entry[0]), entry[1]))
        out.append(entry)
    return out, merged
