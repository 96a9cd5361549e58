"""SBNet ops through mx.nd.contrib / mx.sym.contrib: reduce_mask, gather, scatter, scatter_var."""
import itertools

import numpy as np
import pytest
from sbnet_helpers import executor, numeric_grads, oracle_gather, oracle_scatter

import sparsym as mx
from sparsym.base import DTypeError, ShapeError
from sparsym.contrib import sbnet
from sparsym.ops.contrib.sbnet import blocks as sbnet_blocks

RNG = np.random.default_rng(7)
nd, sym = mx.nd.contrib, mx.sym.contrib


def _pool_oracle(mask, bsize, bstride, boffset, bcount, tol, avgpool):
    rows = []
    for n, i, j in itertools.product(range(mask.shape[0]), range(bcount[0]), range(bcount[1])):
        h0, w0 = boffset[0] + i * bstride[0], boffset[1] + j * bstride[1]
        win = mask[n, max(h0, 0):max(h0 + bsize[0], 0), max(w0, 0):max(w0 + bsize[1], 0)]
        on = (win.sum() / (bsize[0] * bsize[1]) > tol) if avgpool else \
            (win.size > 0 and win.max() > tol)
        if on:
            rows.append((n, i, j))
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


# ----------------------------------------------------------------------------- reduce_mask
@pytest.mark.parametrize("avgpool,tol", [(False, 0.0), (False, 0.5), (True, 0.05), (True, 0.2)])
@pytest.mark.parametrize("layout,shape", [("NHWC", (2, 11, 9)), ("NHWC", (2, 11, 9, 1)),
                                          ("NCHW", (2, 1, 11, 9))])
def test_reduce_mask_matches_pooling_oracle(avgpool, tol, layout, shape):
    mask = (RNG.random(shape) > 0.8).astype(np.float32) * RNG.random(shape).astype(np.float32)
    bp = sbnet.calc_block_params((2, 11, 9, 1), (4, 5), (3, 3), (1, 1), "SAME")
    idx, cnt = nd.reduce_mask(mx.nd.array(mask), bsize=bp.bsize, bstride=bp.bstrides,
                              boffset=bp.boffset, bcount=bp.bcount, tol=tol, avgpool=avgpool,
                              layout=layout)
    want = _pool_oracle(mask.reshape(2, 11, 9), bp.bsize, bp.bstrides, bp.boffset, bp.bcount,
                        tol, avgpool)
    idx, cnt = idx.asnumpy(), cnt.asnumpy()
    assert idx.dtype == np.int32 and cnt.dtype == np.int32
    assert idx.shape == (2 * bp.bcount[0] * bp.bcount[1], 3) and cnt.shape == (1,)
    assert cnt[0] == len(want)
    np.testing.assert_array_equal(idx[:cnt[0]], want)     # lexicographic order
    assert (idx[cnt[0]:] == -1).all()


def test_reduce_mask_tol_is_strict_and_deterministic():
    mask = np.zeros((1, 4, 4), np.float32)
    mask[0, 0, 0] = 0.5
    kw = dict(bsize=(2, 2), bstride=(2, 2), bcount=(2, 2))
    assert nd.reduce_mask(mx.nd.array(mask), tol=0.5, **kw)[1].asnumpy()[0] == 0
    assert nd.reduce_mask(mx.nd.array(mask), tol=0.49, **kw)[1].asnumpy()[0] == 1
    big = (RNG.random((3, 40, 40)) > 0.9).astype(np.float32)
    kw = dict(bsize=(5, 5), bstride=(3, 3), boffset=(-1, -1), bcount=(14, 14))
    first = nd.reduce_mask(mx.nd.array(big), **kw)[0].asnumpy()
    for _ in range(3):
        np.testing.assert_array_equal(nd.reduce_mask(mx.nd.array(big), **kw)[0].asnumpy(),
                                      first)


