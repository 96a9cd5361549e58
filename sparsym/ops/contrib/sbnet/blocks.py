"""SBNet's block operators: reduce_mask, sparse_gather, sparse_scatter(_var)."""
from __future__ import annotations

import numpy as np

from ....base import ShapeError
from ....kernels import block_sparse as kbs
from ....kernels.sbnet.geometry import binary_mask, block_flags
from ...core import rules
from ...core.grad import bw
from ...core.helpers import DNS
from ...core.params import Field, Params
from ...core.registry import Dispatch, OpDef, register
from ._common import (
    _I32,
    _block_shape,
    _channels,
    _check_float,
    _float_data,
    _geom_fields,
    _indices,
    _pair,
)


# --------------------------------------------------------------------------- reduce_mask
def _rm_shape(a, ins, outs):
    m = ins[0]
    if m is not None and m[0] is not None:
        if len(m) not in (3, 4):
            raise ShapeError(f"reduce_mask: mask of shape {m} must be (N,H,W) or 4-D with one "
                             "channel")
        ch, cw = _pair(a.bcount, "bcount")
        rules.set_shape(outs, 0, (m[0] * ch * cw, 3), "output")
    rules.set_shape(outs, 1, (1,), "output")
    return ins, outs


def _int_outputs(a, ins, outs):
    for i in range(len(outs)):
        rules.set_type(outs, i, _I32, "output")
    return ins, outs


def _rm_kernel(a, xs):
    m = binary_mask(xs[0], a.layout)
    flags = block_flags(m, a.bsize, a.bstride, a.boffset, a.bcount, a.tol, a.avgpool)
    idx = np.argwhere(flags).astype(np.int32)
    ch, cw = _pair(a.bcount, "bcount")
    out = np.full((m.shape[0] * ch * cw, 3), -1, dtype=np.int32)
    out[:idx.shape[0]] = idx
    return out, np.array([idx.shape[0]], dtype=np.int32)


register(OpDef(
    "_contrib_reduce_mask", inputs=("mask",), num_outputs=2,
    output_names=("indices", "count"),
    params=Params(
        bsize=Field("shape", doc="block size (bh, bw)"),
        bstride=Field("shape", doc="block stride (sh, sw)"),
        boffset=Field("shape", (0, 0), doc="offset of block (0, 0)"),
        bcount=Field("shape", doc="number of blocks (BCH, BCW)"),
        tol=Field("float", 0.0, doc="a block is active when its pooled value is > tol"),
        avgpool=Field("bool", False, doc="average instead of max pooling"),
        layout=Field("str", "NHWC", choices=("NHWC", "NCHW"),
                     doc="where a 4-D mask keeps its single channel")),
    dispatch=(Dispatch((DNS,), (DNS, DNS), _rm_kernel),),
    infer_shape=_rm_shape, infer_type=_int_outputs,
    gradient=lambda node, og: [None],
    doc="""Active blocks of a mask (SBNet's reduce_mask).

    A block is active when the max (or, with ``avgpool``, the sum divided by bh*bw) of the
    mask over the block clipped to the image is strictly greater than ``tol``.

    Parameters
    ----------
    mask : NDArray or Symbol, (N,H,W), (N,H,W,1) or, with layout='NCHW', (N,1,H,W)
    bsize, bstride, boffset, bcount : (H, W) pairs, as from ``calc_block_params``
    tol : float, default 0
    avgpool : bool, default False

    Returns
    -------
    indices : int32 (N*BCH*BCW, 3)
        Rows (n, i, j): the first ``count`` rows are the active blocks in lexicographic
        order (deterministic), the remaining rows are -1 (padding ignored by the other ops).
        Use ``indices[:count]`` for an exact list.
    count : int32 (1,)

    Unlike SBNet, an empty mask gives count 0 (SBNet forces a dummy block (0, 0, 0)).
    No gradient flows to the mask.

    Examples
    --------
    >>> import sparsym as mx
    >>> m = mx.nd.zeros((1, 4, 4)); m[0, 3, 3] = 1
    >>> idx, cnt = mx.nd.contrib.reduce_mask(m, bsize=(2, 2), bstride=(2, 2), bcount=(2, 2))
    >>> cnt.asnumpy(), idx.asnumpy()[:1]
    (array([1], dtype=int32), array([[0, 1, 1]], dtype=int32))
    """))


# --------------------------------------------------------------------------- gather
def _gather_shape(a, ins, outs):
    x, idx = ins
    if x is not None and len(x) != 4:
        raise ShapeError(f"sparse_gather: data must be 4-D, got {x}")
    if idx is not None and idx[0] is not None:
        if len(idx) != 2 or idx[1] not in (None, 3):
            raise ShapeError(f"sparse_gather: indices must be (M, 3), got {idx}")
        rules.set_shape(ins, 1, (idx[0], 3))
        if x is not None and _channels(x, a.layout) is not None:
            rules.set_shape(outs, 0, _block_shape(a, idx[0], _channels(x, a.layout)), "output")
    if x is not None:
        rules.set_shape(outs, 1, x, "output")
    return ins, outs


