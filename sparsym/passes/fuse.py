"""Post-op fusion for inference plans: an elementwise op that reads the only use of a
producer able to apply it in its own kernel is folded into that producer (oneDNN applies it
as a post-op while the output is still in cache: convolution + bias + ReLU); a BatchNorm
after a convolution is folded into it (``affine_fold`` / ``folds_affine``), and a residual
add becomes the convolution's sum post-op (``sums_inputs`` / ``fuses_sum``).

Records say what fuses, never op names: a consumer's ``OpDef.post_op(attrs)`` names the
post-op it is (``("relu",)``) or None; a producer with ``OpDef.fuses_post_ops`` applies
the tuple in its attrs' ``__post_ops__`` to its first output, on every path (oneDNN or
NumPy/Numba). Plans with gradients are left alone: the backward reads the unfused values.
"""
from __future__ import annotations

import os

from ..graph import topo_order
from ..ops.core.node import Node
from ..ops.core.registry import get_op

__all__ = ["fuse_post_ops", "enabled"]


def enabled() -> bool:
    """``SPARSYM_FUSE=0`` turns the pass off (every op then runs as its own step)."""
    return os.environ.get("SPARSYM_FUSE", "1") != "0"


def fuse_post_ops(heads):
    """New heads with fusable consumers folded into their producers (the input graph is
    untouched). Returns ``(heads, fused)``: ``fused`` counts the nodes removed.

    A fused node takes the consumer's name (its value is the consumer's: outputs keep
    their names) and the producer's op, inputs and parameters plus ``__post_ops__``. A
    producer is fused only when nothing else reads any of its outputs (BatchNorm's hidden
    mean and variance included).
    """
    order = topo_order(heads)
    uses = {}
    for n in order:
        for src, i in n.inputs:
            uses[(id(src), i)] = uses.get((id(src), i), 0) + 1
    for src, i in heads:  # a head is seen by the user: its value must stay unfused
        uses[(id(src), i)] = uses.get((id(src), i), 0) + 1
    canon, fused = {}, 0
    for n in order:
        if n.op is None:
            canon[id(n)] = n
            continue
        inputs = [(canon[id(s)], i) for s, i in n.inputs]
        folded = _fold_affine(n, inputs, uses) or _fold_sum(n, inputs, uses)
        if folded is not None:
            canon[id(n)] = folded
            fused += 1
            continue
        post = n.op.post_op(n.params) if n.op.post_op is not None else None
        if post is not None and len(n.inputs) == 1:
            src, i = n.inputs[0]
            prod = inputs[0][0]
            if (i == 0 and prod.op is not None and prod.op.fuses_post_ops
                    and _only_use(src, uses)):
                ops = tuple(prod.params.get("__post_ops__", ())) + (tuple(post),)
                params = type(prod.params)(prod.params, __post_ops__=ops)
                new = Node(prod.op, n.name, params, prod.attr, prod.inputs, dict(prod.given))
                canon[id(n)] = new
                fused += 1
                continue
        canon[id(n)] = Node(n.op, n.name, n.params, n.attr, inputs, dict(n.given))
    if not fused:
        return list(heads), 0
    return [(canon[id(n)], i) for n, i in heads], fused


def _only_use(src, uses):
    """Whether output 0 of ``src`` has one reader and its other outputs none."""
    return (uses.get((id(src), 0)) == 1
            and not any(uses.get((id(src), k)) for k in range(1, src.nout)))


def _fold_affine(n, inputs, uses):
    """The node computing ``n``'s producer and ``n`` in one step, or None: ``n``'s record
    folds (``affine_fold``), it reads output 0 of a producer whose record names the fused
    op (``folds_affine``), and only ``n`` reads the producer and only ``n``'s output 0 is
    read (BatchNorm's hidden mean and variance are not)."""
    if n.op.affine_fold is None or not n.inputs or not n.op.affine_fold(n.params):
        return None
    src, i = n.inputs[0]
    prod = inputs[0][0]
    if (i != 0 or prod.op is None or prod.op.folds_affine is None
            or not _only_use(src, uses)
            or any(uses.get((id(n), k)) for k in range(1, n.nout))
            or prod.params.get("__post_ops__")):
        return None
    name = prod.op.folds_affine(prod.params)
    if name is None:
        return None
    params = type(prod.params)(prod.params, __bn__=n.params)
    return Node(get_op(name), n.name, params, prod.attr, list(prod.inputs) + inputs[1:],
                dict(prod.given))


def _fold_sum(n, inputs, uses):
    """The node computing ``n`` = a + b as the producer of a (or b) with a sum post-op
    over the other, or None: ``n``'s record ``sums_inputs``, the producer's ``fuses_sum``,
    only ``n`` reads it and it has no post-op or sum yet (the sum comes first)."""
    if not n.op.sums_inputs or len(n.inputs) != 2:
        return None
    for j in (0, 1):
        src, i = n.inputs[j]
        prod = inputs[j][0]
        if (i == 0 and prod.op is not None and prod.op.fuses_sum and _only_use(src, uses)
                and not prod.params.get("__post_ops__") and not prod.params.get("__sum__")
                and inputs[1 - j][0] is not prod):
            params = type(prod.params)(prod.params, __sum__=True)
            return Node(prod.op, n.name, params, prod.attr,
                        list(prod.inputs) + [inputs[1 - j]], dict(prod.given))
    return None
