"""One fixpoint loop shared by shape and type inference, and its error messages."""
from __future__ import annotations

from ..base import DTypeError, ShapeError
from ..ops.core import rules


def raise_conflict(graph, k, c: rules.Conflict, kind=None):
    """Raise the public error for a disagreement at node ``k`` (rules.raise_conflict's
    text), naming the variable or the node the input comes from."""
    node = graph.nodes[k]
    op = node.op
    hint = ""
    if c.side == "input" and c.index < len(node.inputs):
        src = node.inputs[c.index][0]
        if src.op is None:
            hint = f" (the input is variable {src.name!r})"
        else:
            hint = f" (the input is an output of node {src.name!r} ({src.op.name}))"
    rules.raise_conflict(c, node.name, op.name, op.input_names(node.params),
                         op.out_names(node.params), hint)


def infer_attr(graph, values, rule_of, known_fn, ties=(), kind="shape"):
    """Sweep forward then backward until a sweep changes no value (rules are pure
    functions of their node's values, so another sweep could not change anything either).

    ``values`` is a per-entry list, filled in place; ``rule_of(op)`` gives the op's rule;
    ``ties`` are (eid, eid) pairs that must agree (a head gradient and its output).
    A disagreement raises the public error naming the node, the input and both values.
    """
    nodes = [(k, n, rule_of(n.op), graph.in_eids(k), graph.out_eids(k))
             for k, n in enumerate(graph.nodes) if n.op is not None]
    if kind == "shape":
        merge = rules.merge_shape
        known_fn = _shape_known   # same test as rules.known, without a generator per call
    else:
        merge = _merge_type

    # a node is done once its rule ran with every value known (values only ever fill in)
    done = [False] * len(graph.nodes)
    # NOTE: test ``cur is None`` explicitly: numpy says np.dtype('float64') == None
    changed, sweep = True, 0
    while changed:
        changed = False
        seq = nodes if sweep % 2 == 0 else reversed(nodes)
        for k, node, rule, ie, oe in seq:
            if done[k]:
                continue
            ins = [values[e] for e in ie]
            outs = [values[e] for e in oe]
            try:
                ins, outs = rule(node.params, ins, outs)
            except rules.Conflict as c:
                raise_conflict(graph, k, c, kind)
            complete = True
            for side, eids, vals in (("input", ie, ins), ("output", oe, outs)):
                for i, (e, v) in enumerate(zip(eids, vals)):
                    cur = values[e]
                    if v is not None and (cur is None or v != cur):
                        if cur is None:
                            values[e] = cur = v
                            changed = True
                        else:
                            try:
                                new = merge(cur, v)
                            except ValueError:
                                raise_conflict(graph, k, rules.Conflict(kind, i, side, v, cur),
                                               kind)
                            if new != cur:
                                values[e] = cur = new
                                changed = True
                    if complete and not known_fn(cur):
                        complete = False
            done[k] = complete
        for a, b in ties:
            va, vb = values[a], values[b]
            if va is None and vb is None:
                continue
            if va is None or vb is None or va != vb:
                try:
                    v = merge(va, vb)
                except ValueError:
                    raise (ShapeError if kind == "shape" else DTypeError)(
                        f"head gradient {kind} {rules.fmt_value(kind, vb)} does not match "
                        f"the output's {rules.fmt_value(kind, va)}") from None
                if va is None or vb is None or v != va or v != vb:
                    changed = True
                values[a] = values[b] = v
        sweep += 1
    return values


def _shape_known(s):
    return s is not None and None not in s


def _merge_type(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise ValueError