def _gather_type(a, ins, outs):
    if ins[1] is None:
        rules.set_type(ins, 1, _I32)
    if ins[0] is not None:
        _check_float(ins, 0, "sparse_gather")
        rules.set_type(outs, 0, ins[0], "output")
        rules.set_type(outs, 1, ins[0], "output")
    elif outs[0] is not None:
        rules.set_type(ins, 0, outs[0])
    return ins, outs


def _shape_carrier(x):
    """A zero-byte read-only array shaped like x: lets the gradient know x's shape without
    keeping x's values alive (so an in-place scatter may overwrite x)."""
    return np.broadcast_to(np.zeros((), dtype=x.dtype), x.shape)


def _gather_kernel(a, xs):
    x = _float_data(xs[0], "sparse_gather")
    idx, valid = _indices(xs[1])
    args = (a.bsize, a.bstride, a.boffset, a.transpose, a.layout)
    if valid is None:
        return kbs.sparse_gather(x, idx, *args), _shape_carrier(x)
    out = np.zeros(_block_shape(a, idx.shape[0], _channels(x.shape, a.layout)), x.dtype)
    out[valid] = kbs.sparse_gather(x, idx[valid], *args)
    return out, _shape_carrier(x)


def _geom_kw(node, **more):
    p = node.params
    kw = dict(bsize=p.bsize, bstride=p.bstride, boffset=p.boffset, transpose=p.transpose,
              layout=p.layout)
    kw.update(more)
    return kw


def _gather_grad(node, og):
    return [bw("_backward__contrib_sparse_gather", [og[0], node.inputs[1], (node, 1)],
               node, "backward", **_geom_kw(node)), None]


def _gather_bwd_kernel(a, xs):
    g, raw_idx, x = xs
    idx, valid = _indices(raw_idx)
    g = np.asarray(g)
    if valid is not None:
        idx, g = idx[valid], g[valid]
    dx = kbs.gather_backward(g, idx, np.shape(x), a.bsize, a.bstride, a.boffset, a.transpose,
                             a.layout)
    return (dx.astype(np.asarray(x).dtype, copy=False),)


_GATHER_DOC = """Copy blocks out of dense data (SBNet's sparse_gather).

    Block m = (n, i, j) is ``data[n, h0:h0+bh, w0:w0+bw]`` with
    ``h0 = boffset[0] + i*bstride[0]``; pixels outside the image read as zeros.

    Parameters
    ----------
    data : NDArray or Symbol, float32/float64, NHWC (default) or NCHW (``layout``)
    indices : int32 (M, 3) rows (n, i, j); rows with n < 0 give zero blocks
    bsize, bstride, boffset : (H, W) pairs
    transpose : bool, default False
        Blocks [M,C,bh,bw] instead of [M,bh,bw,C] (SBNet's fused NHWC -> NCHW transpose).
    layout : {'NHWC', 'NCHW'}

    Returns
    -------
    blocks : [M,bh,bw,C] or [M,C,bh,bw]

    The gradient w.r.t. data is the scatter-add of the block gradients (overlapping halos
    sum, padding is dropped); indices get no gradient.
    """
register(OpDef(
    "_contrib_sparse_gather", inputs=("data", "indices"), params=Params(**_geom_fields()),
    num_outputs=2, num_visible_outputs=1, output_names=("output", "data_shape"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _gather_kernel),),
    infer_shape=_gather_shape, infer_type=_gather_type, gradient=_gather_grad,
    doc=_GATHER_DOC))
register(OpDef(
    "_backward__contrib_sparse_gather", inputs=("ograd", "indices", "data_shape"),
    params=Params(**_geom_fields()),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _gather_bwd_kernel),),
    infer_shape=rules.shape_of_input(2), infer_type=rules.type_of_input((2, 0)),
    doc="Scatter-add of block gradients into zeros shaped like data."))


# --------------------------------------------------------------------------- scatter
_SCATTER = Params(**_geom_fields(
    add=Field("bool", doc="add the blocks to base instead of overwriting"),
    atomic=Field("bool", False, doc="accepted for SBNet compatibility; every scatter is "
                 "race-free and overlapping adds are always summed correctly")))


