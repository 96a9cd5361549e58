"""oneDNN convolution and deconvolution kernels against the Numba kernels (float32)."""
import numpy as np
import pytest

from sparsym.kernels import conv as kc
from sparsym.kernels import conv3d as k3
from sparsym.kernels import onednn as dnn

pytestmark = pytest.mark.skipif(not dnn.available(), reason="oneDNN wheel not installed")

if dnn.available():
    from sparsym.kernels.onednn import conv as oc

# (data, weight, stride, pad, dilate, group, layout)
CONV = [((2, 3, 9, 9), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, None),
        ((2, 4, 10, 7), (6, 2, 3, 2), (2, 1), (1, 0), (2, 1), 2, None),
        ((2, 6, 11), (6, 1, 3), (2,), (1,), (2,), 6, None),
        ((2, 9, 8, 3), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, "NHWC"),
        ((1, 3, 5, 6, 7), (4, 3, 3, 2, 3), (1, 2, 1), (1, 0, 1), (1, 1, 2), 1, None),
        ((3, 16, 8, 8), (32, 16, 1, 1), (2, 2), (0, 0), (1, 1), 1, None),
        ((2, 5, 7, 8), (3, 5, 3, 3), (3, 2), (2, 1), (1, 1), 1, None),
        # input channels not a multiple of 16: NCHW data goes channel-last (_mds)
        ((2, 20, 9, 8), (6, 20, 3, 3), (1, 1), (1, 1), (1, 1), 1, None),
        ((2, 12, 10), (4, 12, 3), (1,), (0,), (1,), 1, None)]


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(a).max()))


@pytest.mark.parametrize("xs,ws,s,p,d,g,layout", CONV)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_matches_numba(xs, ws, s, p, d, g, layout, bias):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32) if bias else None
    fwd, bwd = (k3.conv3d_forward, k3.conv3d_backward) if len(xs) == 5 else \
        (kc.conv_forward, kc.conv_backward)
    y0 = fwd(x, w, b, s, p, d, g, layout)
    y1 = oc.conv_forward(x, w, b, s, p, d, g, layout)
    assert y1.shape == y0.shape and y1.dtype == np.float32
    _close(y1, y0)
    dy = rng.standard_normal(y0.shape).astype(np.float32)
    for r0, r1 in zip(bwd(x, w, dy, s, p, d, g, bias, layout),
                      oc.conv_backward(x, w, dy, s, p, d, g, bias, layout)):
        if r0 is None:
            assert r1 is None
        else:
            assert r1.shape == r0.shape
            _close(r1, r0)


@pytest.mark.parametrize("xs,ws,s,p,d,g,adj", [
    ((2, 4, 5, 5), (4, 3, 3, 3), (2, 2), (1, 1), (1, 1), 1, (1, 1)),
    ((2, 4, 5, 6), (4, 2, 3, 3), (1, 2), (0, 1), (2, 1), 2, (0, 0)),
    ((2, 4, 7), (4, 3, 4), (2,), (1,), (1,), 1, (0,)),
    # channel counts per group that fill 8-channel blocks: the blocked layouts
    ((2, 16, 5, 5), (16, 8, 4, 4), (2, 2), (1, 1), (1, 1), 1, (0, 0)),
    ((2, 32, 5, 5), (32, 8, 3, 3), (2, 2), (1, 1), (1, 1), 2, (1, 1)),
    ((2, 16, 7), (16, 8, 4), (2,), (1,), (1,), 1, (0,))])
def test_deconv_matches_numba(xs, ws, s, p, d, g, adj):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[1] * g).astype(np.float32)
    y0 = kc.deconv_forward(x, w, b, s, p, d, g, adj)
    _close(oc.deconv_forward(x, w, b, s, p, d, g, adj), y0)
    dy = rng.standard_normal(y0.shape).astype(np.float32)
    for r0, r1 in zip(kc.deconv_backward(x, w, dy, s, p, d, g, adj, None, True),
                      oc.deconv_backward(x, w, dy, s, p, d, g, adj, True)):
        _close(r1, r0)


def test_deconv_takes_channel_blocks():
    # NCHW data whose channels fill the blocks runs on the direct kernel's blocked layout
    # (oneDNN 3.2's own pick on AVX2 was channel-last)
    x = np.zeros((2, 16, 5, 5), np.float32)
    w = np.zeros((16, 16, 4, 4), np.float32)
    geom, _ = oc.deconv_geom(x, w, (2, 2), (1, 1), (1, 1), 1, (0, 0), False, np.float32)
    prim = geom.fwd(dnn.E.forward_inference)
    for arg in (dnn.E.ARG_SRC, dnn.E.ARG_DST):
        assert prim.md(arg).key[4] == (oc._channel_block(),)


@pytest.mark.parametrize("c,plain_src,cl", [(1, True, False), (3, True, False),
                                            (20, False, True), (32, False, False)])
