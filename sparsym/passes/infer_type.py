"""Dtype inference in both directions over the whole graph."""
from __future__ import annotations

import numpy as np

from ..base import dtype_of
from .infer_attr import infer_attr


def var_dtype(node):
    """A variable's declared dtype (``__dtype__``), or None."""
    d = node.attr.get("__dtype__")
    if d is None:
        return None
    if isinstance(d, str) and d.lstrip("-").isdigit():  # MXNet stores type flags as ints
        from ..dtype_flags import flag_to_dtype
        return flag_to_dtype(int(d))
    return dtype_of(d)


def infer_type(graph, known, ties=(), default=np.dtype(np.float32)):
    """Return per-entry dtypes; variables still unknown after the fixpoint get ``default``
    (MXNet's simple_bind defaults unlisted arguments to float32) when it is not None."""
    values = [None] * graph.num_entries
    for n in graph.input_nodes:
        values[graph.eid(n)] = var_dtype(n)
    for e, t in known.items():
        if t is not None:
            values[e] = np.dtype(t)
    values = infer_attr(graph, values, lambda op: op.infer_type, lambda v: v is not None,
                        ties, "type")
    if default is not None and any(v is None for v in values):
        for n in graph.input_nodes:
            e = graph.eid(n)
            if values[e] is None:
                values[e] = default
        values = infer_attr(graph, values, lambda op: op.infer_type,
                            lambda v: v is not None, ties, "type")
    return values
