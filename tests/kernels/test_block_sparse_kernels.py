"""SBNet block-sparse kernels vs NumPy oracles and the dense convolution."""
import itertools

import numpy as np
import pytest

from sparsym.base import ShapeError
from sparsym.kernels.block_sparse import (
    BlockParams,
    calc_block_params,
    calc_block_params_res_block,
    gather_backward,
    reduce_mask,
    scatter_backward,
    sparse_gather,
    sparse_scatter,
    sparse_scatter_inplace,
)
from sparsym.kernels.conv import conv_forward

RNG = np.random.default_rng(1)


# ----------------------------------------------------------------- NumPy oracles
def oracle_gather(x, idx, bsize, bstride, boffset):
    n, h, w, c = x.shape
    out = np.zeros((len(idx),) + tuple(bsize) + (c,), dtype=x.dtype)
    for m, (b, i, j) in enumerate(idx):
        h0, w0 = boffset[0] + i * bstride[0], boffset[1] + j * bstride[1]
        for y, xx in itertools.product(range(bsize[0]), range(bsize[1])):
            if 0 <= h0 + y < h and 0 <= w0 + xx < w:
                out[m, y, xx] = x[b, h0 + y, w0 + xx]
    return out


def oracle_scatter(blocks, idx, base, bsize, bstride, boffset, add):
    y = base.copy()
    n, h, w, c = y.shape
    for m, (b, i, j) in enumerate(idx):
        h0, w0 = boffset[0] + i * bstride[0], boffset[1] + j * bstride[1]
        for yy, xx in itertools.product(range(bsize[0]), range(bsize[1])):
            if 0 <= h0 + yy < h and 0 <= w0 + xx < w:
                if add:
                    y[b, h0 + yy, w0 + xx] += blocks[m, yy, xx]
                else:
                    y[b, h0 + yy, w0 + xx] = blocks[m, yy, xx]
    return y


def oracle_reduce_mask(mask, bp, tol, avgpool):
    (bh, bw), (sh, sw), (oh, ow), (ch, cw) = bp.bsize, bp.bstrides, bp.boffset, bp.bcount
    rows = []
    for n, i, j in itertools.product(range(mask.shape[0]), range(ch), range(cw)):
        h0, w0 = oh + i * sh, ow + j * sw
        win = mask[n, max(h0, 0):max(h0 + bh, 0), max(w0, 0):max(w0 + bw, 0)]
        if avgpool:
            on = win.sum() / (bh * bw) > tol
        else:
            on = win.size > 0 and win.max() > tol
        if on:
            rows.append((n, i, j))
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


