"""SBNet block-sparse convolution that trains inside sparsym graphs.

Operators live in ``mx.nd.contrib`` / ``mx.sym.contrib`` (reduce_mask, sparse_gather,
sparse_scatter, sparse_scatter_var, SparseBlockConvolution, SparseBottleneck).  This
module adds SBNet's Python helpers:

- :func:`calc_block_params`, :func:`calc_block_params_res_block` (SBNet's formulas;
  ``cover_all=True`` by default, see below), :class:`BlockParams`;
- :func:`convert_mask_to_indices` (reduce_mask with a BlockParams);
- :func:`sparse_conv2d` (gather -> VALID Convolution -> scatter from the standalone ops);
- :func:`SparseBlockConvolution` and :func:`sparse_res_block_bottleneck` (the fused ops,
  for Symbols or NDArrays);
- switches of the density-aware dispatch and the block-size autotuner:
  :func:`set_dispatch`, :func:`set_autotune`, :func:`clear_cache`, :func:`cache_info`.

Example
-------
>>> import sparsym as mx
>>> from sparsym.contrib import sbnet
>>> bp = sbnet.calc_block_params((1, 5, 5, 1), (1, 3, 3, 1), (3, 3, 1, 1), (1, 1, 1, 1), 'SAME',
...                              cover_all=False)
>>> bp.bstrides, bp.boffset, bp.bcount, bp.bsize_out
((1, 1), (-1, -1), (5, 5), (1, 1))
"""
from __future__ import annotations

from typing import NamedTuple

from ...base import ShapeError
from ...kernels import block_sparse as _kbs
from ...kernels.block_sparse import BlockParams
from ...kernels.sbnet.tuning import (
    autotune_enabled,
    cache_info,
    clear_cache,
    dispatch_enabled,
    set_autotune,
    set_dispatch,
)

__all__ = ["BlockParams", "calc_block_params", "calc_block_params_res_block", "MaskIndices",
           "convert_mask_to_indices", "sparse_conv2d", "SparseBlockConvolution",
           "sparse_res_block_bottleneck", "set_dispatch", "set_autotune", "dispatch_enabled",
           "autotune_enabled", "clear_cache", "cache_info"]


def calc_block_params(in_size, bsize, ksize, strides, padding, cover_all=True):
    """Block geometry of a convolution (SBNet's ``calc_block_params``).

    Per spatial dimension: ``bstride = b - k + s``; SAME pads ``pad0 = floor(pad/2)`` in
    front; ``boffset = -pad0``; ``bcount = ceil((Hp - b + 1) / bstride)``;
    ``bsize_out = (b - k)/s + 1``.

    Parameters
    ----------
    in_size : (N, H, W, C)
    bsize : (bh, bw) or SBNet's [1, bh, bw, 1]
    ksize : (kh, kw) or SBNet's [kh, kw, Cin, Cout]
    strides : (sh, sw) or SBNet's [1, sh, sw, 1]
    padding : {'SAME', 'VALID'}
    cover_all : bool, default True
        SBNet extends the end padding by ``(b - H) mod bstride``, which ignores the SAME
        padding already added, so its grid can stop short of the last outputs (H=13, b=5,
        k=3, SAME: outputs 12 of 0..12 are never computed).  ``cover_all=True`` pads until
        ``Hp - b`` is a multiple of bstride instead, so every output is covered; this is
        what the layer helpers and fused ops use.  ``cover_all=False`` reproduces SBNet
        exactly (identical for VALID).

    Returns
    -------
    BlockParams
        (bsize, bsize_out, boffset, bcount, bstrides), each an (H, W) pair.

    Raises
    ------
    ShapeError
        ``(b - k) % s != 0``, a block smaller than the kernel, a block larger than the
        padded input, or a last block starting outside the input.
    """
    bp = _kbs.calc_block_params(in_size, bsize, ksize, strides, padding, cover_all)
    if cover_all:
        # cover_all grows the end padding to fit the grid; a block must still fit the
        # input plus its SAME/VALID padding (as SBNet requires)
        from ...kernels.sbnet.geometry import conv_geometry
        size = tuple(int(e) for e in in_size)[1:3]
        k = _kbs._pair(ksize, "ksize", "first")
        s = _kbs._pair(strides, "strides", "mid")
        geom = conv_geometry(size, k, s, padding=padding)
        for a in range(2):
            if bp.bsize[a] > geom.padded[a]:
                raise ShapeError(f"{'HW'[a]}: block size {bp.bsize[a]} is larger than the "
                                 f"padded input {geom.padded[a]}")
    return bp


def calc_block_params_res_block(in_size, bsize, ksize_list, strides, padding, cover_all=True):
    """calc_block_params for a conv stack with receptive field ``k = 1 + sum(k_i - 1)``
    (3 for a 1-3-1 bottleneck); see :func:`calc_block_params` for ``cover_all``."""
    ks = [_kbs._pair(k, "ksize", "first") for k in ksize_list]
    if not ks:
        raise ShapeError("ksize_list must not be empty")
    k = tuple(1 + sum(kk[a] - 1 for kk in ks) for a in range(2))
    return calc_block_params(in_size, bsize, k, strides, padding, cover_all)


class MaskIndices(NamedTuple):
    """reduce_mask outputs (SBNet's ReduceMask tuple)."""

    active_block_indices: object
    bin_counts: object


def _front(x):
    """mx.nd.contrib for NDArrays, mx.sym.contrib for Symbols."""
    from ...ndarray import contrib as ndc
    from ...symbol import Symbol
    from ...symbol import contrib as symc
    return symc if isinstance(x, Symbol) else ndc


