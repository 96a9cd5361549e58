"""SBNet block-sparse operators (``mx.nd.contrib`` / ``mx.sym.contrib``), with gradients.

- ``reduce_mask``: active blocks of a mask, SBNet's fixed-size form (valid prefix + count).
- ``sparse_gather`` / ``sparse_scatter`` / ``sparse_scatter_var``: block copies and their
  adjoints (gather <-> scatter-add); ``sparse_scatter_var`` writes into ``base`` in place
  (``OpDef.mutates``) and still has a gradient.
- ``SparseBlockConvolution`` and ``SparseBottleneck``: fused gather -> conv -> scatter ops
  with density-aware dispatch and block-size autotuning (sparsym/contrib/sbnet).

Block geometry follows SBNet (shared/reference/sbnet.md): block (n, i, j) starts at pixel
``(boffset[0] + i*bstride[0], boffset[1] + j*bstride[1])`` and spans ``bsize``; blocks are
[M,bh,bw,C], or [M,C,bh,bw] with ``transpose=True``, whatever the dense ``layout``.
Index rows whose batch entry is negative are padding: they gather zeros and scatter
nothing (``reduce_mask`` pads its fixed-size output with -1 rows).
"""
from __future__ import annotations

import numpy as np

from ..base import DTypeError, ShapeError
from ..contrib.sbnet import fused
from ..kernels import block_sparse as kbs
from . import rules
from .grad import bw, kept, multi_bw
from .params import Field, Params
from .registry import Dispatch, OpDef, register

D = "default"
_I32 = np.dtype(np.int32)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _geom_fields(**extra):
    f = dict(
        bsize=Field("shape", doc="block size (bh, bw)"),
        bstride=Field("shape", doc="block stride (sh, sw)"),
        boffset=Field("shape", (0, 0), doc="offset of block (0, 0), usually -padding"),
        transpose=Field("bool", False, doc="blocks laid out [M,C,bh,bw] instead of [M,bh,bw,C]"),
        layout=Field("str", "NHWC", choices=("NHWC", "NCHW"), doc="dense data layout"))
    f.update(extra)
    return f


def _pair(v, name):
    v = tuple(v)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise ShapeError(f"{name}={v} must be an (H, W) pair")
    return v


def _channels(shape, layout):
    return shape[3] if layout == "NHWC" else shape[1]


def _block_shape(a, m, c):
    bh, bw_ = _pair(a.bsize, "bsize")
    return (m, c, bh, bw_) if a.transpose else (m, bh, bw_, c)


def _indices(idx):
    """int32 [M,3] indices and the mask of valid rows (None when every row is valid)."""
    idx = np.asarray(idx)
    if idx.ndim != 2 or idx.shape[1] != 3:
        raise ShapeError(f"indices must have shape (M, 3), got {idx.shape}")
    idx = np.ascontiguousarray(idx, dtype=np.int32)
    valid = idx[:, 0] >= 0
    return idx, (None if valid.all() else valid)


def _float_data(x, where):
    x = np.asarray(x)
    if x.dtype not in _FLOATS:
        raise DTypeError(f"{where}: data must be float32 or float64, got {x.dtype}")
    return x


def _check_float(types, i, where):
    if types[i] is not None and np.dtype(types[i]) not in _FLOATS:
        raise DTypeError(f"{where}: expected float32 or float64, got {np.dtype(types[i])}")


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
    from ..contrib.sbnet.geometry import binary_mask, block_flags
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
    dispatch=(Dispatch((D,), (D, D), _rm_kernel),),
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


def _like_input(n):
    def rule(a, ins, outs):
        if ins[n] is not None:
            rules.set_shape(outs, 0, ins[n], "output")
        return ins, outs
    return rule