def _scatter_shape(a, ins, outs):
    blk, idx, base = ins
    if base is not None:
        if len(base) != 4:
            raise ShapeError(f"sparse_scatter: base must be 4-D, got {base}")
        rules.set_shape(outs, 0, base, "output")
    elif outs[0] is not None:
        rules.set_shape(ins, 2, outs[0])
        base = ins[2]
    if idx is not None and idx[0] is not None:
        if len(idx) != 2 or idx[1] not in (None, 3):
            raise ShapeError(f"sparse_scatter: indices must be (M, 3), got {idx}")
        if base is not None and _channels(base, a.layout) is not None:
            rules.set_shape(ins, 0, _block_shape(a, idx[0], _channels(base, a.layout)))
    if blk is not None and blk[0] is not None:
        rules.set_shape(ins, 1, (blk[0], 3))
    return ins, outs


def _scatter_type(a, ins, outs):
    if ins[1] is None:
        rules.set_type(ins, 1, _I32)
    cur = next((t for t in (ins[2], ins[0], outs[0]) if t is not None), None)
    if cur is not None:
        for i in (0, 2):
            rules.set_type(ins, i, cur)
        rules.set_type(outs, 0, cur, "output")
        _check_float(ins, 2, "sparse_scatter")
    return ins, outs


def _valid_blocks(blocks, raw_idx):
    idx, valid = _indices(raw_idx)
    blocks = np.asarray(blocks)
    if valid is not None:
        idx, blocks = idx[valid], blocks[valid]
    return blocks, idx


# executions of sparse_scatter_var that wrote into base / into a copy (tests, reports)
scatter_var_stats = {"inplace": 0, "copied": 0}


def _scatter_into(a, xs, y):
    blocks, idx = _valid_blocks(xs[0], xs[1])
    return (kbs.sparse_scatter_inplace(blocks.astype(y.dtype, copy=False), idx, y, a.bsize,
                                       a.bstride, a.boffset, a.add, a.transpose, a.layout),)


def _scatter_kernel(a, xs, out=None):
    """Copy of base with the blocks scattered; writes into ``out`` when the executor gives one."""
    base = _float_data(xs[2], "sparse_scatter")
    if out is None:
        y = base.copy()
    else:
        y = out[0]
        np.copyto(y, base)
    return _scatter_into(a, xs, y)


def _scatter_var_kernel(a, xs, out=None):
    """Scatter into base itself: imperatively always, in a graph when the executor's
    memory plan hands over base's buffer as the output (base is read by no later step)."""
    base = _float_data(xs[2], "sparse_scatter_var")
    y = base if out is None else out[0]
    if y is base or (y.shape == base.shape and y.__array_interface__["data"][0]
                     == base.__array_interface__["data"][0]):
        if not base.flags.writeable:
            raise ShapeError("sparse_scatter_var: base is read-only")
        scatter_var_stats["inplace"] += 1
        return _scatter_into(a, xs, base)
    scatter_var_stats["copied"] += 1
    np.copyto(y, base)
    return _scatter_into(a, xs, y)


def _scatter_grad(node, og):
    p = node.params
    if p.add:
        dblocks = bw("_contrib_sparse_gather", [og[0], node.inputs[1]], node, "data_grad",
                     **_geom_kw(node))
        dbase = og[0]
    else:
        dblocks = bw("_backward__contrib_sparse_scatter_data", [og[0], node.inputs[1]], node,
                     "data_grad", **_geom_kw(node))
        dbase = bw("_backward__contrib_sparse_scatter_base", [og[0], node.inputs[1]], node,
                   "base_grad", **_geom_kw(node))
    return [dblocks, None, dbase]


def _scatter_base_kernel(a, xs):
    g = np.asarray(xs[0])
    idx, valid = _indices(xs[1])
    if valid is not None:
        idx = idx[valid]
    return (kbs.scatter_backward(g, idx, a.bsize, a.bstride, a.boffset, False, a.transpose,
                                 a.layout)[1],)


def _scatter_data_shape(a, ins, outs):
    g, idx = ins
    if g is not None and idx is not None and idx[0] is not None:
        c = _channels(g, a.layout)
        if c is not None:
            rules.set_shape(outs, 0, _block_shape(a, idx[0], c), "output")
    return ins, outs


