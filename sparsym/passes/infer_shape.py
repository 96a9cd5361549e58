"""Shape inference in both directions over the whole graph."""
from __future__ import annotations

from ..base import parse_attr
from ..ops import rules
from .infer_attr import infer_attr


def var_shape(node):
    """A variable's declared shape (``__shape__``; MXNet's 0 dims mean unknown), or None."""
    s = node.attr.get("__shape__")
    if s is None:
        return None
    s = parse_attr(s) if isinstance(s, str) else s
    if s is None or len(s) == 0 and node.attr.get("__shape__") in ("()", "[]"):
        return None if s is None else ()
    return tuple(None if (d is None or d == 0) else int(d) for d in s)


def infer_shape(graph, known, ties=()):
    """Return per-entry shapes given ``known`` (eid -> shape) and variables' ``__shape__``."""
    values = [None] * graph.num_entries
    for n in graph.input_nodes:
        e = graph.eid(n)
        values[e] = var_shape(n)
    for e, s in known.items():
        if s is not None:
            try:
                values[e] = rules.merge_shape(values[e], tuple(s))
            except ValueError:
                values[e] = tuple(s)  # an explicit shape overrides the declared one
    return infer_attr(graph, values, lambda op: op.infer_shape, rules.known, ties, "shape")