def test_reduce_mask_empty_mask_gives_zero_blocks_unlike_sbnet():
    # SBNet returns count 1 with a dummy block (0, 0, 0); sparsym returns no block at all
    idx, cnt = nd.reduce_mask(mx.nd.zeros((2, 6, 6)), bsize=(3, 3), bstride=(3, 3),
                              bcount=(2, 2))
    assert cnt.asnumpy()[0] == 0
    assert (idx.asnumpy() == -1).all()
    # the padding rows are ignored: gathering / scattering them is a no-op
    x = mx.nd.array(RNG.standard_normal((2, 6, 6, 3)))
    blocks = nd.sparse_gather(x, idx, bsize=(3, 3), bstride=(3, 3))
    assert blocks.shape == (8, 3, 3, 3) and not blocks.asnumpy().any()
    y = nd.sparse_scatter(blocks + 1, idx, x, bsize=(3, 3), bstride=(3, 3), add=True)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_reduce_mask_covers_every_output_touching_the_mask():
    """Coverage: every conv output whose receptive field holds an active pixel is in a block."""
    n, h, w, k = 2, 13, 10, 3
    mask = (RNG.random((n, h, w)) > 0.93).astype(np.float32)
    bp = sbnet.calc_block_params((n, h, w, 1), (5, 4), (k, k), (1, 1), "SAME")
    idx, cnt = nd.reduce_mask(mx.nd.array(mask), bsize=bp.bsize, bstride=bp.bstrides,
                              boffset=bp.boffset, bcount=bp.bcount)
    covered = np.zeros((n, h, w), bool)
    for b, i, j in idx.asnumpy()[:cnt.asnumpy()[0]]:
        covered[b, i * bp.bsize_out[0]:(i + 1) * bp.bsize_out[0],
                j * bp.bsize_out[1]:(j + 1) * bp.bsize_out[1]] = True
    for b, y, x in itertools.product(range(n), range(h), range(w)):
        if mask[b, max(y - 1, 0):y + 2, max(x - 1, 0):x + 2].max() > 0:
            assert covered[b, y, x], (b, y, x)


def test_reduce_mask_symbolic_shape_and_no_gradient():
    m = mx.sym.var("m")
    out = sym.reduce_mask(m, bsize=(3, 3), bstride=(2, 2), bcount=(4, 5))
    assert out.list_outputs()[0].endswith("indices")
    _, out_shapes, _ = out.infer_shape(m=(3, 9, 11))
    assert out_shapes == [(60, 3), (1,)]
    _, out_types, _ = out.infer_type(m=np.float32)
    assert out_types == [np.int32, np.int32]


# ----------------------------------------------------------------------------- gather/scatter
GEOMS = [((3, 3), (3, 3), (0, 0)),      # disjoint tiles
         ((5, 4), (3, 2), (-1, -1)),    # overlapping halos, non-square
         ((4, 4), (2, 3), (-2, 0))]


def _indices(n, cnt, m):
    rows = np.array(list(itertools.product(range(n), range(cnt[0]), range(cnt[1]))), np.int32)
    return rows[np.sort(RNG.choice(len(rows), size=min(m, len(rows)), replace=False))]


