"""Block params, the gather -> conv -> scatter pipeline and the fused SparseBlockConvolution."""
import itertools

import numpy as np
import pytest
from sbnet_helpers import (
    executor,
    from_nhwc,
    naive_conv_nhwc,
    numeric_grads,
    receptive_mask,
    tf_pads,
    to_nhwc,
)

import sparsym as mx
from sparsym.base import ParamError, ShapeError
from sparsym.contrib import sbnet
from sparsym.kernels.sbnet import fused, tuning

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")

RNG = np.random.default_rng(11)
nd, sym = mx.nd.contrib, mx.sym.contrib


# ----------------------------------------------------------------------------- block params
def test_calc_block_params_matches_sbnet_formulas():
    bp = sbnet.calc_block_params([1, 5, 5, 1], [1, 3, 3, 1], [3, 3, 1, 1], [1, 1, 1, 1], "SAME",
                                 cover_all=False)
    assert bp == sbnet.BlockParams((3, 3), (1, 1), (-1, -1), (5, 5), (1, 1))
    # stride 2, non-square, VALID: bstride = b - k + s, bcount = ceil((Hp - b + 1)/bstride)
    bp = sbnet.calc_block_params((2, 17, 12, 3), (7, 5), (3, 3), (2, 2), "VALID")
    assert bp.bstrides == (6, 4) and bp.bsize_out == (3, 2) and bp.boffset == (0, 0)
    # the res-block variant uses the receptive field k = 1 + sum(k_i - 1) = 3 for 1-3-1
    assert sbnet.calc_block_params_res_block((1, 20, 20, 8), (9, 9), [(1, 1), (3, 3), (1, 1)],
                                             (1, 1), "SAME") == \
        sbnet.calc_block_params((1, 20, 20, 8), (9, 9), (3, 3), (1, 1), "SAME")


def test_cover_all_covers_the_trailing_outputs_sbnet_misses():
    """H=13, b=5, k=3, SAME: SBNet's grid stops after output 11; cover_all reaches 12."""
    sb = sbnet.calc_block_params((1, 13, 13, 1), (5, 5), (3, 3), (1, 1), "SAME", cover_all=False)
    ca = sbnet.calc_block_params((1, 13, 13, 1), (5, 5), (3, 3), (1, 1), "SAME")
    assert sb.bcount[0] * sb.bsize_out[0] == 12
    assert ca.bcount[0] * ca.bsize_out[0] >= 13
    for h, b, k, s in itertools.product((9, 13, 16), (5, 7), (1, 3), (1, 2)):
        if (b - k) % s:
            continue
        got = []
        for cover in (True, False):
            try:
                got.append(sbnet.calc_block_params((1, h, h, 1), (b, b), (k, k), (s, s),
                                                   "VALID", cover_all=cover))
            except ShapeError as err:   # SBNet's own assert: last block outside the input
                got.append(str(err))
        assert got[0] == got[1]


def test_bad_block_params_raise_typed_errors():
    with pytest.raises(ShapeError, match="divisible"):
        sbnet.calc_block_params((1, 10, 10, 1), (4, 4), (3, 3), (2, 2), "SAME")
    with pytest.raises(ShapeError, match="larger than the padded input"):
        sbnet.calc_block_params((1, 2, 2, 1), (6, 6), (3, 3), (1, 1), "SAME")
    with pytest.raises(ShapeError, match="smaller than the kernel"):
        sbnet.calc_block_params((1, 8, 8, 1), (2, 2), (3, 3), (1, 1), "SAME")
    with pytest.raises(ParamError):
        sbnet.calc_block_params((1, 8, 8, 1), (4, 4), (3, 3), (1, 1), "FULL")
    x, m, w = mx.nd.ones((1, 3, 9, 9)), mx.nd.ones((1, 9, 9)), mx.nd.ones((2, 3, 3, 3))
    kw = dict(kernel=(3, 3), num_filter=2, no_bias=True)
    with pytest.raises(ShapeError, match="divisible"):
        nd.SparseBlockConvolution(x, m, w, stride=(2, 2), bsize=(4, 4), **kw)
    with pytest.raises(ShapeError, match="larger than the padded input"):
        nd.SparseBlockConvolution(x, m, w, pad=(1, 1), bsize=(13, 13), **kw)
    with pytest.raises(ShapeError, match="mask"):
        nd.SparseBlockConvolution(x, mx.nd.ones((1, 8, 9)), w, **kw)
    with pytest.raises(ParamError):
        nd.SparseBlockConvolution(x, m, w, layout="NCDHW", **kw)