def test_nchw_layouts_follow_the_input_channels(c, plain_src, cl):
    # few input channels stay plain NCHW, counts that pad badly to 16 go channel-last, the
    # rest are left to oneDNN (blocked)
    x = np.ones((2, c, 8, 8), np.float32)
    w = np.ones((8, c, 3, 3), np.float32)
    geom, _ = oc.conv_geom(x, w, (1, 1), (1, 1), (1, 1), 1, None, False, np.float32)
    src = geom.bwd_data().md(oc.E.ARG_DIFF_SRC)
    assert src.is_plain == plain_src
    strides = src.key[3] if src.key[2] == oc.E.blocked else None
    assert (strides is not None and not src.key[4] and strides[1] == 1) == cl


def test_fused_relu_post_op_and_float64_refused():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3, 3)).astype(np.float32)
    y = oc.conv_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1,
                        post_ops=[("eltwise", dnn.E.eltwise_relu, 0.0, 0.0)])
    _close(y, np.maximum(kc.conv_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1), 0))
    with pytest.raises(dnn.OneDNNUnimplemented):
        oc.conv_forward(x.astype(np.float64), w, None, (1, 1), (1, 1), (1, 1), 1)
    assert dnn.attempt(oc.conv_forward, x.astype(np.float64), w, None, (1, 1), (1, 1),
                       (1, 1), 1) is NotImplemented


@pytest.mark.parametrize("xs,ws,s,p,d", [
    ((4, 16, 2, 2), (24, 16, 3, 3), (1, 1), (1, 1), (1, 1)),
    ((4, 16, 2, 2), (24, 16, 3, 3), (2, 2), (1, 1), (1, 1)),
    ((3, 8, 7, 6), (5, 8, 3, 2), (2, 3), (0, 1), (1, 1)),  # right padding below the left
    ((2, 8, 9, 9), (4, 8, 3, 3), (1, 2), (2, 1), (2, 3))])
@pytest.mark.parametrize("bias,blocked", [(True, None), (False, "nChw8c"), (True, "nhwc")])
def test_batch_gemm_weight_gradient(monkeypatch, xs, ws, s, p, d, bias, blocked):
    # the weight gradient as one im2col GEMM over the batch (taken where oneDNN would run
    # its per-image GEMM kernel), forced here on every geometry it accepts
    monkeypatch.setattr(oc, "_batch_gemm_weights", lambda geom, bw: True)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    y = kc.conv_forward(x, w, None, s, p, d, 1)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    ref = kc.conv_backward(x, w, dy, s, p, d, 1, bias)
    xa, dya = x, dy
    if blocked:  # Tensors in a oneDNN layout, as inside a plan
        tag = getattr(dnn.E, blocked)
        xa = dnn.from_plain(x, dnn.md_tag(xs, np.float32, tag))
        dya = dnn.from_plain(dy, dnn.md_tag(y.shape, np.float32, tag))
    got = oc.conv_backward(xa, w, dya, s, p, d, 1, bias)
    for r0, r1 in zip(ref, got):
        if r0 is None:
            assert r1 is None
        else:
            _close(dnn.to_plain(r1), r0)


@pytest.mark.parametrize("xs,ws,s", [((4, 64, 8, 8), (128, 64, 1, 1), (2, 2)),
                                     ((4, 32, 4, 4), (48, 32, 1, 1), (1, 1))])
def test_pointwise_convolutions_leave_avx2_brgemm_for_jit_1x1(xs, ws, s):
    # where oneDNN's first pick for a 1x1 convolution is a brgemm kernel on AVX2, the
    # primitives run its jit_1x1 one (results unchanged)
    x = np.random.default_rng(5).standard_normal(xs).astype(np.float32)
    w = np.random.default_rng(6).standard_normal(ws).astype(np.float32)
    geom, yshape = oc.conv_geom(x, w, s, (0, 0), (1, 1), 1, None, False, np.float32)
    for prim in (geom.fwd(dnn.E.forward_inference), geom.bwd_data(), geom.bwd_weights()):
        name = prim.impl()
        assert not (name.startswith("brg") and name.endswith(":avx2")), name
    y = oc.conv_forward(x, w, None, s, (0, 0), (1, 1), 1)
    _close(y, kc.conv_forward(x, w, None, s, (0, 0), (1, 1), 1))
    dy = np.random.default_rng(7).standard_normal(yshape).astype(np.float32)
    for r0, r1 in zip(kc.conv_backward(x, w, dy, s, (0, 0), (1, 1), 1, False),
                      oc.conv_backward(x, w, dy, s, (0, 0), (1, 1), 1, False)):
        if r0 is not None:
            _close(r1, r0)


def test_prefer_impl_falls_back_to_the_first_pick():
    x = np.ones((2, 16, 6, 6), np.float32)
    w = np.ones((16, 16, 3, 3), np.float32)
    geom, _ = oc.conv_geom(x, w, (1, 1), (1, 1), (1, 1), 1, None, False, np.float32)
    first = geom.fwd(dnn.E.forward_inference).impl()
    xm, wm, _, ym = geom._mds()

    def create():
        return dnn.create_pd("dnnl_convolution_forward_primitive_desc_create",
                             dnn.E.forward_inference, dnn.E.convolution_direct, xm.ptr, wm.ptr,
                             None, ym.ptr, *geom._geo())
    from sparsym.kernels.onednn import core
    pd = core.prefer_impl(create, lambda n: n == "no such kernel")
    assert core.impl_name(pd) == first
    dnn.load().dnnl_primitive_desc_destroy(pd)
    pd = core.prefer_impl(create, lambda n: n.startswith("ref"))
    assert core.impl_name(pd).startswith("ref")
    dnn.load().dnnl_primitive_desc_destroy(pd)