def convert_mask_to_indices(mask, block_params, tol=0.0, avgpool=False, layout="NHWC"):
    """reduce_mask with the fields of a BlockParams (SBNet's convert_mask_to_indices_custom).

    Returns a :class:`MaskIndices` of (indices int32 [N*BCH*BCW, 3], count int32 [1]); the
    first ``count`` rows are the active blocks, the rest are -1 padding.
    """
    bp = block_params
    out = _front(mask).reduce_mask(mask, bsize=bp.bsize, bstride=bp.bstrides,
                                   boffset=bp.boffset, bcount=bp.bcount, tol=tol,
                                   avgpool=avgpool, layout=layout)
    return MaskIndices(out[0], out[1])


def sparse_conv2d(data, weight, indices, block_params, strides=(1, 1), padding="SAME",
                  bias=None, base=None, layout="NHWC", num_filter=None, name=None):
    """SBNet's sparse conv from the standalone ops: gather -> VALID Convolution -> scatter.

    The blocks are gathered transposed ([M,C,bh,bw]), convolved with ``weight``
    (F, C, kh, kw) without padding, and written (``add=False``) into ``base`` with the
    output-space block parameters (``bsize = bstride = bsize_out``, offset 0), which avoids
    SBNet's stride > 1 ``use_var`` bug and its Cin == Cout restriction (#23).

    Parameters
    ----------
    data : NDArray or Symbol, NHWC (default) or NCHW
    weight : NDArray or Symbol, (F, C, kh, kw)
    indices : (M, 3) block indices, e.g. ``convert_mask_to_indices(...).active_block_indices``
    block_params : BlockParams from :func:`calc_block_params` with the same strides
    padding : {'SAME', 'VALID'}, the padding block_params were computed for (sets the
        output size of the default base)
    bias : optional (F,)
    base : output base; default zeros of the conv output shape (NDArrays only)
    num_filter : F; read from ``weight`` for NDArrays, required for Symbols
    """
    from ... import ndarray as nd
    from ... import symbol as sym
    bp = block_params
    is_sym = isinstance(data, sym.Symbol)
    front = _front(data)
    if num_filter is None:
        if is_sym:
            raise ValueError("sparse_conv2d on Symbols needs num_filter")
        num_filter = weight.shape[0]
    kernel = tuple(bp.bsize[a] - (bp.bsize_out[a] - 1) * strides[a] for a in range(2))
    blocks = front.sparse_gather(data, indices, bsize=bp.bsize, bstride=bp.bstrides,
                                 boffset=bp.boffset, transpose=True, layout=layout)
    kw = dict(kernel=kernel, stride=tuple(strides), num_filter=num_filter,
              no_bias=bias is None)
    if is_sym and name is not None:
        kw["name"] = f"{name}_conv"
    conv = sym.Convolution if is_sym else nd.Convolution
    out = conv(*([blocks, weight] + ([bias] if bias is not None else [])), **kw)
    if base is None:
        if is_sym:
            raise ValueError("sparse_conv2d on Symbols needs a base Symbol of the output shape")
        from ...kernels.sbnet.geometry import conv_geometry
        n = data.shape[0]
        hw = data.shape[1:3] if layout == "NHWC" else data.shape[2:4]
        ho, wo = conv_geometry(hw, kernel, strides, padding=padding).out
        base = nd.zeros((n, ho, wo, num_filter) if layout == "NHWC" else
                        (n, num_filter, ho, wo), dtype=data.dtype)
    return front.sparse_scatter(out, indices, base, bsize=bp.bsize_out, bstride=bp.bsize_out,
                                boffset=(0, 0), add=False, transpose=True, layout=layout)


def SparseBlockConvolution(data, mask, num_filter, kernel, stride=(1, 1), pad=(0, 0),
                           padding=None, no_bias=False, layout="NCHW", bsize=None, tol=0.0,
                           weight=None, bias=None, name=None, **kwargs):
    """Fused block-sparse convolution on Symbols or NDArrays (``contrib.SparseBlockConvolution``).

    Missing ``weight`` / ``bias`` Symbols are created as ``<name>_weight`` / ``<name>_bias``
    variables, as for Convolution.  Extra keyword arguments (``dispatch``, ``autotune``,
    ``attr``) pass through.
    """
    front = _front(data)
    ins = {"data": data, "mask": mask}
    if weight is not None:
        ins["weight"] = weight
    if bias is not None and not no_bias:
        ins["bias"] = bias
    kw = dict(num_filter=num_filter, kernel=kernel, stride=stride, pad=pad, padding=padding,
              no_bias=no_bias, layout=layout, bsize=bsize, tol=tol, **kwargs)
    if name is not None:
        kw["name"] = name
    return front.SparseBlockConvolution(**ins, **kw)


def sparse_res_block_bottleneck(data, mask, num_filter, layout="NCHW", bsize=None, tol=0.0,
                                name=None, **kwargs):
    """Sparse pre-activation bottleneck block ``y = x + F(x)`` (``contrib.SparseBottleneck``).

    One gather per active tile, BN-ReLU-conv x3 (1x1 C->K, 3x3 K->K, 1x1 K->C) inside it,
    one scatter-add onto ``data``.  For Symbols, parameters are created as variables named
    ``<name>_bn1_gamma``, ``<name>_conv1_weight``, ... and auxiliary states
    ``<name>_bn1_moving_mean``, ...; ``kwargs`` pass through (eps, momentum, fix_gamma,
    use_global_stats, dispatch, autotune, or the parameter arrays for NDArrays).
    """
    front = _front(data)
    kw = dict(num_filter=num_filter, layout=layout, bsize=bsize, tol=tol, **kwargs)
    if name is not None:
        kw["name"] = name
    return front.SparseBottleneck(data=data, mask=mask, **kw)