@pytest.mark.parametrize("geom", GEOMS)
@pytest.mark.parametrize("layout,transpose", [("NHWC", False), ("NHWC", True),
                                              ("NCHW", False), ("NCHW", True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gather_scatter_match_oracles(geom, layout, transpose, dtype):
    bsize, bstride, boffset = geom
    n, h, w, c = 2, 8, 7, 3
    shape = (n, h, w, c) if layout == "NHWC" else (n, c, h, w)
    x = RNG.standard_normal(shape).astype(dtype)
    idx = _indices(n, (4, 4), 9)
    kw = dict(bsize=bsize, bstride=bstride, boffset=boffset, transpose=transpose,
              layout=layout)
    blocks = nd.sparse_gather(mx.nd.array(x, dtype=dtype), mx.nd.array(idx, dtype=np.int32),
                              **kw)
    want = oracle_gather(x, idx, bsize, bstride, boffset, transpose, layout)
    assert blocks.dtype == dtype and blocks.shape == want.shape
    np.testing.assert_array_equal(blocks.asnumpy(), want)
    plain = nd.sparse_gather(mx.nd.array(x, dtype=dtype), mx.nd.array(idx, dtype=np.int32),
                             **dict(kw, transpose=False)).asnumpy()
    if transpose:   # the transposed layout is a transpose of the plain one
        np.testing.assert_array_equal(blocks.asnumpy(), plain.transpose(0, 3, 1, 2))
    upd = RNG.standard_normal(want.shape).astype(dtype)
    for add in (False, True):
        y = nd.sparse_scatter(mx.nd.array(upd, dtype=dtype), mx.nd.array(idx, dtype=np.int32),
                              mx.nd.array(x, dtype=dtype), add=add, **kw)
        np.testing.assert_allclose(
            y.asnumpy(), oracle_scatter(upd, idx, x, bsize, bstride, boffset, add, transpose,
                                        layout), rtol=1e-6, atol=1e-6)
        # the in-place variant equals the copy variant and really writes into base
        base = mx.nd.array(x, dtype=dtype)
        yv = nd.sparse_scatter_var(mx.nd.array(upd, dtype=dtype),
                                   mx.nd.array(idx, dtype=np.int32), base, add=add, **kw)
        np.testing.assert_array_equal(yv.asnumpy(), y.asnumpy())
        np.testing.assert_array_equal(base.asnumpy(), y.asnumpy())


def test_scatter_zero_blocks_and_out_of_range_parts():
    x = RNG.standard_normal((1, 5, 5, 2))
    none = np.zeros((0, 3), np.int32)
    y = nd.sparse_scatter(mx.nd.array(np.zeros((0, 3, 3, 2))), mx.nd.array(none, dtype=np.int32),
                          mx.nd.array(x, dtype=np.float32), bsize=(3, 3), bstride=(3, 3),
                          add=False)
    np.testing.assert_array_equal(y.asnumpy(), x.astype(np.float32))
    # a block hanging over the corner: the outside part is dropped, the inside written
    idx = np.array([[0, 0, 0]], np.int32)
    y = nd.sparse_scatter(mx.nd.ones((1, 3, 3, 2)), mx.nd.array(idx, dtype=np.int32),
                          mx.nd.zeros((1, 5, 5, 2)), bsize=(3, 3), bstride=(3, 3),
                          boffset=(-2, -2), add=False).asnumpy()
    assert y[0, 0, 0].tolist() == [1, 1] and y.sum() == 2


def test_overlapping_add_sums_like_a_sequential_loop():
    idx = np.array([[0, i, j] for i in range(3) for j in range(3)], np.int32)
    upd = RNG.standard_normal((9, 4, 4, 3))
    base = RNG.standard_normal((1, 6, 6, 3))
    y = nd.sparse_scatter(mx.nd.array(upd, dtype=np.float64), mx.nd.array(idx, dtype=np.int32),
                          mx.nd.array(base, dtype=np.float64), bsize=(4, 4), bstride=(1, 1),
                          add=True, atomic=False)
    np.testing.assert_allclose(y.asnumpy(), oracle_scatter(upd, idx, base, (4, 4), (1, 1),
                                                           (0, 0), True), rtol=1e-12)


def test_gather_scatter_errors_are_typed():
    x = mx.nd.zeros((1, 4, 4, 2))
    with pytest.raises(ShapeError):
        nd.sparse_gather(x, mx.nd.zeros((2, 2), dtype=np.int32), bsize=(2, 2), bstride=(2, 2))
    with pytest.raises(ShapeError):
        nd.sparse_gather(x, mx.nd.array([[3, 0, 0]], dtype=np.int32), bsize=(2, 2),
                         bstride=(2, 2))
    with pytest.raises(ShapeError):
        nd.sparse_scatter(mx.nd.zeros((1, 3, 3, 2)), mx.nd.array([[0, 0, 0]], dtype=np.int32),
                          x, bsize=(2, 2), bstride=(2, 2), add=True)
    with pytest.raises(DTypeError):
        nd.sparse_gather(mx.nd.zeros((1, 4, 4, 2), dtype=np.int32),
                         mx.nd.array([[0, 0, 0]], dtype=np.int32), bsize=(2, 2), bstride=(2, 2))
    with pytest.raises(mx.base.ParamError):
        nd.sparse_scatter(mx.nd.zeros((1, 2, 2, 2)), mx.nd.array([[0, 0, 0]], dtype=np.int32),
                          x, bsize=(2, 2), bstride=(2, 2))   # add is required


# ----------------------------------------------------------------------------- gradients
def _graph(kind, kw, add=False):
    x, idx, b = mx.sym.var("x"), mx.sym.var("idx", dtype=np.int32), mx.sym.var("b")
    if kind == "gather":
        return sym.sparse_gather(x, idx, **kw)
    op = sym.sparse_scatter if kind == "scatter" else sym.sparse_scatter_var
    return op(b, idx, x, add=add, **kw)


@pytest.mark.parametrize("layout,transpose", [("NHWC", False), ("NHWC", True), ("NCHW", True)])
def test_adjoint_identity_with_overlap(layout, transpose):
    """<gather(x), g> == <x, scatter_add(g)> and the gather gradient is that scatter-add."""
    bsize, bstride, boffset = (5, 4), (2, 3), (-1, -2)
    shape = (2, 7, 8, 3) if layout == "NHWC" else (2, 3, 7, 8)
    x = RNG.standard_normal(shape)
    idx = _indices(2, (4, 4), 12).astype(np.int32)
    kw = dict(bsize=bsize, bstride=bstride, boffset=boffset, transpose=transpose, layout=layout)
    g = RNG.standard_normal(oracle_gather(x, idx, bsize, bstride, boffset, transpose,
                                          layout).shape)
    gx = nd.sparse_gather(mx.nd.array(x, dtype=np.float64), mx.nd.array(idx, dtype=np.int32),
                          **kw).asnumpy()
    sg = nd.sparse_scatter(mx.nd.array(g, dtype=np.float64), mx.nd.array(idx, dtype=np.int32),
                           mx.nd.zeros(shape, dtype=np.float64), add=True, **kw).asnumpy()
    assert np.isclose((gx * g).sum(), (x * sg).sum(), rtol=1e-12)
    exe = executor(_graph("gather", kw), {"x": x, "idx": idx}, {"x": "write", "idx": "null"})
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(g, dtype=np.float64))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), sg, rtol=1e-12)