@pytest.mark.parametrize("bias", [True, False])
def test_weight_gradient_skipped_when_not_needed(bias):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 16, 6, 6)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((2, 8, 6, 6)).astype(np.float32)
    full = oc.conv_backward(x, w, dy, (1, 1), (1, 1), (1, 1), 1, bias)
    dx, dw, db = oc.conv_backward(x, w, dy, (1, 1), (1, 1), (1, 1), 1, bias,
                                  need_weights=False)
    assert dw is None and db is None
    _close(dx, full[0])


@pytest.mark.parametrize("xs,s", [((3, 16, 8, 6), (2, 2)), ((3, 16, 7, 8), (2, 2)),
                                  ((2, 8, 9, 9), (3, 1)),
                                  ((2, 8, 11), (2,))])
def test_strided_pointwise_forward_on_the_pixels_read(xs, s):
    # NumPy data of a strided 1x1 convolution without padding is subsampled, then convolved
    # at stride 1 (also through a non-contiguous input and with a bias and a fused ReLU)
    rng = np.random.default_rng(9)
    x = rng.standard_normal(xs).astype(np.float32)[..., ::-1].copy()
    x = np.swapaxes(np.swapaxes(x, 0, 1).copy(), 0, 1)  # a non-C-contiguous view
    w = rng.standard_normal((5, xs[1]) + (1,) * len(s)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    nd = len(s)
    pad, dil = (0,) * nd, (1,) * nd
    # taken where oneDNN describes the view (odd extents of some strides it does not: those
    # keep the strided primitive)
    if xs[-1] % 2 == 0 and xs[-2] % 2 == 0:
        assert oc._subsampled(np.ascontiguousarray(x), w, s, pad, None) is not None
    assert oc._subsampled(x, w, s, (1,) * nd, None) is None
    ref = kc.conv_forward(x, w, b, s, pad, dil, 1)
    _close(oc.conv_forward(x, w, b, s, pad, dil, 1), ref)
    relu = [("eltwise", dnn.E.eltwise_relu, 0.0, 0.0)]
    _close(oc.conv_forward(x, w, b, s, pad, dil, 1, post_ops=relu), np.maximum(ref, 0))
    # the backward runs on the same pixels: dx is zero at the others; each gradient alone too
    dy = rng.standard_normal(ref.shape).astype(np.float32)
    want = kc.conv_backward(x, w, dy, s, pad, dil, 1, True)
    for got in (oc.conv_backward(x, w, dy, s, pad, dil, 1, True),
                oc.conv_backward(x, w, dy, s, pad, dil, 1, True, need_weights=False),
                oc.conv_backward(x, w, dy, s, pad, dil, 1, True, need_data=False)):
        for g, r in zip(got, want):
            if g is not None:
                _close(g, r)


@pytest.mark.parametrize("pays", [None, True, False])
def test_thread_count_measured_per_primitive(monkeypatch, pays):
    # a primitive offered two threads runs on one where one measured faster (core._PAYS);
    # either count gives the Numba kernels' results. ``None``: the timing itself runs
    from sparsym.kernels import blas
    from sparsym.kernels.onednn import core
    monkeypatch.setattr(core._lib, "max_threads", lambda: 2)
    monkeypatch.setattr(blas, "idle_cores", lambda: 2.0)
    monkeypatch.setattr(core, "SMALL_WORK", 0)
    monkeypatch.setattr(core, "_PAYS", {})
    if pays is not None:
        monkeypatch.setattr(core, "_parallel_pays",
                            lambda key, create, n: core._PAYS.setdefault(key, pays))
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 16, 8, 8)).astype(np.float32)
    w = rng.standard_normal((24, 16, 1, 1)).astype(np.float32)
    y = oc.conv_forward(x, w, None, (2, 2), (0, 0), (1, 1))
    dy = rng.standard_normal(y.shape).astype(np.float32)
    got = oc.conv_backward(x, w, dy, (2, 2), (0, 0), (1, 1), 1, False)
    _close(y, kc.conv_forward(x, w, None, (2, 2), (0, 0), (1, 1), 1))
    for r0, r1 in zip(kc.conv_backward(x, w, dy, (2, 2), (0, 0), (1, 1), 1, False), got):
        assert (r0 is None) == (r1 is None)
        if r0 is not None:
            _close(r1, r0)
    kinds = {k[-1] if k[-1] in ("bwd_data", "bwd_weights") else "fwd" for k in core._PAYS}
    assert kinds == {"fwd", "bwd_data", "bwd_weights"}
    for key, p in core._PAYS.items():
        assert core.primitive(key, None, 1 << 22, tune=True).threads == (2 if p else 1)
