"""Dense Convolution / Deconvolution kernels (MXNet 1.x semantics) via im2col + BLAS GEMM.

Layouts: data NCHW (2-D) or NCW (1-D); conv weight (num_filter, C/num_group, kh, kw);
deconv weight (C_in, num_filter/num_group, kh, kw).  ``layout='NHWC'|'NWC'`` on the conv
entry points takes channel-last data and (num_filter, kh, kw, C/num_group) weights.
All functions are pure: they return new arrays and never alias or modify their inputs.
"""
from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from ..base import ShapeError
from . import _parallel, blas
from ._parallel import workspace

__all__ = [
    "conv_forward", "conv_backward", "deconv_forward", "deconv_backward",
    "im2col", "col2im", "conv_out_size", "deconv_out_size",
]

# Upper bound on the im2col workspace of one GEMM batch (bytes); images are chunked to fit.
_COLS_BUDGET = 64 << 20
# The im2col/col2im loops are deliberately serial: OpenBLAS worker threads keep spinning
# after each GEMM, and a numba parallel region started right after one stalls for
# milliseconds on a 2-core box (measured: 5-50x slower than the serial loop).
# Ungrouped convolutions run by stripes of output rows whose im2col operand is about this
# big (L2-resident; 1-2 MB measured best at 400x704x24), one GEMM per stripe written straight
# into the output; stripes are tasks for kernels/_parallel.py (one BLAS thread per worker).
_CHUNK_BYTES = 1 << 21


# --------------------------------------------------------------------------- numba core
@njit(cache=True, inline="always")
def _valid_range(off, stride, size, nout):
    """Output positions o in [lo, hi) with 0 <= o*stride + off < size."""
    if off >= 0:
        lo = 0
    else:
        lo = (-off + stride - 1) // stride
    last = size - 1 - off
    if last < 0:
        hi = 0
    else:
        hi = last // stride + 1
    if hi > nout:
        hi = nout
    if lo > hi:
        lo = hi
    return lo, hi


