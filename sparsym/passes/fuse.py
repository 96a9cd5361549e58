"""Post-op fusion for inference plans: an elementwise op that reads the only use of a
producer able to apply it in its own kernel is folded into that producer (oneDNN applies it
as a post-op while the output is still in cache: convolution + bias + ReLU); a BatchNorm
after a convolution is folded into it (``affine_fold`` / ``folds_affine``), and a residual
add becomes the convolution's sum post-op (``sums_inputs`` / ``fuses_sum``).

Records say what fuses, never op names: a consumer's ``OpDef.post_op(attrs)`` names the
post-op it is (``("relu",)``) or None; a producer with ``OpDef.fuses_post_ops`` applies
the tuple in its attrs' ``__post_ops__`` to its first output, on every path (oneDNN or
NumPy/Numba). Plans with gradients are left alone: the backward reads the unfused values.

Training plans get one fusion (``fuse_embedding_bags``): an embedding lookup weighted by a
value per id and summed over the ids of a row (a sparse model's first layer) becomes one op
whose gradient is computed directly, bit for bit the separate ops' results.
"""
from __future__ import annotations

import os

from ..graph import topo_order
from ..ops.core.node import Node
from ..ops.core.registry import get_op

__all__ = ["fuse_post_ops", "fuse_embedding_bags", "enabled"]


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


def _uses(heads):
    """(topological order, readers per entry) of the graph of ``heads``; a head counts as
    a reader (the user sees its value)."""
    order = topo_order(heads)
    uses = {}
    for n in order:
        for src, i in n.inputs:
            uses[(id(src), i)] = uses.get((id(src), i), 0) + 1
    for src, i in heads:
        uses[(id(src), i)] = uses.get((id(src), i), 0) + 1
    return order, uses


_BAG_DTYPES = ("float32", "float64")


def fuse_embedding_bags(heads, shapes, dtypes, stypes, grad_reqs):
    """New heads with each ``sum(broadcast_mul(Embedding(ids, w), expand_dims(vals, 2)),
    axis=1)`` (operands of the product in either order) replaced by one
    ``_embedding_bag_sum(ids, w, vals)`` node named as the sum. Returns ``(heads, fused)``.

    Applies only where the result is the same bit for bit and nothing is lost: ``ids``,
    ``w`` and ``vals`` are dense graph inputs, ``ids`` and ``vals`` 2-D of one shape
    (``shapes``), ``w`` and ``vals`` of one float dtype (``dtypes``), rows of at least two
    values (the sum of one value per row is NumPy's pairwise sum), ``vals`` wants no
    gradient (``grad_reqs``) and nothing else reads the intermediate results.
    """
    order, uses = _uses(heads)
    canon, fused = {}, 0
    for n in order:
        if n.op is None:
            canon[id(n)] = n
            continue
        bag = _embedding_bag(n, uses, shapes, dtypes, stypes, grad_reqs)
        if bag is not None:
            emb, vals = bag
            canon[id(n)] = Node(get_op("_embedding_bag_sum"), n.name, emb.params, emb.attr,
                                list(emb.inputs) + [vals], dict(emb.given))
            fused += 1
            continue
        canon[id(n)] = Node(n.op, n.name, n.params, n.attr,
                            [(canon[id(s)], i) for s, i in n.inputs], dict(n.given))
    if not fused:
        return list(heads), 0
    return [(canon[id(n)], i) for n, i in heads], fused


def _embedding_bag(n, uses, shapes, dtypes, stypes, grad_reqs):
    """(Embedding node, values entry) when ``n`` is the sum of an embedding bag that
    :func:`fuse_embedding_bags` may fuse, else None."""
    p = n.params
    if (n.op.name != "sum" or tuple(p.axis or ()) not in ((1,), (-2,)) or p.keepdims
            or p.exclude):
        return None
    mul, i = n.inputs[0]
    if i != 0 or mul.op is None or mul.op.name != "broadcast_mul" or not _only_use(mul, uses):
        return None
    for a, b in ((0, 1), (1, 0)):
        (emb, ia), (exp, ib) = mul.inputs[a], mul.inputs[b]
        if (ia == 0 and ib == 0 and emb.op is not None and emb.op.name == "Embedding"
                and exp.op is not None and exp.op.name == "expand_dims"
                and exp.params.axis in (2, -1) and _only_use(emb, uses)
                and _only_use(exp, uses) and emb is not exp):
            break
    else:
        return None
    (ids, ii), (w, iw), (vals, iv) = emb.inputs[0], emb.inputs[1], exp.inputs[0]
    if ii or iw or iv or not (ids.op is None and w.op is None and vals.op is None):
        return None
    sid, sval = shapes.get(ids.name), shapes.get(vals.name)
    if sid is None or len(sid) != 2 or tuple(sval or ()) != tuple(sid):
        return None
    dw, dv = dtypes.get(w.name), dtypes.get(vals.name)
    if dw is None or dv is None or str(dw) != str(dv) or str(dw) not in _BAG_DTYPES:
        return None
    if any(stypes.get(v.name, "default") != "default" for v in (ids, w, vals)):
        return None
    if emb.params.output_dim < 2 or grad_reqs.get(vals.name, "null") != "null":
        return None
    return emb, (vals, 0)