@pytest.mark.parametrize("var", [False, True])
@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("layout,transpose", [("NHWC", False), ("NHWC", True), ("NCHW", False)])
def test_scatter_gradients(var, add, layout, transpose):
    """d blocks = gather(dy) in the blocks' own layout (SBNet's transpose bug fixed);
    d base = dy (add) or dy with covered pixels zeroed (overwrite); none for indices."""
    bsize, bstride, boffset = (3, 3), (3, 3), (-1, 0)
    shape = (2, 6, 5, 2) if layout == "NHWC" else (2, 2, 6, 5)
    base = RNG.standard_normal(shape)
    idx = _indices(2, (3, 2), 5).astype(np.int32)
    kw = dict(bsize=bsize, bstride=bstride, boffset=boffset, transpose=transpose, layout=layout)
    blocks = RNG.standard_normal(oracle_gather(base, idx, bsize, bstride, boffset, transpose,
                                               layout).shape)
    dy = RNG.standard_normal(shape)
    exe = executor(_graph("scatter_var" if var else "scatter", kw, add),
                   {"x": base, "idx": idx, "b": blocks},
                   {"x": "write", "idx": "null", "b": "write"})
    y = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(y, oracle_scatter(blocks, idx, base, bsize, bstride, boffset,
                                                 add, transpose, layout), rtol=1e-12)
    exe.backward(mx.nd.array(dy, dtype=np.float64))
    db = exe.grad_dict["b"].asnumpy()
    assert db.shape == blocks.shape
    np.testing.assert_array_equal(db, oracle_gather(dy, idx, bsize, bstride, boffset,
                                                    transpose, layout))
    covered = oracle_scatter(np.ones_like(blocks), idx, np.zeros(shape), bsize, bstride,
                             boffset, False, transpose, layout)
    want = dy if add else dy * (1 - covered)
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), want)
    assert not exe.grad_dict["idx"].asnumpy().any()  # grad_req null: given, never written