# ----------------------------------------------------------------------------- pipeline
PIPE = [("SAME", 1, 3, (5, 5)), ("SAME", 1, 3, (6, 4)), ("VALID", 1, 3, (5, 7)),
        ("SAME", 2, 3, (7, 5)), ("VALID", 2, 5, (9, 7)), ("SAME", 1, 1, (3, 2)),
        ("SAME", 2, 1, (5, 3)), ("SAME", 1, 5, (9, 9)), ("VALID", 1, 5, (6, 8))]


@pytest.mark.parametrize("padding,s,k,bsize", PIPE)
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_scatter_conv_gather_equals_dense_conv_on_covered_outputs(padding, s, k, bsize, layout):
    """scatter(conv_valid(gather(x))) == conv(x) on every output of an active block, with
    partial border blocks (13 x 11 is divisible by no block), N = 2 and odd C."""
    n, h, w, c, f = 2, 13, 11, 3, 4
    x = RNG.standard_normal((n, h, w, c))
    wt = RNG.standard_normal((f, c, k, k))
    bp = sbnet.calc_block_params((n, h, w, c), bsize, (k, k), (s, s), padding)
    mask = (RNG.random((n, h, w)) > 0.85).astype(np.float32)
    idx, cnt = nd.reduce_mask(mx.nd.array(mask, dtype=np.float32), bsize=bp.bsize,
                              bstride=bp.bstrides, boffset=bp.boffset, bcount=bp.bcount)
    xd = mx.nd.array(from_nhwc(x, layout), dtype=np.float64)
    y = sbnet.sparse_conv2d(xd, mx.nd.array(wt, dtype=np.float64), idx, bp, (s, s), padding,
                            layout=layout)
    dense = naive_conv_nhwc(x, wt, (s, s), (tf_pads(h, k, s, padding),
                                            tf_pads(w, k, s, padding)))
    got = to_nhwc(y.asnumpy(), layout)
    assert got.shape == dense.shape
    covered = np.zeros(dense.shape[:3], bool)
    for b, i, j in idx.asnumpy()[:cnt.asnumpy()[0]]:
        covered[b, i * bp.bsize_out[0]:(i + 1) * bp.bsize_out[0],
                j * bp.bsize_out[1]:(j + 1) * bp.bsize_out[1]] = True
    assert covered.any()
    np.testing.assert_allclose(got[covered], dense[covered], rtol=1e-10, atol=1e-10)
    assert not got[~covered].any()
    # the output of every pixel whose receptive field touches the mask is covered
    pt = (tf_pads(h, k, s, padding)[0], tf_pads(w, k, s, padding)[0])
    assert covered[receptive_mask(mask, (k, k), (s, s), pt, dense.shape[1:3])].all()


# ----------------------------------------------------------------------------- fused op
FUSED = [  # (pad, padding, stride, kernel, bsize)
    ((1, 1), None, (1, 1), (3, 3), None), ((1, 1), None, (1, 1), (3, 3), (6, 4)),
    ((0, 0), None, (1, 1), (1, 1), None), ((2, 2), None, (1, 1), (5, 5), (7, 9)),
    ((1, 1), None, (2, 2), (3, 3), (5, 7)), ((0, 0), "SAME", (2, 2), (3, 3), (7, 7)),
    ((0, 0), "VALID", (1, 1), (3, 3), (4, 6)), ((0, 0), "SAME", (1, 1), (5, 3), None),
    ((1, 0), None, (2, 1), (3, 1), (5, 3))]


def _masked_conv_oracle(x, w, b, mask, kernel, stride, pad, padding, layout, tol=0.0):
    xn = to_nhwc(x, layout)
    w_oihw = w if layout == "NCHW" else w.transpose(0, 3, 1, 2)
    h, wd = xn.shape[1:3]
    if padding is None:
        pads = ((pad[0], pad[0]), (pad[1], pad[1]))
    else:
        pads = (tf_pads(h, kernel[0], stride[0], padding),
                tf_pads(wd, kernel[1], stride[1], padding))
    y = naive_conv_nhwc(xn, w_oihw, stride, pads)
    if b is not None:
        y = y + b
    mo = receptive_mask(mask, kernel, stride, (pads[0][0], pads[1][0]), y.shape[1:3], tol)
    return from_nhwc(y * mo[..., None], layout)