@njit(cache=True)
def _im2col_kernel(x, cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    n_img, n_ch, h_in, w_in = x.shape
    kk = kh * kw
    rows = n_ch * kk
    for t in range(n_img * rows):
        n = t // rows
        r = t - n * rows
        c = r // kk
        ij = r - c * kk
        i = ij // kw
        j = ij - i * kw
        off_w = j * dw - pw
        lo, hi = _valid_range(off_w, sw, w_in, ow)
        for a in range(oh):
            ih = a * sh - ph + i * dh
            base = a * ow
            if ih < 0 or ih >= h_in:
                for b in range(ow):
                    cols[n, r, base + b] = 0
            else:
                for b in range(lo):
                    cols[n, r, base + b] = 0
                if sw == 1:
                    for b in range(lo, hi):
                        cols[n, r, base + b] = x[n, c, ih, b + off_w]
                else:
                    for b in range(lo, hi):
                        cols[n, r, base + b] = x[n, c, ih, b * sw + off_w]
                for b in range(hi, ow):
                    cols[n, r, base + b] = 0


@njit(cache=True)
def _col2im_kernel(cols, x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    # accumulates into x (zero-initialised by the caller)
    n_img, n_ch, h_in, w_in = x.shape
    for t in range(n_img * n_ch):
        n = t // n_ch
        c = t - n * n_ch
        for i in range(kh):
            for j in range(kw):
                r = (c * kh + i) * kw + j
                off_w = j * dw - pw
                lo, hi = _valid_range(off_w, sw, w_in, ow)
                for a in range(oh):
                    ih = a * sh - ph + i * dh
                    if ih < 0 or ih >= h_in:
                        continue
                    base = a * ow
                    for b in range(lo, hi):
                        x[n, c, ih, b * sw + off_w] += cols[n, r, base + b]


# --------------------------------------------------------------------------- helpers
def _tup(v, nd, name, default):
    if v is None:
        return (default,) * nd
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(e) for e in v)
    if len(v) == 0:
        return (default,) * nd
    if len(v) != nd:
        raise ShapeError(f"{name}={v} has {len(v)} entries but the data has {nd} spatial dims")
    return v


def _geom(x, stride, pad, dilate):
    """Normalise to 2-D (NCHW) geometry; returns (nd, stride2, pad2, dilate2)."""
    nd = x.ndim - 2
    if nd not in (1, 2):
        raise ShapeError(f"conv kernels support 1-D (NCW) and 2-D (NCHW) data, got ndim={x.ndim}")
    s = _tup(stride, nd, "stride", 1)
    p = _tup(pad, nd, "pad", 0)
    d = _tup(dilate, nd, "dilate", 1)
    if min(s) < 1 or min(d) < 1 or min(p) < 0:
        raise ShapeError(f"invalid stride={s} pad={p} dilate={d}")
    if nd == 1:
        s, p, d = (1,) + s, (0,) + p, (1,) + d
    return nd, s, p, d


def _to4(a, nd):
    return a[:, :, None, :] if nd == 1 else a


def _float_dtype(*arrs):
    dt = np.result_type(*[a.dtype for a in arrs if a is not None])
    if dt not in (np.float32, np.float64):
        dt = np.dtype(np.float64) if dt.itemsize > 4 or dt.kind in "iu" else np.dtype(np.float32)
    return dt


def conv_out_size(size, k, stride, pad, dilate):
    """Convolution output extent: floor((size + 2*pad - dilate*(k-1) - 1)/stride) + 1."""
    return (size + 2 * pad - dilate * (k - 1) - 1) // stride + 1


def deconv_out_size(size, k, stride, pad, dilate, adj):
    """Deconvolution output extent: (size-1)*stride - 2*pad + dilate*(k-1) + 1 + adj."""
    return (size - 1) * stride - 2 * pad + dilate * (k - 1) + 1 + adj


def im2col(x, ksize, stride, pad, dilate, out_hw, out=None):
    """x (N,C,H,W) -> cols (N, C*kh*kw, OH*OW); row index (c*kh+i)*kw+j, zero where padded."""
    x = np.ascontiguousarray(x)
    n, c = x.shape[:2]
    oh, ow = out_hw
    cols = np.empty((n, c * ksize[0] * ksize[1], oh * ow), dtype=x.dtype) if out is None else out
    _im2col_kernel(x, cols, ksize[0], ksize[1], stride[0], stride[1], pad[0], pad[1],
                   dilate[0], dilate[1], oh, ow)
    return cols


def col2im(cols, x_shape, ksize, stride, pad, dilate, out_hw):
    """Adjoint of im2col: cols (N, C*kh*kw, OH*OW) summed into a new (N,C,H,W) array."""
    x = np.zeros(x_shape, dtype=cols.dtype)
    _col2im_kernel(np.ascontiguousarray(cols), x, ksize[0], ksize[1], stride[0], stride[1],
                   pad[0], pad[1], dilate[0], dilate[1], out_hw[0], out_hw[1])
    return x


def _chunk(n, rows, l_out, itemsize):
    per = max(1, rows * l_out * itemsize)
    return max(1, min(n, _COLS_BUDGET // per))


def _channel_last_in(x, w, layout, nd):
    """Convert channel-last data/weights to channel-first; returns (x, w, is_channel_last)."""
    if layout is None or layout in ("NCHW", "NCW"):
        return x, w, False
    if layout not in ("NHWC", "NWC"):
        raise ShapeError(f"unsupported layout {layout!r}")
    perm = (0, x.ndim - 1) + tuple(range(1, x.ndim - 1))
    return x.transpose(perm), (None if w is None else w.transpose(perm)), True


def _channel_last_out(a, nd):
    perm = (0,) + tuple(range(2, a.ndim)) + (1,)
    return np.ascontiguousarray(a.transpose(perm))


def _check_layout(layout):
    """True for channel-last layouts; typed error for unknown ones."""
    if layout is None or layout in ("NCHW", "NCW"):
        return False
    if layout not in ("NHWC", "NWC"):
        raise ShapeError(f"unsupported layout {layout!r}")
    return True


def _as4(a, nd, cl, dt):
    """Data or weight as a contiguous 4-D array of dtype dt (1-D gets a unit H axis)."""
    if nd == 1:
        a = a[:, None, :, :] if cl else a[:, :, None, :]
    return np.ascontiguousarray(a, dtype=dt)


def _stripes(n, oh, row_bytes):
    """(image, first row, end row) stripes of output rows whose im2col operand is ~CHUNK."""
    rows = max(1, min(oh, _CHUNK_BYTES // max(1, row_bytes)))
    return rows, [(a, r0, min(oh, r0 + rows)) for a in range(n) for r0 in range(0, oh, rows)]


class _Conv:
    """Geometry of one ungrouped 2-D convolution in either layout (internal).

    The im2col operand of a stripe of output rows is a strided *view* of the zero-padded
    input, materialised with one ``np.copyto`` (measured 5-8x faster than a numba
    per-pixel loop: NumPy's copy loops run the contiguous kw*C / OW runs at memcpy speed).
    """

    def __init__(self, x4, w4, s, p, d, cl):
        self.cl = cl
        if cl:
            self.n, self.h, self.w, self.c = x4.shape
            self.f, self.kh, self.kw, cw = w4.shape
        else:
            self.n, self.c, self.h, self.w = x4.shape
            self.f, cw, self.kh, self.kw = w4.shape
        if cw != self.c:
            raise ShapeError(f"weight {w4.shape} does not match data {x4.shape} channels")
        self.s, self.p, self.d = s, p, d
        self.oh = conv_out_size(self.h, self.kh, s[0], p[0], d[0])
        self.ow = conv_out_size(self.w, self.kw, s[1], p[1], d[1])
        self.k = self.c * self.kh * self.kw
        # weights as (F, K) in the column order of the im2col operand of the layout
        self.wm = w4.reshape(self.f, self.k)

    @property
    def pointwise(self):
        """1x1, stride 1, no padding: the convolution is a plain GEMM on the pixels."""
        return (self.kh == self.kw == 1 and self.s == (1, 1) and self.p == (0, 0))

    def out_shape(self):
        if self.cl:
            return (self.n, self.oh, self.ow, self.f)
        return (self.n, self.f, self.oh, self.ow)

    def _padded_shape(self):
        hp, wp = self.h + 2 * self.p[0], self.w + 2 * self.p[1]
        return (self.n, hp, wp, self.c) if self.cl else (self.n, self.c, hp, wp)

    def _interior(self, xp):
        (ph, pw), h, w = self.p, self.h, self.w
        return xp[:, ph:ph + h, pw:pw + w] if self.cl else xp[:, :, ph:ph + h, pw:pw + w]

    def padded(self, x4):
        """x4 zero-padded (a reused workspace; x4 itself without padding)."""
        if self.p == (0, 0):
            return x4
        xp = workspace(self._padded_shape(), x4.dtype, 9)
        (ph, pw), h, w = self.p, self.h, self.w
        # zero only the border, then copy the interior
        sp = xp if self.cl else xp.transpose(0, 2, 3, 1)
        sp[:, :ph] = 0
        sp[:, ph + h:] = 0
        sp[:, ph:ph + h, :pw] = 0
        sp[:, ph:ph + h, pw + w:] = 0
        self._interior(xp)[...] = x4
        return xp

    def zeros_padded(self, dtype):
        """A zeroed accumulator shaped like the padded input."""
        return np.zeros(self._padded_shape(), dtype=dtype)

    def crop(self, xp):
        """The unpadded part of a padded array (a new contiguous array)."""
        return xp if self.p == (0, 0) else np.ascontiguousarray(self._interior(xp))

    def _window(self, xp, a, r0, r1):
        """Strided view (R, OW, kh, kw, C) (cl) or (C, kh, kw, R, OW) of stripe r0..r1-1."""
        (sh, sw), (dh, dw) = self.s, self.d
        if self.cl:
            base = xp[a, r0 * sh:]
            s_h, s_w, s_c = base.strides
            shape = (r1 - r0, self.ow, self.kh, self.kw, self.c)
            strides = (sh * s_h, sw * s_w, dh * s_h, dw * s_w, s_c)
        else:
            base = xp[a, :, r0 * sh:]
            s_c, s_h, s_w = base.strides
            shape = (self.c, self.kh, self.kw, r1 - r0, self.ow)
            strides = (s_c, dh * s_h, dw * s_w, sh * s_h, sw * s_w)
        return as_strided(base, shape=shape, strides=strides, writeable=False)

    def cols(self, xp, a, r0, r1, slot):
        """im2col operand of output rows r0..r1-1 of image a: (P, K) if cl else (K, P)."""
        p = (r1 - r0) * self.ow
        win = self._window(xp, a, r0, r1)
        cols = workspace((p, self.k) if self.cl else (self.k, p), xp.dtype, slot)
        np.copyto(cols.reshape(win.shape), win)
        return cols

    def col2im(self, dcols, dxp, a, r0, r1):
        """dxp (padded) += adjoint of cols(a, r0, r1) applied to dcols, one tap at a time
        (for a fixed tap the destination view never overlaps itself)."""
        (sh, sw), (dh, dw), r = self.s, self.d, r1 - r0
        if self.cl:
            src = dcols.reshape(r, self.ow, self.kh, self.kw, self.c)
            s_h, s_w, s_c = dxp.strides[1:]
            shape, strides = (r, self.ow, self.c), (sh * s_h, sw * s_w, s_c)
        else:
            src = dcols.reshape(self.c, self.kh, self.kw, r, self.ow)
            s_c, s_h, s_w = dxp.strides[1:]
            shape, strides = (self.c, r, self.ow), (s_c, sh * s_h, sw * s_w)
        for i in range(self.kh):
            for j in range(self.kw):
                if self.cl:
                    base, part = dxp[a, r0 * sh + i * dh, j * dw:], src[:, :, i, j]
                else:
                    base, part = dxp[a, :, r0 * sh + i * dh, j * dw:], src[:, i, j]
                dst = as_strided(base, shape=shape, strides=strides)
                np.add(dst, part, out=dst)

    def out_rows(self, y, a, r0, r1):
        """View of output rows r0..r1-1 of image a as (P, F) (cl) or (F, P)."""
        if self.cl:
            return y[a, r0:r1].reshape(-1, self.f)
        return y[a, :, r0:r1].reshape(self.f, -1)


def _gemm_into(cv, op, out, bias):
    """out = op @ W^T (cl: op (P, K), out (P, F)) or W @ op (op (K, P), out (F, P)), + bias."""
    if cv.cl:
        np.matmul(op, cv.wm.T, out=out)
        if bias is not None:
            out += bias
    else:
        np.matmul(cv.wm, op, out=out)
        if bias is not None:
            out += bias[:, None]


def _fwd_stripe(cv, xp, y, bias, a, r0, r1):
    """y rows r0..r1-1 of image a = W @ im2col (+ bias), written in place."""
    _gemm_into(cv, cv.cols(xp, a, r0, r1, 8), cv.out_rows(y, a, r0, r1), bias)


def _bwd_stripes(cv, xp, dy4, dxp, stripes, need_bias):
    """dx contributions of the stripes (accumulated into the padded dxp); returns
    (dW part, db part)."""
    dwm = np.zeros_like(cv.wm)
    db = np.zeros(cv.f, dtype=dwm.dtype) if need_bias else None
    for a, r0, r1 in stripes:
        cols = cv.cols(xp, a, r0, r1, 8)
        g = cv.out_rows(dy4, a, r0, r1)
        if cv.cl:
            dwm += g.T @ cols
            if need_bias:
                db += g.sum(axis=0)
            dcols = np.matmul(g, cv.wm, out=cols)
        else:
            # dW^T = cols @ g^T: OpenBLAS runs this orientation faster than g @ cols^T
            dwm += (cols @ g.T).T
            if need_bias:
                db += g.sum(axis=1)
            dcols = np.matmul(cv.wm.T, g, out=cols)
        cv.col2im(dcols, dxp, a, r0, r1)
    return dwm, db


def _stripe_phases(cv, rows, stripes):
    """Groups of stripes whose input footprints are disjoint within a group.

    Stripe t reads input rows [t*R*sh - ph, (t+1)*R*sh - sh - ph + (kh-1)*dh]; stripes t and
    t+2 never share a row when R*sh + sh > (kh-1)*dh, so even and odd stripes form two
    phases whose col2im writes can run concurrently.  Otherwise one serial group.
    """
    if rows * cv.s[0] + cv.s[0] <= (cv.kh - 1) * cv.d[0]:
        return [[stripes]]
    nw = _parallel.workers()
    phases = []
    for parity in (0, 1):
        mine = [st for st in stripes if (st[1] // rows) % 2 == parity]
        if mine:
            parts = _parallel.split(len(mine), 2 * nw)
            phases.append([mine[i:j] for i, j in parts])
    return phases


def _pixel_chunks(cv):
    """(image, first pixel, end pixel) chunks of a pointwise conv, ~CHUNK/2 bytes of
    input + output each (measured: 1.7x faster than one multi-threaded GEMM for 24->96)."""
    npx = cv.oh * cv.ow
    per = max(1, min(npx, (_CHUNK_BYTES // 2) // (4 * (cv.c + cv.f))))
    if cv.cl:   # channel-last pixels of all images are one (N*H*W, C) matrix
        total = cv.n * npx
        return [(None, a, min(total, a + per)) for a in range(0, total, per)]
    return [(i, a, min(npx, a + per)) for i in range(cv.n) for a in range(0, npx, per)]


def _pw_views(cv, arr, width, img, a, b):
    """Pixels a..b-1 of arr as (P, width) (cl; img ignored) or (width, P) of image img."""
    if cv.cl:
        return arr.reshape(-1, width)[a:b]
    return arr.reshape(cv.n, width, -1)[img, :, a:b]


def _pw_fwd(cv, x4, y, bias, img, a, b):
    """Pointwise forward of one pixel chunk."""
    _gemm_into(cv, _pw_views(cv, x4, cv.c, img, a, b), _pw_views(cv, y, cv.f, img, a, b), bias)


def _pw_bwd(cv, x4, dy4, dx, need_bias, img, a, b):
    """Pointwise backward of one pixel chunk: writes dx, returns (dW part, db part)."""
    xs, gs = _pw_views(cv, x4, cv.c, img, a, b), _pw_views(cv, dy4, cv.f, img, a, b)
    dxs = _pw_views(cv, dx, cv.c, img, a, b)
    if cv.cl:
        np.matmul(gs, cv.wm, out=dxs)
        return gs.T @ xs, (gs.sum(axis=0) if need_bias else None)
    np.matmul(cv.wm.T, gs, out=dxs)
    return (xs @ gs.T).T, (gs.sum(axis=1) if need_bias else None)


def _conv_fwd_fast(x4, w4, b, s, p, d, cl):
    """Ungrouped forward: pixel-row stripes -> im2col -> GEMM straight into the output."""
    cv = _Conv(x4, w4, s, p, d, cl)
    if cv.oh <= 0 or cv.ow <= 0:
        raise ShapeError(f"convolution output would be empty: data {x4.shape}, kernel "
                         f"{w4.shape}")
    dt = x4.dtype
    bias = None if b is None else np.ascontiguousarray(b, dtype=dt).reshape(-1)
    y = np.empty(cv.out_shape(), dtype=dt)
    if cv.pointwise:
        with blas.single_blas():
            _parallel.run([partial(_pw_fwd, cv, x4, y, bias, *pc) for pc in _pixel_chunks(cv)],
                          work=x4.size * cv.f)
        return y
    _, stripes = _stripes(cv.n, cv.oh, cv.ow * cv.k * x4.itemsize)
    xp = cv.padded(x4)
    tasks = [partial(_fwd_stripe, cv, xp, y, bias, *st) for st in stripes]
    with blas.single_blas():
        _parallel.run(tasks, work=cv.n * cv.oh * cv.ow * cv.wm.size)
    return y


def _conv_bwd_fast(x4, w4, dy4, s, p, d, cl, need_bias):
    """Ungrouped backward of _conv_fwd_fast: returns (dx, dW as (F, K), db)."""
    cv = _Conv(x4, w4, s, p, d, cl)
    if dy4.shape != cv.out_shape():
        raise ShapeError(f"dy shape {dy4.shape} does not match the convolution output "
                         f"{cv.out_shape()}")
    if cv.pointwise:
        dx = np.empty_like(x4)
        with blas.single_blas():
            parts = _parallel.run([partial(_pw_bwd, cv, x4, dy4, dx, need_bias, *pc)
                                   for pc in _pixel_chunks(cv)], work=2 * x4.size * cv.f)
        dwm = sum(pw_ for pw_, _ in parts)
        db = sum(pb for _, pb in parts) if need_bias else None
        return dx, dwm, db
    dxp = cv.zeros_padded(x4.dtype)
    xp = cv.padded(x4)
    rows, stripes = _stripes(cv.n, cv.oh, cv.ow * cv.k * x4.itemsize)
    dwm = np.zeros_like(cv.wm)
    db = np.zeros(cv.f, dtype=x4.dtype) if need_bias else None
    with blas.single_blas():
        for phase in _stripe_phases(cv, rows, stripes):
            parts = _parallel.run([partial(_bwd_stripes, cv, xp, dy4, dxp, grp, need_bias)
                                   for grp in phase],
                                  work=2 * cv.n * cv.oh * cv.ow * cv.wm.size)
            for pw_, pb in parts:
                dwm += pw_
                if need_bias:
                    db += pb
    return cv.crop(dxp), dwm, db


# --------------------------------------------------------------------------- convolution
def conv_forward(x, w, b, stride, pad, dilate, num_group=1, layout=None):
    """y = Convolution(x, w, b): x NCHW/NCW, w (F, C/G, kh[, kw]), b (F,) or None -> y NCHW/NCW.

    With ``layout='NHWC'|'NWC'`` data, weights (F, kh[, kw], C/G) and output are channel-last.
    """
    cl = _check_layout(layout)
    g = int(num_group)
    if g != 1:
        return _conv_forward_grouped(x, w, b, stride, pad, dilate, g, layout)
    nd, s, p, d = _geom(x, stride, pad, dilate)
    dt = _float_dtype(x, w, b)
    if w.ndim != x.ndim:
        raise ShapeError(f"weight {w.shape} incompatible with data {x.shape}")
    y = _conv_fwd_fast(_as4(x, nd, cl, dt), _as4(w, nd, cl, dt), b, s, p, d, cl)
    if nd == 1:
        y = y[:, 0] if cl else y[:, :, 0]
    return y


def conv_backward(x, w, dy, stride, pad, dilate, num_group=1, need_bias=True, layout=None):
    """Gradients of conv_forward: returns (dx like x, dw like w, db (F,) or None)."""
    cl = _check_layout(layout)
    g = int(num_group)
    if g != 1:
        return _conv_backward_grouped(x, w, dy, stride, pad, dilate, g, need_bias, layout)
    nd, s, p, d = _geom(x, stride, pad, dilate)
    dt = _float_dtype(x, w, dy)
    if w.ndim != x.ndim or dy.ndim != x.ndim:
        raise ShapeError(f"weight {w.shape} / dy {dy.shape} incompatible with data {x.shape}")
    x4, w4 = _as4(x, nd, cl, dt), _as4(w, nd, cl, dt)
    dx, dwm, db = _conv_bwd_fast(x4, w4, _as4(dy, nd, cl, dt), s, p, d, cl, need_bias)
    dw = dwm.reshape(w4.shape)
    if nd == 1:
        dx, dw = (dx[:, 0], dw[:, 0]) if cl else (dx[:, :, 0], dw[:, :, 0])
    return dx, dw, db


def _conv_forward_grouped(x, w, b, stride, pad, dilate, num_group, layout):
    """Grouped convolution: batched im2col + stacked GEMM in NCHW."""
    nd = x.ndim - 2
    x, w, cl = _channel_last_in(x, w, layout, nd)
    nd, s, p, d = _geom(x, stride, pad, dilate)
    dt = _float_dtype(x, w, b)
    x4 = np.ascontiguousarray(_to4(x, nd), dtype=dt)
    w4 = np.ascontiguousarray(_to4(w, nd), dtype=dt)
    n, c, h, wd = x4.shape
    f, cg, kh, kw = w4.shape
    g = int(num_group)
    if g < 1 or c % g or f % g or cg != c // g:
        raise ShapeError(f"weight {w.shape} incompatible with data {x.shape} and num_group={g}")
    oh = conv_out_size(h, kh, s[0], p[0], d[0])
    ow = conv_out_size(wd, kw, s[1], p[1], d[1])
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"convolution output would be empty: data {x.shape}, kernel {w.shape}")
    y = np.empty((n, f, oh, ow), dtype=dt)
    _conv_im2col(x4, w4, y, s, p, d, g)
    if b is not None:
        y += np.asarray(b, dtype=dt).reshape(1, f, 1, 1)
    if nd == 1:
        y = y[:, :, 0, :]
    return _channel_last_out(y, nd) if cl else y


def _conv_im2col(x4, w4, y, s, p, d, g):
    n, c, h, wd = x4.shape
    f, cg, kh, kw = w4.shape
    oh, ow = y.shape[2:]
    L = oh * ow
    kg = cg * kh * kw
    dt = x4.dtype
    wg = w4.reshape(g, f // g, kg)
    nb = _chunk(n, c * kh * kw, L, x4.itemsize)
    for n0 in range(0, n, nb):
        n1 = min(n, n0 + nb)
        ws = workspace((n1 - n0, c * kh * kw, L), dt, 10)
        cols = im2col(x4[n0:n1], (kh, kw), s, p, d, (oh, ow), out=ws)
        np.matmul(wg, cols.reshape(n1 - n0, g, kg, L),
                  out=y[n0:n1].reshape(n1 - n0, g, f // g, L))


def _conv_backward_grouped(x, w, dy, stride, pad, dilate, num_group, need_bias, layout):
    """Gradients of _conv_forward_grouped."""
    nd = x.ndim - 2
    x, w, cl = _channel_last_in(x, w, layout, nd)
    if cl:
        dy = dy.transpose((0, dy.ndim - 1) + tuple(range(1, dy.ndim - 1)))
    nd, s, p, d = _geom(x, stride, pad, dilate)
    dt = _float_dtype(x, w, dy)
    x4 = np.ascontiguousarray(_to4(x, nd), dtype=dt)
    w4 = np.ascontiguousarray(_to4(w, nd), dtype=dt)
    dy4 = np.ascontiguousarray(_to4(dy, nd), dtype=dt)
    n, c, h, wd = x4.shape
    f, cg, kh, kw = w4.shape
    g = int(num_group)
    oh, ow = dy4.shape[2:]
    if dy4.shape[:2] != (n, f) or oh != conv_out_size(h, kh, s[0], p[0], d[0]) \
            or ow != conv_out_size(wd, kw, s[1], p[1], d[1]):
        raise ShapeError(f"dy shape {dy.shape} does not match the convolution output")
    L = oh * ow
    kg = cg * kh * kw
    fg = f // g
    wg = w4.reshape(g, fg, kg)
    wgt = wg.transpose(0, 2, 1)
    dx = np.empty_like(x4)
    dwg = np.zeros((g, fg, kg), dtype=dt)
    nb = _chunk(n, c * kh * kw, L, x4.itemsize)
    for n0 in range(0, n, nb):
        n1 = min(n, n0 + nb)
        m = n1 - n0
        ws = workspace((m, c * kh * kw, L), dt, 10)
        cols = im2col(x4[n0:n1], (kh, kw), s, p, d, (oh, ow), out=ws).reshape(m, g, kg, L)
        dyg = dy4[n0:n1].reshape(m, g, fg, L)
        # dW^T = cols @ dy^T per (sample, group): OpenBLAS runs this orientation ~10x
        # faster than dy @ cols^T for long L (and stacked matmul avoids BLAS entirely)
        for a in range(m):
            for gi in range(g):
                dwg[gi] += (cols[a, gi] @ dyg[a, gi].T).T
        dcols = np.matmul(wgt, dyg, out=cols).reshape(m, c * kh * kw, L)
        dx[n0:n1] = col2im(dcols, (m, c, h, wd), (kh, kw), s, p, d, (oh, ow))
    dw = dwg.reshape(w4.shape)
    db = dy4.sum(axis=(0, 2, 3)) if need_bias else None
    if nd == 1:
        dx, dw = dx[:, :, 0, :], dw[:, :, 0, :]
    if cl:
        dx, dw = _channel_last_out(dx, nd), _channel_last_out(dw, nd)
    return dx, dw, db


# --------------------------------------------------------------------------- deconvolution
def _deconv_pad_adj(in_spatial, ksize, s, d, pad, adj, target_shape):
    """MXNet Deconvolution: a nonzero target_shape overrides pad/adj (pad=ceil(t/2), adj=t%2)."""
    if target_shape is None or not any(int(t) for t in target_shape):
        return tuple(pad), tuple(adj)
    nd = len(in_spatial)
    ts = tuple(int(t) for t in target_shape)
    if len(ts) != nd:
        raise ShapeError(f"target_shape={ts} must have {nd} entries")
    p, a = [], []
    for i in range(nd):
        full = s[i] * (in_spatial[i] - 1) + d[i] * (ksize[i] - 1) + 1
        if full < ts[i]:
            raise ShapeError(f"target_shape {ts} too big for input {in_spatial}")
        tot = full - ts[i]
        p.append((tot + 1) // 2)
        a.append(tot % 2)
    return tuple(p), tuple(a)


def _deconv_setup(x, w, stride, pad, dilate, num_group, adj, target_shape):
    nd = x.ndim - 2
    _, s, p, d = _geom(x, stride, pad, dilate)
    a = _tup(adj, nd, "adj", 0)
    ks = w.shape[2:]
    if len(ks) != nd:
        raise ShapeError(f"deconv weight {w.shape} does not match data ndim {x.ndim}")
    sp, dp = s[2 - nd:], d[2 - nd:]
    pp, a = _deconv_pad_adj(x.shape[2:], ks, sp, dp, p[2 - nd:], a, target_shape)
    if nd == 1:
        pp, a = (0,) + pp, (0,) + a
    g = int(num_group)
    cin = x.shape[1]
    if w.shape[0] != cin or g < 1 or cin % g:
        raise ShapeError(f"deconv weight {w.shape} incompatible with data {x.shape}, group {g}")
    return nd, s, pp, d, a, g


def deconv_forward(x, w, b, stride, pad, dilate, num_group=1, adj=None, target_shape=None):
    """y = Deconvolution(x, w, b): x (N,C_in,H[,W]), w (C_in, F/G, kh[, kw]) -> (N,F,OH[,OW])."""
    nd, s, p, d, a, g = _deconv_setup(x, w, stride, pad, dilate, num_group, adj, target_shape)
    dt = _float_dtype(x, w, b)
    x4 = np.ascontiguousarray(_to4(x, nd), dtype=dt)
    w4 = np.ascontiguousarray(_to4(w, nd), dtype=dt)
    n, cin, h, wd = x4.shape
    _, fg, kh, kw = w4.shape
    f = fg * g
    oh = deconv_out_size(h, kh, s[0], p[0], d[0], a[0])
    ow = deconv_out_size(wd, kw, s[1], p[1], d[1], a[1])
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"deconvolution output would be empty: data {x.shape}, kernel {w.shape}")
    L = h * wd
    cgi = cin // g
    wgt = w4.reshape(g, cgi, fg * kh * kw).transpose(0, 2, 1)
    y = np.empty((n, f, oh, ow), dtype=dt)
    nb = _chunk(n, f * kh * kw, L, x4.itemsize)
    with blas.gemm_threads(n * L * cin * fg * kh * kw):  # the policy: BLAS threads stall
        for n0 in range(0, n, nb):                        # on busy cores
            n1 = min(n, n0 + nb)
            m = n1 - n0
            ws = workspace((m, g, fg * kh * kw, L), dt, 10)
            cols = np.matmul(wgt, x4[n0:n1].reshape(m, g, cgi, L), out=ws).reshape(
                m, f * kh * kw, L)
            y[n0:n1] = col2im(cols, (m, f, oh, ow), (kh, kw), s, p, d, (h, wd))
    if b is not None:
        y += np.asarray(b, dtype=dt).reshape(1, f, 1, 1)
    return y[:, :, 0, :] if nd == 1 else y


def deconv_backward(x, w, dy, stride, pad, dilate, num_group=1, adj=None, target_shape=None,
                    need_bias=True):
    """Gradients of deconv_forward: returns (dx like x, dw like w, db (F,) or None)."""
    nd, s, p, d, a, g = _deconv_setup(x, w, stride, pad, dilate, num_group, adj, target_shape)
    dt = _float_dtype(x, w, dy)
    x4 = np.ascontiguousarray(_to4(x, nd), dtype=dt)
    w4 = np.ascontiguousarray(_to4(w, nd), dtype=dt)
    dy4 = np.ascontiguousarray(_to4(dy, nd), dtype=dt)
    n, cin, h, wd = x4.shape
    _, fg, kh, kw = w4.shape
    f = fg * g
    oh, ow = dy4.shape[2:]
    if dy4.shape[:2] != (n, f) or oh != deconv_out_size(h, kh, s[0], p[0], d[0], a[0]) \
            or ow != deconv_out_size(wd, kw, s[1], p[1], d[1], a[1]):
        raise ShapeError(f"dy shape {dy.shape} does not match the deconvolution output")
    L = h * wd
    cgi = cin // g
    kg = fg * kh * kw
    wg = w4.reshape(g, cgi, kg)
    dx = np.empty_like(x4)
    dwg = np.zeros((g, cgi, kg), dtype=dt)
    nb = _chunk(n, f * kh * kw, L, x4.itemsize)
    with blas.gemm_threads(n * L * cin * kg):
        for n0 in range(0, n, nb):
            n1 = min(n, n0 + nb)
            m = n1 - n0
            ws = workspace((m, f * kh * kw, L), dt, 10)
            dcols = im2col(dy4[n0:n1], (kh, kw), s, p, d, (h, wd), out=ws).reshape(m, g, kg, L)
            np.matmul(wg, dcols, out=dx[n0:n1].reshape(m, g, cgi, L))
            xg = x4[n0:n1].reshape(m, g, cgi, L)
            for a in range(m):
                for gi in range(g):
                    dwg[gi] += (dcols[a, gi] @ xg[a, gi].T).T
    dw = dwg.reshape(w4.shape)
    db = dy4.sum(axis=(0, 2, 3)) if need_bias else None
    if nd == 1:
        dx, dw = dx[:, :, 0, :], dw[:, :, 0, :]
    return dx, dw, db