@pytest.mark.parametrize("var", [False, True])
@pytest.mark.parametrize("layout,transpose", [("NHWC", False), ("NHWC", True), ("NCHW", False)])
def test_overlapping_write_scatter_gradient_matches_finite_differences(var, layout,
                                                                        transpose):
    """Overlapping add=False blocks (last in index order wins, padding rows, a duplicate
    block): each pixel's gradient goes to the block the forward kept, none to base there."""
    bsize, bstride, boffset = (4, 3), (2, 2), (-1, 0)
    shape = (2, 6, 7, 2) if layout == "NHWC" else (2, 2, 6, 7)
    idx = np.array([[0, 0, 0], [0, 1, 1], [-1, 0, 0], [1, 0, 1], [0, 0, 1], [0, 1, 1]],
                   np.int32)
    kw = dict(bsize=bsize, bstride=bstride, boffset=boffset, transpose=transpose, layout=layout)
    arrays = {"x": RNG.standard_normal(shape), "idx": idx,
              "b": RNG.standard_normal(oracle_gather(np.zeros(shape), np.maximum(idx, 0),
                                                     bsize, bstride, boffset, transpose,
                                                     layout).shape)}
    g = _graph("scatter_var" if var else "scatter", kw, add=False)
    head = RNG.standard_normal(shape)
    exe = executor(g, arrays, {"x": "write", "idx": "null", "b": "write"})
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(head, dtype=np.float64))
    want = numeric_grads(g, arrays, head, ["x", "b"])
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), want["b"], atol=1e-8)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), want["x"], atol=1e-8)
    assert not exe.grad_dict["b"].asnumpy()[2].any()  # the padding row


def test_no_gradient_flows_to_indices_from_reduce_mask():
    x, m = mx.sym.var("x"), mx.sym.var("m")
    idx, _ = sym.reduce_mask(m, bsize=(3, 3), bstride=(3, 3), bcount=(2, 2))
    y = sym.sparse_gather(x, idx, bsize=(3, 3), bstride=(3, 3))
    mask = np.zeros((1, 6, 6), np.float32)
    mask[0, 4, 1] = 1
    exe = executor(mx.sym.make_loss(mx.sym.sum(y)) if hasattr(mx.sym, "make_loss") else y,
                   {"x": RNG.standard_normal((1, 6, 6, 2)), "m": mask},
                   {"x": "write", "m": "write"})
    exe.forward(is_train=True)
    exe.backward() if hasattr(mx.sym, "make_loss") else exe.backward(mx.nd.ones((4, 3, 3, 2)))
    gx = exe.grad_dict["x"].asnumpy()
    assert gx[0, 3:6, 0:3].all() and gx.sum() == 18
    assert not exe.grad_dict["m"].asnumpy().any()


