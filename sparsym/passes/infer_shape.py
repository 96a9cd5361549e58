"""Shape inference in both directions over the whole graph."""
from __future__ import annotations

from ..base import ShapeError, parse_attr
from ..ops.core import rules
from ..util import is_np_shape
from .infer_attr import infer_attr


def var_shape(node):
    """A variable's declared shape (``__shape__``; MXNet's 0 dims mean unknown), or None."""
    raw = node.attr.get("__shape__")
    if raw is None:
        return None
    s = parse_attr(raw) if isinstance(raw, str) else raw
    if s is None:
        return None
    if isinstance(s, int):
        s = (s,)
    if not isinstance(s, (tuple, list)):
        raise ShapeError(f"variable {node.name}: attribute __shape__={raw!r} is not a shape")
    if is_np_shape():  # -1 is unknown, 0 a real (zero) size, () a scalar
        return tuple(None if (d is None or d == -1) else int(d) for d in s)
    if len(s) == 0:
        return None  # MXNet (legacy shapes): () is an unknown shape
    return tuple(None if (d is None or d == 0 or d == -1) else int(d) for d in s)


def infer_shape(graph, known, ties=()):
    """Return per-entry shapes given ``known`` (eid -> shape) and variables' ``__shape__``.

    A shape given in ``known`` replaces the variable's declared one (MXNet: the keyword
    argument wins); its None dims are filled from the declaration.
    """
    values = [None] * graph.num_entries
    for n in graph.input_nodes:
        values[graph.eid(n)] = var_shape(n)
    for e, s in known.items():
        if s is not None:
            s = tuple(s)
            try:
                values[e] = rules.merge_shape(values[e], s)
            except ValueError:
                values[e] = s
    return infer_attr(graph, values, lambda op: op.infer_shape, rules.known, ties, "shape")