def _type_like_input(n):
    def rule(a, ins, outs):
        if ins[n] is not None:
            rules.set_type(outs, 0, ins[n], "output")
        elif ins[0] is not None:
            rules.set_type(outs, 0, ins[0], "output")
        return ins, outs
    return rule


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
    dispatch=(Dispatch((D, D), (D,), _gather_kernel),),
    infer_shape=_gather_shape, infer_type=_gather_type, gradient=_gather_grad,
    doc=_GATHER_DOC))
register(OpDef(
    "_backward__contrib_sparse_gather", inputs=("ograd", "indices", "data_shape"),
    params=Params(**_geom_fields()), dispatch=(Dispatch((D, D, D), (D,), _gather_bwd_kernel),),
    infer_shape=_like_input(2), infer_type=_type_like_input(2),
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
    dblocks = bw("_contrib_sparse_gather", [og[0], node.inputs[1]], node, "data_grad",
                 **_geom_kw(node))
    if p.add:
        dbase = og[0]
    else:
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
    Indices get none.  With overlapping ``add=False`` blocks the gradient treats every
    block as written (SBNet leaves this case undefined).
    """
register(OpDef(
    "_contrib_sparse_scatter", inputs=("data", "indices", "base"), params=_SCATTER,
    dispatch=(Dispatch((D, D, D), (D,), _scatter_kernel, writes_out=True),),
    infer_shape=_scatter_shape, infer_type=_scatter_type, gradient=_scatter_grad,
    doc=_SCATTER_DOC))
register(OpDef(
    "_contrib_sparse_scatter_var", inputs=("data", "indices", "base"), params=_SCATTER,
    # output 0 may take base's buffer (MXNet's FInplaceOption)
    mutates=(2,), inplace=((2, 0),),
    dispatch=(Dispatch((D, D, D), (D,), _scatter_var_kernel, writes_out=True),),
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
    "_backward__contrib_sparse_scatter_base", inputs=("ograd", "indices"),
    params=Params(**_geom_fields()),
    dispatch=(Dispatch((D, D), (D,), _scatter_base_kernel),),
    infer_shape=_like_input(0), infer_type=_type_like_input(0),
    doc="Gradient of sparse_scatter(add=False) w.r.t. base: ograd with covered pixels zeroed."))


# --------------------------------------------------------------------------- fused conv
_FUSED_COMMON = dict(
    layout=Field("str", "NCHW", choices=("NCHW", "NHWC"),
                 doc="data layout; weights (F, C, kh, kw) for NCHW, (F, kh, kw, C) for NHWC"),
    bsize=Field("shape_or_none", None, doc="SBNet input block size (bh, bw); (b - k) must "
                "be divisible by the stride; None: autotuned (or 16x16 output tiles)"),
    tol=Field("float", 0.0, doc="an output is active when its receptive field holds a mask "
              "value > tol"),
    dispatch=Field("str", "auto", choices=("auto", "sparse", "dense"),
                   doc="'auto': dense above the measured break-even block density"),
    autotune=Field("bool", True, doc="pick the block size by timing (when bsize is None)"))
_SBCONV = Params(
    kernel=Field("shape", doc="kernel size (kh, kw)"),
    num_filter=Field("int", doc="number of output channels"),
    stride=Field("shape", (1, 1), doc="stride"),
    pad=Field("shape", (0, 0), doc="symmetric zero padding (MXNet's Convolution)"),
    padding=Field("str_or_none", None, choices=(None, "SAME", "VALID"),
                  doc="TF/SBNet padding; overrides pad when given"),
    no_bias=Field("bool", False, doc="omit the bias"),
    **_FUSED_COMMON)


def _sbconv_inputs(a):
    return ("data", "mask", "weight") + (() if a.no_bias else ("bias",))


def _sbconv_shape(a, ins, outs):
    from ..contrib.sbnet.geometry import conv_geometry
    x = ins[0]
    if x is None or any(d is None for d in x):
        return ins, outs
    if len(x) != 4:
        raise ShapeError(f"SparseBlockConvolution: data must be 4-D, got {x}")
    n, c, h, w = fused.spatial(x, a.layout)
    kh, kw = _pair(a.kernel, "kernel")
    f = a.num_filter
    nhwc = a.layout == "NHWC"
    rules.set_shape(ins, 2, (f, kh, kw, c) if nhwc else (f, c, kh, kw))
    if not a.no_bias:
        rules.set_shape(ins, 3, (f,))
    if ins[1] is None:
        rules.set_shape(ins, 1, (n, h, w, 1) if nhwc else (n, 1, h, w))
    elif len(ins[1]) == 3:
        rules.set_shape(ins, 1, (n, h, w))
    else:
        rules.set_shape(ins, 1, (n, h, w, 1) if nhwc else (n, 1, h, w))
    g = conv_geometry((h, w), (kh, kw), _pair(a.stride, "stride"), _pair(a.pad, "pad"),
                      a.padding)
    rules.set_shape(outs, 0, (n,) + g.out + (f,) if nhwc else (n, f) + g.out, "output")
    return ins, outs


def _data_type(a, ins, outs):
    """Data, params and outputs share the data dtype (float32/float64); mask is free."""
    cur = next((t for i, t in enumerate(ins) if t is not None and i != 1), None)
    if cur is None:
        cur = next((t for t in outs if t is not None), None)
    if cur is None:
        return ins, outs
    for i in range(len(ins)):
        if i == 1:
            if ins[1] is None:
                ins[1] = cur
            continue
        rules.set_type(ins, i, cur)
    _check_float(ins, 0, "block-sparse op")
    for i in range(len(outs)):
        rules.set_type(outs, i, cur, "output")
    return ins, outs


def _sbconv_kernel(a, xs):
    return (fused.conv_forward(a, xs[0], xs[1], xs[2], None if a.no_bias else xs[3]),)


def _sbconv_grad(node, og):
    n = 2 if node.params.no_bias else 3
    g = multi_bw("_backward__contrib_SparseBlockConvolution",
                 [og[0]] + list(node.inputs[:3]), node, "backward", n, **kept(node))
    return [g[0], None] + g[1:]


def _sbconv_bwd_kernel(a, xs):
    dy, x, mask, w = xs
    dx, dw, db = fused.conv_backward(a, dy, x, mask, w, not a.no_bias)
    return (dx, dw) if a.no_bias else (dx, dw, db)


def _sbconv_bias_shape(a, ins, outs):
    if not a.no_bias and ins[3] is not None:
        rules.set_shape(outs, 2, (ins[3][0],), "output")


# backward inputs (ograd, data, mask, weight): gradients of data and weight, then the bias's
_sbconv_bwd_shape = rules.grads_like_inputs(1, sources=(0, 2), then=_sbconv_bias_shape)
_sbconv_bwd_type = rules.grads_like_inputs_type(1, sources=(0, 2))


register(OpDef(
    "_contrib_SparseBlockConvolution", inputs=_sbconv_inputs, params=_SBCONV,
    dispatch=(Dispatch((D, "..."), (D,), _sbconv_kernel),),
    infer_shape=_sbconv_shape, infer_type=_data_type, gradient=_sbconv_grad,
    doc="""Block-sparse 2-D convolution: gather -> conv -> scatter in one op (SBNet).

    ``y = (conv(data, weight) + bias) * m_out`` where ``m_out`` is 1 at outputs whose
    receptive field holds a ``mask`` value > ``tol`` and 0 elsewhere.  Only the output
    tiles containing an active output are computed (im2col straight from the active
    tiles' input blocks, one GEMM per chunk of tiles, masked scatter).  The result does not
    depend on the block size or on the sparse/dense choice.

    Density-aware dispatch (``dispatch='auto'``, see sparsym.contrib.sbnet.tuning)
    measures once per shape the block density above which the dense convolution is
    faster and runs dense there; the block-size autotuner (``autotune``, when ``bsize``
    is None) times candidate blocks once per shape and density range.  Both are cached in
    memory and can be turned off (``sparsym.contrib.sbnet.set_dispatch(False)``,
    ``set_autotune(False)``, or SPARSYM_SBNET_DISPATCH=0 / SPARSYM_SBNET_AUTOTUNE=0).

    Parameters
    ----------
    data : NDArray or Symbol, float32/float64, NCHW (default) or NHWC (``layout``)
    mask : (N,H,W), (N,1,H,W) [NCHW] or (N,H,W,1) [NHWC], at the data's resolution;
        no gradient flows to it
    weight : (num_filter, C, kh, kw) [NCHW] or (num_filter, kh, kw, C) [NHWC]
    bias : (num_filter,), absent with no_bias
    kernel, num_filter, stride, pad : as Convolution (no dilation or groups)
    padding : {None, 'SAME', 'VALID'}, TF/SBNet padding overriding ``pad``
    bsize : SBNet input block size or None
    tol : float, default 0
    dispatch : {'auto', 'sparse', 'dense'}
    autotune : bool, default True

    Examples
    --------
    >>> import sparsym as mx, numpy as np
    >>> x = mx.nd.ones((1, 2, 8, 8)); w = mx.nd.ones((3, 2, 3, 3))
    >>> m = mx.nd.zeros((1, 8, 8)); m[0, 0, 0] = 1
    >>> y = mx.nd.contrib.SparseBlockConvolution(x, m, w, kernel=(3, 3), num_filter=3,
    ...                                         pad=(1, 1), no_bias=True)
    >>> y.asnumpy()[0, 0, :2, :2]
    array([[ 8., 12.],
           [12., 18.]], dtype=float32)
    """))
register(OpDef(
    "_backward__contrib_SparseBlockConvolution", inputs=("ograd", "data", "mask", "weight"),
    params=_SBCONV, num_outputs=lambda a: 2 if a.no_bias else 3,
    dispatch=(Dispatch((D, "..."), (D,), _sbconv_bwd_kernel),),
    infer_shape=_sbconv_bwd_shape, infer_type=_sbconv_bwd_type))


# --------------------------------------------------------------------------- bottleneck
_RES_PARAMS = ("bn1_gamma", "bn1_beta", "conv1_weight", "bn2_gamma", "bn2_beta",
               "conv2_weight", "bn3_gamma", "bn3_beta", "conv3_weight")
_RES_AUX = ("bn1_moving_mean", "bn1_moving_var", "bn2_moving_mean", "bn2_moving_var",
            "bn3_moving_mean", "bn3_moving_var")
_RES = Params(
    num_filter=Field("int", doc="bottleneck width K (C -> K -> K -> C)"),
    eps=Field("float", 1e-3, doc="BatchNorm eps"),
    momentum=Field("float", 0.9, doc="BatchNorm moving-average momentum"),
    fix_gamma=Field("bool", False, doc="treat every gamma as 1"),
    use_global_stats=Field("bool", False, doc="use the moving statistics in training too"),
    **_FUSED_COMMON)


def _res_shape(a, ins, outs):
    x = ins[0]
    if x is None or any(d is None for d in x):
        if outs[0] is not None:
            rules.set_shape(ins, 0, outs[0])
        return ins, outs
    if len(x) != 4:
        raise ShapeError(f"SparseBottleneck: data must be 4-D, got {x}")
    n, c, h, w = fused.spatial(x, a.layout)
    k = a.num_filter
    nhwc = a.layout == "NHWC"
    ws = ((k, 1, 1, c), (k, 3, 3, k), (c, 1, 1, k)) if nhwc else \
        ((k, c, 1, 1), (k, k, 3, 3), (c, k, 1, 1))
    for i, s in enumerate(((c,), (c,), ws[0], (k,), (k,), ws[1], (k,), (k,), ws[2])):
        rules.set_shape(ins, 2 + i, s)
    for i, s in enumerate(((c,), (c,), (k,), (k,), (k,), (k,))):
        rules.set_shape(ins, 11 + i, s)
    if ins[1] is None:
        rules.set_shape(ins, 1, (n, h, w, 1) if nhwc else (n, 1, h, w))
    rules.set_shape(outs, 0, x, "output")
    return ins, outs


def _res_grad(node, og):
    g = multi_bw("_backward__contrib_SparseBottleneck", [og[0]] + list(node.inputs), node,
                 "backward", 10, **kept(node))
    return [g[0], None] + g[1:] + [None] * len(_RES_AUX)


# gradients of data and the nine parameters (not of the mask or the moving statistics)
_RES_GRAD_OF = (0,) + tuple(range(2, 11))


def _res_kernel(a, xs, out=None):
    """Out-capable: y goes to the executor's buffer, which may be data's (in place)."""
    return (fused.res_forward(a, xs, out),)



register(OpDef(
    "_contrib_SparseBottleneck", inputs=("data", "mask") + _RES_PARAMS + _RES_AUX,
    aux=_RES_AUX, mutates=tuple(range(11, 17)), needs_is_train=True, params=_RES,
    inplace=((0, 0),), dispatch=(Dispatch((D, "..."), (D,), _res_kernel, writes_out=True),),
    infer_shape=_res_shape, infer_type=_data_type, gradient=_res_grad,
    doc="""Sparse pre-activation bottleneck residual block (SBNet's sparse_res_block_bottleneck).

    ``y = data + F(data) * m_out`` with ``F = conv1x1 . relu . bn3 . conv3x3 . relu . bn2 .
    conv1x1 . relu . bn1`` (C -> K -> K -> C channels, stride 1, 'SAME', no conv biases),
    computed only on the output tiles whose 3x3 receptive field holds a mask value > tol:
    one gather of each tile's (bo+2)^2 window, the three BN-ReLU-convs inside it (VALID
    3x3, zero outside the image as the dense padding), one scatter-add onto data.

    The output may take data's buffer (``OpDef.inplace``): in a graph where nothing reads
    data afterwards (inference chains of blocks), the residual update is written in
    place, SBNet's ``use_var`` without its training restriction.

    Training-mode batch statistics are pixel-exact: BN1/BN2 over every pixel feeding an
    active output (each once), BN3 over the active outputs; an all-ones mask gives the
    dense block.  Moving statistics (auxiliary states) are updated in place as BatchNorm.
    Dispatch and autotuning as SparseBlockConvolution.

    Parameters
    ----------
    data : float32/float64, NCHW (default) or NHWC
    mask : (N,H,W) or 4-D with one channel
    bn{1,2,3}_gamma, bn{1,2,3}_beta : (C,), (K,), (K,)
    conv1_weight, conv2_weight, conv3_weight : (K,C,1,1), (K,K,3,3), (C,K,1,1) for NCHW;
        (K,1,1,C), (K,3,3,K), (C,1,1,K) for NHWC
    bn{1,2,3}_moving_mean, bn{1,2,3}_moving_var : auxiliary states
    num_filter : K
    eps, momentum, fix_gamma (default False), use_global_stats : as BatchNorm
    bsize : input block size (tile + 2) or None; tol, dispatch, autotune : as
        SparseBlockConvolution
    """))
register(OpDef(
    "_backward__contrib_SparseBottleneck", inputs=("ograd", "data", "mask") + _RES_PARAMS
    + _RES_AUX, params=_RES, num_outputs=10, needs_is_train=True,
    dispatch=(Dispatch((D, "..."), (D,), lambda a, xs: fused.res_backward(a, xs[0], xs[1:])),),
    infer_shape=rules.grads_like_inputs(1, sources=_RES_GRAD_OF),
    infer_type=rules.grads_like_inputs_type(1, sources=_RES_GRAD_OF)))