# ----------------------------------------------------------------------------- in-place
def test_scatter_var_writes_base_in_place_in_a_graph_when_nothing_reads_it_later():
    """y = scatter_var(blocks2, idx, base=h) with h = scatter(blocks1, idx, x): h dies at the
    scatter_var step, so the executor's memory plan hands h's buffer over (no copy), in
    training too (the gather gradient only needs shapes)."""
    if "inplace" not in getattr(mx.ops.registry.OpDef, "__dataclass_fields__", {}):
        pytest.skip("executor without in-place memory planning")
    x, idx, b1 = mx.sym.var("x"), mx.sym.var("idx", dtype=np.int32), mx.sym.var("b1")
    kw = dict(bsize=(4, 4), bstride=(4, 4))
    h = sym.sparse_scatter(b1, idx, x, add=True, **kw)
    blocks = sym.sparse_gather(h, idx, **kw)
    y = sym.sparse_scatter_var(blocks * 2, idx, h, add=False, **kw) * 1.0  # y: not a head
    vals = {"x": RNG.standard_normal((2, 16, 16, 8)), "b1": RNG.standard_normal((3, 4, 4, 8)),
            "idx": np.array([[0, 0, 1], [1, 2, 2], [1, 3, 0]], np.int32)}
    hv = oracle_scatter(vals["b1"], vals["idx"], vals["x"], (4, 4), (4, 4), (0, 0), True)
    want = oracle_scatter(2 * oracle_gather(hv, vals["idx"], (4, 4), (4, 4), (0, 0)),
                          vals["idx"], hv, (4, 4), (4, 4), (0, 0), False)
    for train in (False, True):
        exe = executor(y, vals, {"x": "write", "b1": "write", "idx": "null"})
        before = dict(sbnet_blocks.scatter_var_stats)
        out = exe.forward(is_train=train)[0].asnumpy()
        np.testing.assert_allclose(out, want, rtol=1e-12)
        assert sbnet_blocks.scatter_var_stats["inplace"] == before["inplace"] + 1
        if train:
            exe.backward(mx.nd.ones(want.shape, dtype=np.float64))
            covered = oracle_scatter(np.ones((3, 4, 4, 8)), vals["idx"], np.zeros(want.shape),
                                     (4, 4), (4, 4), (0, 0), False)
            # dy/dh = 1 off the blocks, 2 on them; dh/dx = 1
            np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 1 + covered, rtol=1e-12)


def test_scatter_var_copies_when_base_is_read_later_or_bound():
    x, idx, b = mx.sym.var("x"), mx.sym.var("idx", dtype=np.int32), mx.sym.var("b")
    kw = dict(bsize=(2, 2), bstride=(2, 2))
    y = sym.sparse_scatter_var(b, idx, x, add=False, **kw)
    vals = {"x": RNG.standard_normal((1, 4, 4, 2)), "b": RNG.standard_normal((1, 2, 2, 2)),
            "idx": np.array([[0, 1, 1]], np.int32)}
    exe = executor(y + x, vals, {"x": "null", "b": "null", "idx": "null"})
    out = exe.forward()[0].asnumpy()
    np.testing.assert_allclose(out, oracle_scatter(vals["b"], vals["idx"], vals["x"], (2, 2),
                                                   (2, 2), (0, 0), False) + vals["x"])
    # the bound argument keeps its value
    np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy(), vals["x"])


@pytest.mark.parametrize("avgpool,tol", [(False, 0.0), (False, 0.3), (True, 0.05)])
def test_reduce_mask_op_equals_the_block_sparse_kernel(avgpool, tol):
    """The op pools with an integral image; the raw kernel loops: same blocks, same order."""
    from sparsym.kernels.block_sparse import reduce_mask as kernel
    for shape, b, s, o in [((2, 11, 9), (3, 3), (2, 3), (-1, -2)), ((1, 20, 33), (5, 4),
                                                                   (5, 4), (0, 0))]:
        mask = (RNG.random(shape) > 0.7) * RNG.random(shape).astype(np.float32)
        cnt = (-(-(shape[1] + 4) // s[0]), -(-(shape[2] + 4) // s[1]))
        idx, n = nd.reduce_mask(mx.nd.array(mask, dtype=np.float32), bsize=b, bstride=s,
                                boffset=o, bcount=cnt, tol=tol, avgpool=avgpool)
        want = kernel(mask.astype(np.float32), b, s, o, cnt, tol, avgpool)
        np.testing.assert_array_equal(idx.asnumpy()[:n.asnumpy()[0]], want)