def _fused_args(layout, kernel, n=2, h=11, w=13, c=3, f=4, density=0.1, dtype=np.float64):
    x = RNG.standard_normal((n, h, w, c) if layout == "NHWC" else (n, c, h, w)).astype(dtype)
    wt = RNG.standard_normal((f,) + ((kernel + (c,)) if layout == "NHWC" else
                                     ((c,) + kernel))).astype(dtype)
    b = RNG.standard_normal(f).astype(dtype)
    mask = (RNG.random((n, h, w)) < density).astype(np.float32)
    return x, wt, b, mask


@pytest.mark.parametrize("pad,padding,stride,kernel,bsize", FUSED)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dispatch", ["sparse", "dense", "auto"])
def test_fused_conv_matches_masked_dense_conv(pad, padding, stride, kernel, bsize, layout,
                                              dispatch):
    x, wt, b, mask = _fused_args(layout, kernel)
    kw = dict(kernel=kernel, num_filter=4, stride=stride, pad=pad, padding=padding,
              layout=layout, bsize=bsize, dispatch=dispatch)
    mshape = (2, 11, 13, 1) if layout == "NHWC" else (2, 1, 11, 13)
    y = nd.SparseBlockConvolution(mx.nd.array(x, dtype=np.float64),
                                  mx.nd.array(mask.reshape(mshape), dtype=np.float32),
                                  mx.nd.array(wt, dtype=np.float64),
                                  mx.nd.array(b, dtype=np.float64), **kw)
    want = _masked_conv_oracle(x, wt, b, mask, kernel, stride, pad, padding, layout)
    assert y.shape == want.shape and y.dtype == np.float64
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_fused_conv_float32_tol_and_symbolic_shapes(layout):
    x, wt, b, _ = _fused_args(layout, (3, 3), dtype=np.float32)
    mask = RNG.random((2, 11, 13)).astype(np.float32)
    y = nd.SparseBlockConvolution(mx.nd.array(x, dtype=np.float32),
                                  mx.nd.array(mask, dtype=np.float32),
                                  mx.nd.array(wt, dtype=np.float32),
                                  mx.nd.array(b, dtype=np.float32), kernel=(3, 3), num_filter=4,
                                  pad=(1, 1), layout=layout, tol=0.97)
    want = _masked_conv_oracle(x.astype(np.float64), wt.astype(np.float64), b, mask, (3, 3),
                               (1, 1), (1, 1), None, layout, tol=0.97)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-4)
    s = sbnet.SparseBlockConvolution(mx.sym.var("x"), mx.sym.var("m"), num_filter=4,
                                     kernel=(3, 3), stride=(2, 2), pad=(1, 1), layout=layout,
                                     name="sb")
    assert s.list_arguments() == ["x", "m", "sb_weight", "sb_bias"]
    args, outs, _ = s.infer_shape(x=x.shape)
    if layout == "NCHW":
        assert args == [x.shape, (2, 1, 11, 13), (4, 3, 3, 3), (4,)] and outs == [(2, 4, 6, 7)]
    else:
        assert args == [x.shape, (2, 11, 13, 1), (4, 3, 3, 3), (4,)] and outs == [(2, 6, 7, 4)]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dispatch,bsize,stride", [("sparse", (4, 5), (1, 1)),
                                                   ("sparse", (5, 5), (2, 2)),
                                                   ("dense", None, (2, 2))])