def _scatter_data_kernel(a, xs):
    """Gradient of write-mode scatter w.r.t. the blocks: a pixel's gradient goes to the
    block whose value the forward kept there (the last valid one in index order)."""
    g = np.asarray(xs[0])
    idx, valid = _indices(xs[1])
    vidx = idx if valid is None else idx[valid]
    geom = (a.bsize, a.bstride, a.boffset, a.transpose, a.layout)
    out = np.zeros(_block_shape(a, idx.shape[0], _channels(g.shape, a.layout)), g.dtype)
    if vidx.shape[0] == 0:
        return (out,)
    # owner map: scatter each block's number (1-based, exact in float64) with the forward's
    # own write rule, read it back per block; a block owns the pixels that kept its number
    n, h, w = (g.shape[0], g.shape[2], g.shape[3]) if a.layout == "NCHW" else g.shape[:3]
    owner = np.zeros((n, 1, h, w) if a.layout == "NCHW" else (n, h, w, 1), np.float64)
    ids = np.arange(1, vidx.shape[0] + 1, dtype=np.float64).reshape(-1, 1, 1, 1)
    one = np.ascontiguousarray(np.broadcast_to(ids, _block_shape(a, vidx.shape[0], 1)))
    kbs.sparse_scatter_inplace(one, vidx, owner, a.bsize, a.bstride, a.boffset, False,
                               a.transpose, a.layout)
    kept = kbs.sparse_gather(owner, vidx, *geom) == ids
    d = kbs.sparse_gather(g, vidx, *geom) * kept
    if valid is None:
        return (d.astype(g.dtype, copy=False),)
    out[valid] = d
    return (out,)


_SCATTER_DOC = """Write (``add=False``) or add (``add=True``) blocks into a copy of base
    (SBNet's sparse_scatter).

    Block m = (n, i, j) lands at ``base[n, h0:h0+bh, w0:w0+bw]``; parts outside the image are
    dropped.  Overlapping blocks: ``add=True`` sums them (always correct, whatever
    ``atomic``); ``add=False`` keeps the last block in index order (deterministic).

    Parameters
    ----------
    data : blocks [M,bh,bw,C] or [M,C,bh,bw] (``transpose``)
    indices : int32 (M, 3); rows with n < 0 are skipped
    base : NDArray or Symbol, float32/float64, NHWC (default) or NCHW (``layout``)
    bsize, bstride, boffset : (H, W) pairs (output-space values after a conv)
    add : bool
    atomic : bool, ignored
    transpose : bool, default False
    layout : {'NHWC', 'NCHW'}

    Gradients: blocks get ``sparse_gather`` of the output gradient in the same block
    layout (``transpose`` respected, unlike SBNet); base gets the output gradient
    (``add=True``) or the output gradient with every covered pixel zeroed (``add=False``).
    Indices get none.  With overlapping ``add=False`` blocks the gradient follows the
    forward: a pixel's gradient goes only to the block whose value was kept there (the
    last in index order), and base gets none where any block wrote (SBNet leaves this
    case undefined).
    """
register(OpDef(
    "_contrib_sparse_scatter", inputs=("data", "indices", "base"), params=_SCATTER,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _scatter_kernel, writes_out=True),),
    infer_shape=_scatter_shape, infer_type=_scatter_type, gradient=_scatter_grad,
    doc=_SCATTER_DOC))
register(OpDef(
    "_contrib_sparse_scatter_var", inputs=("data", "indices", "base"), params=_SCATTER,
    # output 0 may take base's buffer (MXNet's FInplaceOption)
    mutates=(2,), inplace=((2, 0),),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _scatter_var_kernel, writes_out=True),),
    infer_shape=_scatter_shape, infer_type=_scatter_type, gradient=_scatter_grad,
    doc=_SCATTER_DOC.replace("into a copy of base\n    (SBNet's sparse_scatter)",
                             "into base in place\n    (SBNet's sparse_scatter_var)") + """
    Imperatively the output *is* base (no copy; base is modified, like SBNet's
    ``tf.Variable``).  In a graph the op declares base mutated (``OpDef.mutates``) and
    shareable with its output (``OpDef.inplace``): the executor's memory plan hands it
    base's buffer when no later step (forward or backward) reads base, and a fresh buffer
    otherwise, so results always equal ``sparse_scatter`` and bound arguments are never
    modified.  The gradient of ``sparse_gather`` needs only the shape of its data, so the
    usual ``y = sparse_scatter_var(f(sparse_gather(h)), base=h)`` pattern stays in place
    in training too.  Unlike SBNet the op has a gradient (``sparse_scatter``'s).
    """))
register(OpDef(
    "_backward__contrib_sparse_scatter_data", inputs=("ograd", "indices"),
    params=Params(**_geom_fields()),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _scatter_data_kernel),),
    infer_shape=_scatter_data_shape, infer_type=rules.type_of_input(0),
    doc="Gradient of sparse_scatter(add=False) w.r.t. the blocks: each pixel's gradient "
        "to the block the forward kept there."))
register(OpDef(
    "_backward__contrib_sparse_scatter_base", inputs=("ograd", "indices"),
    params=Params(**_geom_fields()),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _scatter_base_kernel),),
    infer_shape=rules.shape_of_input(0), infer_type=rules.type_of_input(0),
    doc="Gradient of sparse_scatter(add=False) w.r.t. base: ograd with covered pixels zeroed."))
