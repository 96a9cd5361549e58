"""Dense conv / deconv / pooling kernels vs naive loop references and numeric gradients."""
import itertools

import numpy as np
import pytest

from sparsym.base import ShapeError
from sparsym.kernels.conv import conv_backward, conv_forward, deconv_backward, deconv_forward
from sparsym.kernels.pool import pool_backward, pool_forward

RNG = np.random.default_rng(0)


# ----------------------------------------------------------------- naive references
def naive_conv(x, w, b, stride, pad, dilate, g):
    """Direct loops over output pixels; 2-D NCHW only (1-D callers add an H axis)."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, pad, dilate
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw), dtype=np.float64)
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, f, oh, ow))
    fg = f // g
    for gi in range(g):
        for fo in range(gi * fg, (gi + 1) * fg):
            for a in range(oh):
                for bb in range(ow):
                    patch = xp[:, gi * cg:(gi + 1) * cg,
                               a * sh:a * sh + dh * (kh - 1) + 1:dh,
                               bb * sw:bb * sw + dw * (kw - 1) + 1:dw]
                    y[:, fo, a, bb] = (patch * w[fo]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def naive_deconv(x, w, b, stride, pad, dilate, g, adj):
    """Scatter each input pixel times the kernel into the (cropped) output."""
    n, cin, h, wd = x.shape
    _, fg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw), (ah, aw) = stride, pad, dilate, adj
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + 1 + ah
    ow = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + 1 + aw
    big = np.zeros((n, fg * g, oh + 2 * ph + kh * dh + sh, ow + 2 * pw + kw * dw + sw))
    cg = cin // g
    for ci in range(cin):
        gi = ci // cg
        for a in range(h):
            for bb in range(wd):
                for i in range(kh):
                    for j in range(kw):
                        big[:, gi * fg:(gi + 1) * fg, a * sh + i * dh, bb * sw + j * dw] += \
                            x[:, ci, a, bb][:, None] * w[ci, :, i, j][None, :]
    y = big[:, :, ph:ph + oh, pw:pw + ow]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def numgrad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    it = np.nditer(a, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = a[i]
        a[i] = old + eps
        fp = f()
        a[i] = old - eps
        fm = f()
        a[i] = old
        g[i] = (fp - fm) / (2 * eps)
    return g


# ----------------------------------------------------------------- conv forward
CONV2D_CASES = [
    # (N, C, H, W, F, k, stride, pad, dilate, group)
    (2, 3, 7, 6, 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (1, 4, 9, 8, 6, (3, 2), (2, 3), (1, 0), (1, 1), 2),
    (2, 4, 10, 9, 4, (3, 3), (1, 2), (2, 1), (2, 2), 4),
    (1, 6, 5, 5, 3, (1, 1), (1, 1), (0, 0), (1, 1), 3),
    (1, 2, 6, 7, 2, (5, 5), (1, 1), (2, 2), (1, 1), 1),
    (3, 2, 4, 4, 5, (4, 4), (2, 2), (0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("case", CONV2D_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_forward(case, dtype):
    n, c, h, wd, f, k, s, p, d, g = case
    x = RNG.standard_normal((n, c, h, wd)).astype(dtype)
    w = RNG.standard_normal((f, c // g) + k).astype(dtype)
    b = RNG.standard_normal(f).astype(dtype)
    y = conv_forward(x, w, b, s, p, d, g)
    assert y.dtype == dtype
    ref = naive_conv(x, w, b, s, p, d, g)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(y, ref, rtol=tol, atol=tol)
    y0 = conv_forward(x, w, None, s, p, d, g)
    np.testing.assert_allclose(y0, ref - b.reshape(1, -1, 1, 1), rtol=tol, atol=tol)


@pytest.mark.parametrize("s,p,d,g", [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 1), (3, 1, 1, 4)])
def test_conv1d_forward(s, p, d, g):
    x = RNG.standard_normal((2, 4, 11))
    w = RNG.standard_normal((4, 4 // g, 3))
    b = RNG.standard_normal(4)
    y = conv_forward(x, w, b, (s,), (p,), (d,), g)
    ref = naive_conv(x[:, :, None], w[:, :, None], b, (1, s), (0, p), (1, d), g)[:, :, 0]
    np.testing.assert_allclose(y, ref, rtol=1e-11, atol=1e-11)


def test_conv_nhwc_layout():
    x = RNG.standard_normal((2, 3, 6, 5))
    w = RNG.standard_normal((4, 3, 3, 3))
    b = RNG.standard_normal(4)
    ref = conv_forward(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    y = conv_forward(x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1), b, (1, 1), (1, 1), (1, 1),
                     1, layout="NHWC")
    np.testing.assert_allclose(y, ref.transpose(0, 2, 3, 1), atol=1e-12)
    dy = RNG.standard_normal(ref.shape)
    dx, dw, db = conv_backward(x, w, dy, (1, 1), (1, 1), (1, 1), 1, True)
    dxl, dwl, dbl = conv_backward(x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1),
                                  dy.transpose(0, 2, 3, 1), (1, 1), (1, 1), (1, 1), 1, True,
                                  layout="NHWC")
    np.testing.assert_allclose(dxl, dx.transpose(0, 2, 3, 1), atol=1e-12)
    np.testing.assert_allclose(dwl, dw.transpose(0, 2, 3, 1), atol=1e-12)
    np.testing.assert_allclose(dbl, db, atol=1e-12)


def test_conv_shape_errors():
    x = np.zeros((1, 4, 5, 5))
    with pytest.raises(ShapeError):
        conv_forward(x, np.zeros((4, 3, 3, 3)), None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ShapeError):
        conv_forward(x, np.zeros((4, 4, 7, 7)), None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ShapeError):
        conv_forward(x, np.zeros((4, 4, 3, 3)), None, (1, 1, 1), (0, 0), (1, 1), 1)


def test_conv_large_batch_chunks(monkeypatch):
    from sparsym.kernels import conv as convmod
    monkeypatch.setattr(convmod, "_COLS_BUDGET", 1)
    x = RNG.standard_normal((5, 2, 5, 4))
    w = RNG.standard_normal((3, 2, 3, 3))
    y = conv_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(y, naive_conv(x, w, None, (1, 1), (1, 1), (1, 1), 1), atol=1e-12)


# ----------------------------------------------------------------- conv backward
@pytest.mark.parametrize("nd,s,p,d,g", [
    (2, (1, 1), (1, 1), (1, 1), 1), (2, (2, 1), (1, 0), (1, 2), 2), (1, (2,), (1,), (2,), 1),
])
def test_conv_backward_numeric(nd, s, p, d, g):
    sp = (5, 4) if nd == 2 else (7,)
    k = (3, 2) if nd == 2 else (3,)
    x = RNG.standard_normal((2, 4) + sp)
    w = RNG.standard_normal((4, 4 // g) + k)
    b = RNG.standard_normal(4)
    y = conv_forward(x, w, b, s, p, d, g)
    r = RNG.standard_normal(y.shape)

    def loss():
        return float((conv_forward(x, w, b, s, p, d, g) * r).sum())

    dx, dw, db = conv_backward(x, w, r, s, p, d, g, True)
    np.testing.assert_allclose(dx, numgrad(loss, x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dw, numgrad(loss, w), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(db, numgrad(loss, b), rtol=1e-6, atol=1e-7)
    assert conv_backward(x, w, r, s, p, d, g, False)[2] is None


def test_conv_backward_float32():
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
    dy = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    dx, dw, db = conv_backward(x, w, dy, (1, 1), (1, 1), (1, 1), 1, True)
    dx64, dw64, db64 = conv_backward(x.astype(np.float64), w.astype(np.float64),
                                     dy.astype(np.float64), (1, 1), (1, 1), (1, 1), 1, True)
    assert dx.dtype == dw.dtype == db.dtype == np.float32
    np.testing.assert_allclose(dx, dx64, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, dw64, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------- deconvolution
DECONV_CASES = [
    # (N, Cin, H, W, F, k, stride, pad, dilate, group, adj)
    (2, 3, 4, 3, 2, (3, 3), (1, 1), (1, 1), (1, 1), 1, (0, 0)),
    (1, 4, 3, 4, 6, (3, 2), (2, 3), (1, 0), (1, 1), 2, (1, 2)),
    (1, 4, 3, 3, 4, (3, 3), (2, 2), (0, 1), (2, 1), 4, (0, 1)),
]


@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconv_forward(case):
    n, cin, h, wd, f, k, s, p, d, g, a = case
    x = RNG.standard_normal((n, cin, h, wd))
    w = RNG.standard_normal((cin, f // g) + k)
    b = RNG.standard_normal(f)
    y = deconv_forward(x, w, b, s, p, d, g, a, None)
    np.testing.assert_allclose(y, naive_deconv(x, w, b, s, p, d, g, a), atol=1e-11)
    y32 = deconv_forward(x.astype(np.float32), w.astype(np.float32), None, s, p, d, g, a)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, y - b.reshape(1, -1, 1, 1), rtol=1e-4, atol=1e-4)


def test_deconv_target_shape_and_1d():
    x = RNG.standard_normal((1, 2, 5, 5))
    w = RNG.standard_normal((2, 3, 4, 4))
    for t in [(10, 10), (11, 9), (12, 12)]:
        y = deconv_forward(x, w, None, (2, 2), (0, 0), (1, 1), 1, (0, 0), t)
        assert y.shape[2:] == t
    x1 = RNG.standard_normal((2, 2, 6))
    w1 = RNG.standard_normal((2, 3, 3))
    y1 = deconv_forward(x1, w1, None, (2,), (1,), (1,), 1, (1,), None)
    ref = naive_deconv(x1[:, :, None], w1[:, :, None], None, (1, 2), (0, 1), (1, 1), 1, (0, 1))
    np.testing.assert_allclose(y1, ref[:, :, 0], atol=1e-12)
    with pytest.raises(ShapeError):
        deconv_forward(x, w, None, (2, 2), (0, 0), (1, 1), 1, (0, 0), (40, 40))


@pytest.mark.parametrize("nd,s,p,d,g,a", [
    (2, (2, 1), (1, 0), (1, 1), 1, (1, 0)), (2, (1, 2), (0, 1), (2, 1), 2, (0, 1)),
    (1, (3,), (1,), (1,), 2, (2,)),
])
def test_deconv_backward_numeric(nd, s, p, d, g, a):
    sp = (3, 4) if nd == 2 else (4,)
    k = (3, 2) if nd == 2 else (3,)
    x = RNG.standard_normal((2, 4) + sp)
    w = RNG.standard_normal((4, 4 // g) + k)
    b = RNG.standard_normal(4)
    y = deconv_forward(x, w, b, s, p, d, g, a, None)
    r = RNG.standard_normal(y.shape)

    def loss():
        return float((deconv_forward(x, w, b, s, p, d, g, a, None) * r).sum())

    dx, dw, db = deconv_backward(x, w, r, s, p, d, g, a, None, True)
    np.testing.assert_allclose(dx, numgrad(loss, x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dw, numgrad(loss, w), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(db, numgrad(loss, b), rtol=1e-6, atol=1e-7)


# ----------------------------------------------------------------- pooling
def naive_pool(x, k, s, p, ptype, conv, cip):
    n, c, h, wd = x.shape
    (kh, kw), (sh, sw), (ph, pw) = k, s, p
    if conv == "valid":
        oh = (h + 2 * ph - kh) // sh + 1
        ow = (wd + 2 * pw - kw) // sw + 1
    else:
        oh = -(-(h + 2 * ph - kh) // sh) + 1
        ow = -(-(wd + 2 * pw - kw) // sw) + 1
    y = np.zeros((n, c, oh, ow))
    for a, bb in itertools.product(range(oh), range(ow)):
        hs, ws = a * sh - ph, bb * sw - pw
        he, we = min(hs + kh, h + ph), min(ws + kw, wd + pw)
        area_pad = (he - hs) * (we - ws)
        h0, w0, h1, w1 = max(hs, 0), max(ws, 0), min(he, h), min(we, wd)
        win = x[:, :, h0:h1, w0:w1]
        if ptype == "max":
            y[:, :, a, bb] = win.max(axis=(2, 3))
        elif ptype == "sum":
            y[:, :, a, bb] = win.sum(axis=(2, 3))
        else:
            den = area_pad if cip else (h1 - h0) * (w1 - w0)
            y[:, :, a, bb] = win.sum(axis=(2, 3)) / den
    return y


POOL_CASES = [
    ((3, 3), (2, 2), (1, 1), "valid"), ((3, 3), (2, 2), (1, 1), "full"),
    ((2, 3), (1, 2), (0, 1), "full"), ((2, 2), (2, 2), (0, 0), "valid"),
    ((3, 2), (3, 2), (1, 0), "full"),
]


@pytest.mark.parametrize("k,s,p,conv", POOL_CASES)
@pytest.mark.parametrize("ptype", ["max", "avg", "sum"])
@pytest.mark.parametrize("cip", [True, False])
def test_pool_forward(k, s, p, conv, ptype, cip):
    x = RNG.standard_normal((2, 3, 7, 6))
    y = pool_forward(x, k, s, p, ptype, False, conv, cip)
    np.testing.assert_allclose(y, naive_pool(x, k, s, p, ptype, conv, cip), atol=1e-12)
    y32 = pool_forward(x.astype(np.float32), k, s, p, ptype, False, conv, cip)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, y, rtol=1e-5, atol=1e-5)


def test_pool_global_and_1d():
    x = RNG.standard_normal((2, 3, 5, 4))
    np.testing.assert_allclose(pool_forward(x, (2, 2), (1, 1), (1, 1), "max", True),
                               x.max(axis=(2, 3), keepdims=True))
    np.testing.assert_allclose(pool_forward(x, (), (), (), "avg", True),
                               x.mean(axis=(2, 3), keepdims=True), atol=1e-12)
    x1 = RNG.standard_normal((2, 3, 9))
    y1 = pool_forward(x1, (3,), (2,), (1,), "avg", False, "full", True)
    ref = naive_pool(x1[:, :, None], (1, 3), (1, 2), (0, 1), "avg", "full", True)[:, :, 0]
    np.testing.assert_allclose(y1, ref, atol=1e-12)
    np.testing.assert_allclose(pool_forward(x1, (), (), (), "sum", True),
                               x1.sum(axis=2, keepdims=True), atol=1e-12)


@pytest.mark.parametrize("k,s,p,conv", POOL_CASES[:3])
@pytest.mark.parametrize("ptype,cip", [("max", True), ("avg", True), ("avg", False),
                                       ("sum", True)])
def test_pool_backward_numeric(k, s, p, conv, ptype, cip):
    x = RNG.standard_normal((1, 2, 5, 6))
    y = pool_forward(x, k, s, p, ptype, False, conv, cip)
    r = RNG.standard_normal(y.shape)

    def loss():
        return float((pool_forward(x, k, s, p, ptype, False, conv, cip) * r).sum())

    dx = pool_backward(x, y, r, k, s, p, ptype, False, conv, cip)
    np.testing.assert_allclose(dx, numgrad(loss, x), rtol=1e-6, atol=1e-7)


def test_pool_backward_max_ties_first():
    x = np.zeros((1, 1, 2, 2))
    dy = np.ones((1, 1, 1, 1))
    dx = pool_backward(x, np.zeros_like(dy), dy, (2, 2), (2, 2), (0, 0), "max")
    np.testing.assert_array_equal(dx[0, 0], [[1, 0], [0, 0]])
    xg = RNG.standard_normal((1, 2, 3, 3))
    dyg = RNG.standard_normal((1, 2, 1, 1))
    dxg = pool_backward(xg, None, dyg, (), (), (), "avg", True)
    np.testing.assert_allclose(dxg, np.broadcast_to(dyg / 9, xg.shape))


@pytest.mark.parametrize("layout", [None, "NHWC"])
@pytest.mark.parametrize("case", [c for c in CONV2D_CASES if c[-1] == 1]
                         + [(2, 3, 9, 7, 4, (3, 3), (2, 1), (1, 2), (2, 1), 1),
                            (2, 5, 4, 6, 3, (1, 1), (1, 1), (0, 0), (1, 1), 1)])
def test_conv_row_stripes(monkeypatch, layout, case):
    """One output row per stripe (one pixel per chunk for 1x1), chunks on worker threads
    (the even/odd col2im phases): forward matches the reference and backward the numeric
    gradient, in both layouts."""
    from sparsym.kernels import _parallel
    from sparsym.kernels import conv as convmod
    monkeypatch.setattr(convmod, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
    n, c, h, wd, f, k, s, p, d, _ = case
    x = RNG.standard_normal((n, c, h, wd))
    w = RNG.standard_normal((f, c) + k)
    b = RNG.standard_normal(f)
    ref = naive_conv(x, w, b, s, p, d, 1)
    cl = layout == "NHWC"
    to_cl = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) if cl else (lambda a: a)
    xl, wl = to_cl(x), to_cl(w)
    y = conv_forward(xl, wl, b, s, p, d, 1, layout)
    np.testing.assert_allclose(y, to_cl(ref), atol=1e-11)
    r = RNG.standard_normal(y.shape)

    def loss():
        return float((conv_forward(xl, wl, b, s, p, d, 1, layout) * r).sum())

    dx, dw, db = conv_backward(xl, wl, r, s, p, d, 1, True, layout)
    np.testing.assert_allclose(dx, numgrad(loss, xl), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dw, numgrad(loss, wl), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(db, numgrad(loss, b), rtol=1e-6, atol=1e-7)
