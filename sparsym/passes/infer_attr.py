"""One fixpoint loop shared by shape and type inference."""
from __future__ import annotations

from ..ops import rules


def infer_attr(graph, values, rule_of, known_fn, ties=(), kind="shape"):
    """Sweep forward then backward until two sweeps in a row learn nothing.

    ``values`` is a per-entry list, filled in place; ``rule_of(op)`` gives the op's rule;
    ``ties`` are (eid, eid) pairs that must agree (a head gradient and its output).
    A disagreement raises the public error naming the node, the input and both values.
    """
    nodes = [(k, n) for k, n in enumerate(graph.nodes) if n.op is not None]
    merge = rules.merge_shape if kind == "shape" else _merge_type

    def count():
        return sum(1 for v in values if not known_fn(v))

    unknown, stalled, sweep = count(), 0, 0
    while unknown and stalled < 2:
        seq = nodes if sweep % 2 == 0 else reversed(nodes)
        for k, node in seq:
            ie, oe = graph.in_eids(k), graph.out_eids(k)
            ins = [values[e] for e in ie]
            outs = [values[e] for e in oe]
            try:
                ins, outs = rule_of(node.op)(node.params, ins, outs)
            except rules.Conflict as c:
                rules.raise_conflict(c, node.name, node.op.name, node.op.input_names(node.params),
                                     node.op.out_names(node.params))
            for e, v in zip(ie, ins):
                if v is not None and (values[e] is None or v != values[e]):
                    try:
                        values[e] = merge(values[e], v)
                    except ValueError:
                        c = rules.Conflict(kind, ie.index(e), "input", values[e], v)
                        rules.raise_conflict(c, node.name, node.op.name,
                                             node.op.input_names(node.params))
            for e, v in zip(oe, outs):
                if v is not None:
                    values[e] = v if values[e] is None else merge(values[e], v)
        for a, b in ties:
            if values[a] is None or values[b] is None or values[a] != values[b]:
                v = merge(values[a], values[b])
                values[a] = values[b] = v
        before, unknown = unknown, count()
        stalled = stalled + 1 if unknown == before else 0
        sweep += 1
    return values


def _merge_type(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise ValueError