def tf_pads(size, k, s, padding):
    if padding == "VALID":
        return 0, 0
    out = -(-size // s)
    pad = max((out - 1) * s + k - size, 0)
    return pad // 2, pad - pad // 2


def dense_conv_nhwc(x, w, s, padding):
    """TF-style SAME/VALID dense conv via conv.py; x NHWC, w OIHW -> y NHWC."""
    kh, kw = w.shape[2:]
    ph, pw = tf_pads(x.shape[1], kh, s[0], padding), tf_pads(x.shape[2], kw, s[1], padding)
    xp = np.pad(x, ((0, 0), ph, pw, (0, 0)))
    y = conv_forward(xp.transpose(0, 3, 1, 2), w, None, s, (0, 0), (1, 1), 1)
    return y.transpose(0, 2, 3, 1)


# ----------------------------------------------------------------- block params
def test_calc_block_params_reference_example():
    bp = calc_block_params((1, 5, 5, 1), (3, 3), (3, 3), (1, 1), "SAME")
    assert bp == BlockParams((3, 3), (1, 1), (-1, -1), (5, 5), (1, 1))
    # SBNet 4-vector forms are accepted too
    bp4 = calc_block_params([1, 5, 5, 1], [1, 3, 3, 1], [3, 3, 8, 8], [1, 1, 1, 1], "SAME")
    assert bp4 == bp


def test_calc_block_params_formulas():
    bp = calc_block_params((2, 17, 23, 3), (7, 9), (3, 5), (2, 2), "SAME")
    # bstride = b - k + s, bsize_out = (b - k)/s + 1
    assert bp.bstrides == (6, 6) and bp.bsize_out == (3, 3)
    assert bp.boffset == (-1, -2)
    pad1h = 1 + (7 - 17) % 6
    assert bp.bcount == (-(-(17 + 1 + pad1h - 7 + 1) // 6), bp.bcount[1])
    bv = calc_block_params((1, 10, 10, 1), (4, 4), (3, 3), (1, 1), "VALID")
    assert bv.boffset == (0, 0) and bv.bstrides == (2, 2) and bv.bsize_out == (2, 2)


def test_calc_block_params_sbnet_border_gap():
    """SBNet's alignment ignores the SAME pad: the last output row is never covered."""
    bp = calc_block_params((1, 13, 13, 1), (5, 5), (3, 3), (1, 1), "SAME")
    assert bp.bcount == (4, 4) and bp.bcount[0] * bp.bsize_out[0] == 12  # of 13 outputs
    bc = calc_block_params((1, 13, 13, 1), (5, 5), (3, 3), (1, 1), "SAME", cover_all=True)
    assert bc.bcount == (5, 5) and bc.boffset == bp.boffset
    bv = calc_block_params((1, 13, 13, 1), (5, 5), (3, 3), (1, 1), "VALID")
    assert bv == calc_block_params((1, 13, 13, 1), (5, 5), (3, 3), (1, 1), "VALID", True)


def test_calc_block_params_errors():
    with pytest.raises(ShapeError, match="divisible"):
        calc_block_params((1, 16, 16, 1), (6, 6), (3, 3), (2, 2), "SAME")
    with pytest.raises(ValueError, match="larger than the padded input"):
        calc_block_params((1, 2, 2, 1), (9, 9), (5, 5), (1, 1), "VALID")
    with pytest.raises(ShapeError):
        calc_block_params((1, 8, 8, 1), (2, 2), (3, 3), (1, 1), "SAME")


def test_calc_block_params_res_block():
    bp = calc_block_params_res_block((1, 20, 20, 4), (8, 8), [(1, 1), (3, 3), (1, 1)], (1, 1),
                                     "SAME")
    assert bp == calc_block_params((1, 20, 20, 4), (8, 8), (3, 3), (1, 1), "SAME")
    bp2 = calc_block_params_res_block((1, 20, 20, 4), (9, 9), [3, 3], (1, 1), "VALID")
    assert bp2.bsize_out == (5, 5)


# ----------------------------------------------------------------- reduce_mask
@pytest.mark.parametrize("avgpool", [False, True])
@pytest.mark.parametrize("shape,b,k,s,padding", [
    ((2, 13, 11), (5, 5), (3, 3), (1, 1), "SAME"),
    ((3, 16, 9), (6, 4), (2, 2), (2, 2), "SAME"),
    ((1, 12, 13), (7, 5), (3, 1), (2, 2), "VALID"),
])
def test_reduce_mask_oracle(avgpool, shape, b, k, s, padding):
    mask = (RNG.random(shape) > 0.93).astype(np.float32) * RNG.random(shape).astype(np.float32)
    bp = calc_block_params(shape + (1,), b, k, s, padding)
    for tol in (0.0, 0.05, 0.3):
        got = reduce_mask(mask[..., None], bp.bsize, bp.bstrides, bp.boffset, bp.bcount, tol,
                          avgpool)
        assert got.dtype == np.int32 and got.shape[1] == 3
        np.testing.assert_array_equal(got, oracle_reduce_mask(mask, bp, tol, avgpool))
        assert np.array_equal(got, np.unique(got, axis=0))  # sorted + unique


def test_reduce_mask_empty_and_full():
    bp = calc_block_params((2, 10, 10, 1), (4, 4), (3, 3), (1, 1), "SAME")
    empty = reduce_mask(np.zeros((2, 10, 10)), bp.bsize, bp.bstrides, bp.boffset, bp.bcount, 0)
    assert empty.shape == (0, 3)  # SBNet would return a dummy (0, 0, 0) row
    full = reduce_mask(np.ones((2, 10, 10), bool), bp.bsize, bp.bstrides, bp.boffset,
                       bp.bcount, 0.5)
    assert len(full) == 2 * bp.bcount[0] * bp.bcount[1]
    mask = np.zeros((1, 10, 10))
    mask[0, 3, 3] = 1.0
    strict = reduce_mask(mask, bp.bsize, bp.bstrides, bp.boffset, bp.bcount, 1.0)
    assert strict.shape == (0, 3)  # comparison is strict


def test_reduce_mask_coverage_property():
    """Every output whose receptive field touches an active input lies in an active block."""
    x_shape = (2, 15, 14, 1)
    mask = (RNG.random(x_shape[:3]) > 0.97).astype(np.float64)
    for b, k, s in [((5, 5), (3, 3), (1, 1)), ((7, 6), (3, 2), (2, 2))]:
        bp = calc_block_params(x_shape, b, k, s, "SAME", cover_all=True)
        idx = reduce_mask(mask, bp.bsize, bp.bstrides, bp.boffset, bp.bcount, 0.0)
        ph = tf_pads(x_shape[1], k[0], s[0], "SAME")
        pw = tf_pads(x_shape[2], k[1], s[1], "SAME")
        needed = dense_conv_nhwc(mask[..., None], np.ones((1, 1) + k), s, "SAME")[..., 0] > 0
        assert ph[0] == -bp.boffset[0] and pw[0] == -bp.boffset[1]
        cov = sparse_scatter(np.ones((len(idx),) + bp.bsize_out + (1,)), idx,
                             np.zeros(needed.shape + (1,)), bp.bsize_out, bp.bsize_out, (0, 0),
                             False)[..., 0]
        assert np.all(cov[needed] == 1)


# ----------------------------------------------------------------- gather / scatter
GEOMS = [((4, 5), (3, 2), (-1, -2)), ((3, 3), (3, 3), (0, 0)), ((5, 4), (2, 3), (-2, 1))]


def rand_idx(n, ch, cw, keep=0.5, dup=False):
    rows = [(b, i, j) for b in range(n) for i in range(-1, ch + 1) for j in range(-1, cw + 1)]
    sel = np.array([r for r in rows if RNG.random() < keep], dtype=np.int32).reshape(-1, 3)
    if dup and len(sel):
        sel = np.concatenate([sel, sel[::-2]])
        sel = sel[RNG.permutation(len(sel))]
    return sel


@pytest.mark.parametrize("bsize,bstride,boffset", GEOMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gather_scatter_oracle(bsize, bstride, boffset, dtype):
    x = RNG.standard_normal((2, 9, 8, 3)).astype(dtype)
    idx = rand_idx(2, 4, 4)
    g = sparse_gather(x, idx, bsize, bstride, boffset)
    assert g.dtype == dtype
    np.testing.assert_array_equal(g, oracle_gather(x, idx, bsize, bstride, boffset))
    gt = sparse_gather(x, idx, bsize, bstride, boffset, transpose=True)
    np.testing.assert_array_equal(gt, g.transpose(0, 3, 1, 2))
    xc = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(sparse_gather(xc, idx, bsize, bstride, boffset,
                                                layout="NCHW"), g)
    np.testing.assert_array_equal(sparse_gather(xc, idx, bsize, bstride, boffset, True,
                                                "NCHW"), gt)
    base = RNG.standard_normal(x.shape).astype(dtype)
    blocks = RNG.standard_normal(g.shape).astype(dtype)
    for add in (False, True):
        ref = oracle_scatter(blocks, idx, base, bsize, bstride, boffset, add)
        y = sparse_scatter(blocks, idx, base, bsize, bstride, boffset, add)
        assert y.dtype == dtype and y is not base
        np.testing.assert_allclose(y, ref, rtol=1e-6)
        yt = sparse_scatter(blocks.transpose(0, 3, 1, 2), idx, base, bsize, bstride, boffset,
                            add, transpose=True)
        np.testing.assert_allclose(yt, ref, rtol=1e-6)
        for tr in (False, True):
            bl = blocks.transpose(0, 3, 1, 2) if tr else blocks
            yc = sparse_scatter(bl, idx, base.transpose(0, 3, 1, 2), bsize, bstride, boffset,
                                add, transpose=tr, layout="NCHW")
            np.testing.assert_allclose(yc, ref.transpose(0, 3, 1, 2), rtol=1e-6)
        b2 = base.copy()
        out = sparse_scatter_inplace(blocks, idx, b2, bsize, bstride, boffset, add)
        assert out is b2
        np.testing.assert_allclose(b2, ref, rtol=1e-6)


def test_scatter_overlap_and_duplicates_sequential():
    base = RNG.standard_normal((2, 10, 9, 5))
    idx = rand_idx(2, 5, 5, keep=0.7, dup=True)
    blocks = RNG.standard_normal((len(idx), 4, 4, 5))
    for bstride in [(2, 2), (4, 4)]:  # overlapping / disjoint grid (duplicates overlap anyway)
        for add in (True, False):
            ref = oracle_scatter(blocks, idx, base, (4, 4), bstride, (-1, -1), add)
            y = sparse_scatter(blocks, idx, base, (4, 4), bstride, (-1, -1), add)
            np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)


def test_empty_and_degenerate():
    x = RNG.standard_normal((1, 4, 4, 2))
    none = np.zeros((0, 3), np.int32)
    assert sparse_gather(x, none, (2, 2), (2, 2), (0, 0)).shape == (0, 2, 2, 2)
    y = sparse_scatter(np.zeros((0, 2, 2, 2)), none, x, (2, 2), (2, 2), (0, 0), False)
    np.testing.assert_array_equal(y, x)
    far = np.array([[0, 10, 10], [0, -5, 0]], np.int32)  # entirely outside: zeros / dropped
    assert not sparse_gather(x, far, (2, 2), (2, 2), (0, 0)).any()
    np.testing.assert_array_equal(
        sparse_scatter(np.ones((2, 2, 2, 2)), far, x, (2, 2), (2, 2), (0, 0), True), x)
    with pytest.raises(ShapeError):
        sparse_gather(x, np.array([[1, 0, 0]]), (2, 2), (2, 2), (0, 0))
    with pytest.raises(ShapeError):
        sparse_scatter(np.ones((1, 3, 2, 2)), np.array([[0, 0, 0]]), x, (2, 2), (2, 2), (0, 0),
                       False)


# ----------------------------------------------------------------- gradients
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_gather_adjoint_overlapping(transpose, layout):
    x = RNG.standard_normal((2, 11, 10, 3))
    if layout == "NCHW":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    idx = rand_idx(2, 6, 5, keep=0.6)
    geo = ((5, 4), (2, 2), (-2, -1))
    g = sparse_gather(x, idx, *geo, transpose=transpose, layout=layout)
    r = RNG.standard_normal(g.shape)
    dx = gather_backward(r, idx, x.shape, *geo, transpose=transpose, layout=layout)
    assert dx.shape == x.shape
    np.testing.assert_allclose((g * r).sum(), (x * dx).sum(), rtol=1e-12)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("add", [False, True])
def test_scatter_backward(transpose, add):
    base = RNG.standard_normal((2, 9, 9, 3))
    idx = rand_idx(2, 3, 3, keep=0.6)
    geo = ((3, 3), (3, 3), (0, 0)) if not add else ((4, 4), (3, 3), (-1, 0))
    shape = (len(idx), 3) + geo[0] if transpose else (len(idx),) + geo[0] + (3,)
    blocks = RNG.standard_normal(shape)
    dy = RNG.standard_normal(base.shape)
    db, dbase = scatter_backward(dy, idx, *geo, add, transpose=transpose)
    assert db.shape == blocks.shape  # same layout as the forward blocks (SBNet bug avoided)
    y = sparse_scatter(blocks, idx, base, *geo, add, transpose=transpose)
    # scatter is linear in (blocks, base) for add=True or disjoint add=False
    np.testing.assert_allclose((y * dy).sum(), (blocks * db).sum() + (base * dbase).sum(),
                               rtol=1e-12)
    if add:
        np.testing.assert_array_equal(dbase, dy)
    else:
        covered = sparse_scatter(np.ones_like(blocks), idx, np.zeros_like(base), *geo, False,
                                 transpose=transpose) > 0
        np.testing.assert_array_equal(dbase, np.where(covered, 0, dy))


# ----------------------------------------------------------------- dense equivalence
DENSE_CASES = [
    # (N, H, W, C, F, block, kernel, stride, padding)
    (2, 13, 11, 3, 2, (5, 5), (3, 3), (1, 1), "SAME"),
    (1, 14, 15, 1, 3, (7, 4), (3, 2), (1, 2), "SAME"),
    (2, 17, 12, 5, 4, (9, 9), (5, 5), (2, 2), "SAME"),
    (1, 12, 13, 3, 2, (3, 3), (1, 1), (1, 1), "VALID"),
    (3, 15, 16, 3, 3, (7, 5), (3, 3), (2, 2), "VALID"),
    (1, 10, 9, 2, 2, (5, 6), (5, 2), (1, 2), "VALID"),
    (2, 9, 10, 4, 3, (6, 5), (4, 1), (2, 2), "SAME"),
    (1, 11, 11, 3, 3, (4, 3), (2, 1), (2, 1), "SAME"),
]


@pytest.mark.parametrize("case", DENSE_CASES)
@pytest.mark.parametrize("transpose,cover_all", [(True, False), (False, False), (True, True)])
def test_sparse_conv_equals_dense(case, transpose, cover_all):
    n, h, w, c, f, b, k, s, padding = case
    x = RNG.standard_normal((n, h, w, c))
    wt = RNG.standard_normal((f, c) + k)
    bp = calc_block_params(x.shape, b, k, s, padding, cover_all=cover_all)
    dense = dense_conv_nhwc(x, wt, s, padding)
    all_idx = np.array([(a, i, j) for a in range(n) for i in range(bp.bcount[0])
                        for j in range(bp.bcount[1])], np.int32)
    for idx in (all_idx, all_idx[RNG.random(len(all_idx)) < 0.4]):
        blocks = sparse_gather(x, idx, bp.bsize, bp.bstrides, bp.boffset, transpose=transpose)
        if transpose:
            yb = conv_forward(blocks, wt, None, s, (0, 0), (1, 1), 1)
        else:
            yb = conv_forward(blocks, wt.transpose(0, 2, 3, 1), None, s, (0, 0), (1, 1), 1,
                              layout="NHWC")
        assert yb.shape[-2 if transpose else 1:][:2] == bp.bsize_out
        zeros = np.zeros(dense.shape)
        y = sparse_scatter(yb, idx, zeros, bp.bsize_out, bp.bsize_out, (0, 0), False,
                           transpose=transpose)
        ones = np.ones((len(idx),) + bp.bsize_out + (1,))
        cov = sparse_scatter(ones, idx, np.zeros(dense.shape[:3] + (1,)), bp.bsize_out,
                             bp.bsize_out, (0, 0), False)[..., 0] > 0
        if idx is all_idx and (cover_all or padding == "VALID"):
            assert cov.all()
        np.testing.assert_allclose(y[cov], dense[cov], rtol=1e-10, atol=1e-10)
        assert not y[~cov].any()


def test_all_active_mask_reproduces_dense_float32():
    x = RNG.standard_normal((1, 20, 18, 4)).astype(np.float32)
    wt = RNG.standard_normal((4, 4, 3, 3)).astype(np.float32)
    bp = calc_block_params(x.shape, (8, 8), (3, 3), (1, 1), "SAME", cover_all=True)
    idx = reduce_mask(np.ones(x.shape[:3], np.float32), bp.bsize, bp.bstrides, bp.boffset,
                      bp.bcount, 0.0, avgpool=True)  # partial border blocks average < 1
    blocks = sparse_gather(x, idx, bp.bsize, bp.bstrides, bp.boffset, transpose=True)
    yb = conv_forward(blocks, wt, None, (1, 1), (0, 0), (1, 1), 1)
    y = sparse_scatter(yb, idx, np.zeros(x.shape[:3] + (4,), np.float32), bp.bsize_out,
                       bp.bsize_out, (0, 0), False, transpose=True)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, dense_conv_nhwc(x, wt, (1, 1), "SAME"), rtol=1e-4, atol=1e-4)