def test_fused_conv_numeric_gradients(layout, dispatch, bsize, stride):
    x, wt, b, mask = _fused_args(layout, (3, 3), n=2, h=6, w=5, c=2, f=2, density=0.2)
    s = mx.sym.contrib.SparseBlockConvolution(
        mx.sym.var("x"), mx.sym.var("m"), mx.sym.var("w"), mx.sym.var("b"), kernel=(3, 3),
        num_filter=2, stride=stride, pad=(1, 1), layout=layout, bsize=bsize, dispatch=dispatch)
    vals = {"x": x, "m": mask, "w": wt, "b": b}
    exe = executor(s, vals, {"x": "write", "m": "write", "w": "write", "b": "write"})
    y = exe.forward(is_train=True)[0].asnumpy()
    head = RNG.standard_normal(y.shape)
    exe.backward(mx.nd.array(head, dtype=np.float64))
    num = numeric_grads(s, vals, head, ["x", "w", "b"])
    for k in ("x", "w", "b"):
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), num[k], rtol=1e-6, atol=1e-7)
    assert not exe.grad_dict["m"].asnumpy().any()


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_backward_reuses_the_training_forward_blocks(layout):
    # a training forward keeps its output mask, tiles and gathered windows with the data
    # array; the backward then reuses them, with the gradients of a recomputing backward
    x, wt, _, mask = _fused_args(layout, (3, 3), n=1, h=40, w=36, c=3, f=4, density=0.1)
    x, wt, m = mx.nd.array(x, dtype="float32"), mx.nd.array(wt, dtype="float32"), mx.nd.array(mask)
    head = mx.nd.array(RNG.standard_normal((1, 4, 40, 36) if layout == "NCHW"
                                           else (1, 40, 36, 4)), dtype="float32")
    grads = []
    for train in (False, True):
        x.attach_grad()
        wt.attach_grad()
        with mx.autograd.record(train_mode=train):
            y = nd.SparseBlockConvolution(x, m, wt, kernel=(3, 3), num_filter=4, pad=(1, 1),
                                          no_bias=True, layout=layout, bsize=(10, 10),
                                          dispatch="sparse")
        assert (fused._KEPT.get(x._raw) is not None) == train
        y.backward(head)
        grads.append((x.grad.asnumpy(), wt.grad.asnumpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert np.abs(grads[0][0]).sum() > 0


def test_all_ones_mask_reproduces_the_dense_network():
    """Two block-sparse layers with an all-ones mask == the same net with Convolution."""
    n, c, h, w = 2, 3, 10, 9
    x = RNG.standard_normal((n, c, h, w))
    vals = {"x": x, "w1": RNG.standard_normal((4, c, 3, 3)), "b1": RNG.standard_normal(4),
            "w2": RNG.standard_normal((5, 4, 5, 5)), "b2": RNG.standard_normal(5)}
    X = mx.sym.var("x")

    def net(sparse):
        def conv(d, i, k, f, s, p):
            w, b = mx.sym.var(f"w{i}"), mx.sym.var(f"b{i}")
            if sparse:
                return mx.sym.contrib.SparseBlockConvolution(
                    d, mx.sym.var(f"m{i}"), w, b, kernel=(k, k), num_filter=f, stride=(s, s),
                    pad=(p, p))
            return mx.sym.Convolution(d, w, b, kernel=(k, k), num_filter=f, stride=(s, s),
                                      pad=(p, p))
        return conv(mx.sym.relu(conv(X, 1, 3, 4, 1, 1)), 2, 5, 5, 2, 2)

    dense = executor(net(False), vals)
    sparse_vals = dict(vals, m1=np.ones((n, h, w), np.float32),
                       m2=np.ones((n, h, w), np.float32))
    sp = executor(net(True), sparse_vals, {k: ("null" if k[0] == "m" else "write")
                                           for k in sparse_vals})
    yd = dense.forward(is_train=True)[0].asnumpy()
    ys = sp.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(ys, yd, rtol=1e-10, atol=1e-10)
    head = mx.nd.array(RNG.standard_normal(yd.shape), dtype=np.float64)
    dense.backward(head)
    sp.backward(head)
    for k in vals:
        np.testing.assert_allclose(sp.grad_dict[k].asnumpy(), dense.grad_dict[k].asnumpy(),
                                   rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------------------- dispatch
def test_dispatch_and_autotune_are_measured_once_cached_and_switchable():
    x, wt, b, mask = _fused_args("NHWC", (3, 3), n=1, h=24, w=20, c=3, f=3, density=0.05)
    args = [mx.nd.array(v, dtype=v.dtype) for v in (x, mask, wt, b)]
    kw = dict(kernel=(3, 3), num_filter=3, pad=(1, 1), layout="NHWC")
    sbnet.clear_cache()
    y0 = nd.SparseBlockConvolution(*args, **kw).asnumpy()
    info = sbnet.cache_info()
    assert len(info["thresholds"]) == 1 and len(info["tiles"]) == 1
    assert 0.0 <= next(iter(info["thresholds"].values())) <= 1.0
    before = dict(tuning.stats)
    y1 = nd.SparseBlockConvolution(*args, **kw).asnumpy()
    assert tuning.stats == before    # cached: nothing measured again
    np.testing.assert_array_equal(y0, y1)
    prev_d, prev_a = sbnet.set_dispatch(False), sbnet.set_autotune(False)
    try:
        sbnet.clear_cache()
        y2 = nd.SparseBlockConvolution(*args, **kw).asnumpy()
        assert sbnet.cache_info() == {"thresholds": {}, "tiles": {}}
    finally:
        sbnet.set_dispatch(prev_d)
        sbnet.set_autotune(prev_a)
    np.testing.assert_allclose(y2, y0, rtol=1e-12)
    y3 = nd.SparseBlockConvolution(*args, autotune=False, dispatch="dense", **kw).asnumpy()
    np.testing.assert_allclose(y3, y0, rtol=1e-12)


def test_dispatch_runs_dense_above_the_threshold(monkeypatch):
    calls = []
    monkeypatch.setattr(tuning, "threshold", lambda key, *a: 0.3)
    for name in ("dense_forward", "sparse_forward"):
        orig = getattr(fused.sconv, name)
        monkeypatch.setattr(fused.sconv, name,
                            lambda *a, _o=orig, _n=name, **k: calls.append(_n) or _o(*a, **k))
    x, wt, b, _ = _fused_args("NCHW", (3, 3), n=1, h=16, w=16, c=2, f=2)
    for density, want in ((1 / 16, "sparse_forward"), (1.0, "dense_forward")):
        mask = np.ones((1, 16, 16), np.float32)
        if density < 1:   # one pixel: one 4x4 output tile of 16
            mask[:] = 0
            mask[0, 5, 6] = 1
        calls.clear()
        nd.SparseBlockConvolution(*[mx.nd.array(v, dtype=v.dtype) for v in (x, mask, wt, b)],
                                  kernel=(3, 3), num_filter=2, pad=(1, 1), bsize=(6, 6))
        assert calls == [want]


def test_empty_mask_gives_zeros_and_zero_gradients():
    x, wt, b, _ = _fused_args("NCHW", (3, 3), n=1, h=7, w=6, c=2, f=2)
    s = mx.sym.contrib.SparseBlockConvolution(mx.sym.var("x"), mx.sym.var("m"), mx.sym.var("w"),
                                              mx.sym.var("b"), kernel=(3, 3), num_filter=2,
                                              pad=(1, 1))
    vals = {"x": x, "m": np.zeros((1, 7, 6), np.float32), "w": wt, "b": b}
    exe = executor(s, vals, {"x": "write", "m": "null", "w": "write", "b": "write"})
    assert not exe.forward(is_train=True)[0].asnumpy().any()
    exe.backward(mx.nd.ones((1, 2, 7, 6), dtype=np.float64))
    for k in ("x", "w", "b"):
        assert not exe.grad_dict[k].asnumpy().any()


def test_cached_output_mask_follows_mask_writes():
    """The output mask and tiles of a mask seen before are reused, and a mask written in
    place (same array, new values) is seen: the outputs follow the mask every call."""
    x = RNG.standard_normal((1, 13, 17, 3)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    mask = np.zeros((1, 13, 17), np.float32)
    mask[0, 2:5, 3:7] = 1
    m = mx.nd.array(mask)
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, layout="NHWC",
              bsize=(6, 6), dispatch="sparse")
    dense = naive_conv_nhwc(x, w.transpose(0, 3, 1, 2), (1, 1), ((1, 1), (1, 1)))

    def expected(msk):
        return dense * receptive_mask(msk, (3, 3), (1, 1), (1, 1), (13, 17))[..., None]
    first = nd.SparseBlockConvolution(mx.nd.array(x), m, mx.nd.array(w), **kw).asnumpy()
    np.testing.assert_allclose(first, expected(mask), rtol=1e-4, atol=1e-4)
    again = nd.SparseBlockConvolution(mx.nd.array(x), m, mx.nd.array(w), **kw).asnumpy()
    np.testing.assert_array_equal(again, first)
    m[:, 9:12, 10:15] = 1  # in place: the same array, other values
    mask[:, 9:12, 10:15] = 1
    moved = nd.SparseBlockConvolution(mx.nd.array(x), m, mx.nd.array(w), **kw).asnumpy()
    np.testing.assert_allclose(moved, expected(mask), rtol=1e-4, atol=1e-4)
    assert np.abs(moved - first).max() > 0


# ----------------------------------------------------------------------------- strip path
STRIP_GEOMS = [  # (kernel, pad, padding)
    ((3, 3), (1, 1), None), ((5, 3), (2, 1), None), ((1, 1), (0, 0), None),
    ((3, 3), (0, 0), None), ((5, 3), (0, 0), "SAME"), ((2, 2), (0, 0), "SAME"),
    ((1, 7), (0, 3), None)]


@pytest.mark.parametrize("kernel,pad,padding", STRIP_GEOMS)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("band,image_w", [(1, 64), (2, 4), (3, 1)])
def test_strip_path_matches_the_dense_path(kernel, pad, padding, layout, band, image_w,
                                           monkeypatch):
    """Bands of output rows, segments cut at image ends (narrow images): outputs and all
    three gradients equal the dense masked convolution's, for any head gradient; the
    inference forward (wider images) gives the same outputs."""
    from sparsym.kernels.sbnet import conv as sconv
    from sparsym.kernels.sbnet import geometry, strips
    monkeypatch.setattr(strips, "IMAGE_W", image_w)
    monkeypatch.setattr(strips, "IMAGE_W_INFER", 2 * image_w + 1)
    x, wt, b, mask = _fused_args(layout, kernel, n=2, h=13, w=17, c=3, f=4, density=0.08)
    geom = geometry.conv_geometry((13, 17), kernel, (1, 1), pad, padding)
    assert strips.supported(geom)
    mo = geometry.output_mask(mask, geom, 0.0)
    sp = strips.plan(mo, geom, band)
    keep = {}
    y = strips.forward(x, wt, b, geom, layout, sp, keep)
    np.testing.assert_allclose(y, sconv.dense_forward(x, wt, b, mo, geom, layout), rtol=1e-12,
                               atol=1e-12)
    assert sp.wide().wimg != sp.out.wimg
    np.testing.assert_allclose(strips.forward(x, wt, b, geom, layout, sp), y, rtol=1e-12,
                               atol=1e-12)
    dy = RNG.standard_normal(y.shape)   # nonzero where the output mask is 0 too
    want = sconv.dense_backward(x, wt, dy, mo, geom, layout, True)
    for strip in (keep["strips"], None):
        got = strips.backward(x, wt, dy, mo, geom, layout, sp, True, strip)
        for g, d in zip(got, want):
            np.testing.assert_allclose(g, d, rtol=1e-11, atol=1e-11)


def test_strip_path_is_the_default_at_stride_one_and_trains(monkeypatch):
    """Without autotuning a stride-1 SparseBlockConvolution runs on strips (kept for the
    backward); float32 results and gradients follow the dense op's; an empty mask gives
    zeros."""
    from sparsym.kernels.sbnet import strips
    prev = sbnet.set_autotune(False)
    try:
        for layout in ("NCHW", "NHWC"):
            x, wt, b, mask = _fused_args(layout, (3, 3), n=1, h=30, w=41, c=5, f=6,
                                         density=0.05, dtype=np.float32)
            head = mx.nd.array(RNG.standard_normal((1, 6, 30, 41) if layout == "NCHW"
                                                   else (1, 30, 41, 6)), dtype=np.float32)
            for m in (mask, np.zeros_like(mask)):
                xs = [mx.nd.array(v, dtype=v.dtype) for v in (x, wt, b)]
                for v in xs:
                    v.attach_grad()
                res = []
                for dispatch in ("sparse", "dense"):
                    kw = dict(kernel=(3, 3), num_filter=6, pad=(1, 1), layout=layout,
                              dispatch=dispatch)
                    with mx.autograd.record():
                        y = nd.SparseBlockConvolution(xs[0], mx.nd.array(m), xs[1], xs[2],
                                                      **kw)
                    kept = fused._KEPT.get(xs[0]._raw)
                    if dispatch == "sparse":
                        assert strips.is_strip(kept[4]) and kept[6] is False
                    y.backward(head)
                    res.append([y.asnumpy()] + [v.grad.asnumpy() for v in xs])
                for a, d in zip(*res):
                    np.testing.assert_allclose(a, d, rtol=1e-4, atol=1e-4)
                if not m.any():
                    assert not any(np.abs(a).sum() for a in res[0])
    finally:
        sbnet.set_autotune(prev)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_zero_run_streams_whole_lines_and_writes_the_ends(dtype):
    """zero_run clears exactly [a, b) of a flat array, whatever the run's alignment to
    64-byte lines (runs shorter than a line, starting or ending mid-line, empty) and leaves
    every other value alone."""
    from sparsym.kernels.sbnet._kernels import zero_run
    rng = np.random.default_rng(3)
    buf = np.arange(1, 302, dtype=dtype)
    for a, b in [(0, 300), (1, 2), (3, 3), (5, 40), (17, 33), (0, 16), (299, 300)] + [
            tuple(sorted(rng.integers(0, 301, 2))) for _ in range(40)]:
        flat = buf[1:].copy()   # an offset start: lines do not begin at element 0
        want = flat.copy()
        want[a:b] = 0
        zero_run(flat, np.uint64(a), np.uint64(b))
        np.testing.assert_array_equal(flat, want)
