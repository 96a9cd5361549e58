"""Dense Convolution / Deconvolution kernels (MXNet 1.x semantics) via im2col + BLAS GEMM.

Layouts: data NCHW (2-D) or NCW (1-D); conv weight (num_filter, C/num_group, kh, kw);
deconv weight (C_in, num_filter/num_group, kh, kw).  ``layout='NHWC'|'NWC'`` on the conv
entry points takes channel-last data and (num_filter, kh, kw, C/num_group) weights.
All functions are pure: they return new arrays and never alias or modify their inputs.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from ..base import ShapeError

__all__ = [
    "conv_forward", "conv_backward", "deconv_forward", "deconv_backward",
    "im2col", "col2im", "conv_out_size", "deconv_out_size",
]

# Upper bound on the im2col workspace of one GEMM batch (bytes); images are chunked to fit.
_COLS_BUDGET = 64 << 20
# The im2col/col2im loops are deliberately serial: OpenBLAS worker threads keep spinning
# after each GEMM, and a numba parallel region started right after one stalls for
# milliseconds on a 2-core box (measured: 5-50x slower than the serial loop).
_tls = threading.local()
# Row-shift path (stride_h == 1): unfold only along W (C*kw rows, kh x less traffic than a
# full im2col) and run kh GEMMs on row-shifted views.  Used when OH*OW is at least this.
_ROWSHIFT_MIN_L = 1024


def _workspace(shape, dtype, slot=0):
    """Per-thread scratch buffer reused across calls (never returned to callers)."""
    dtype = np.dtype(dtype)
    need = int(np.prod(shape)) * dtype.itemsize
    bufs = getattr(_tls, "bufs", None)
    if bufs is None:
        bufs = _tls.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < need:
        buf = np.empty(max(need, 64), dtype=np.uint8)
        bufs[slot] = buf
    off = (-buf.ctypes.data) % dtype.itemsize
    return buf[off:off + need].view(dtype).reshape(shape)


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


@njit(cache=True)
def _im2row_kernel(x, cols, kw, sw, pw, dw, ph, n_rows, ow):
    # x (C,H,W) -> cols (C*kw, n_rows*OW): cols[c*kw+j, r*OW+b] = x[c, r-ph, b*sw+j*dw-pw]
    n_ch, h_in, w_in = x.shape
    for r in range(n_ch * kw):
        c = r // kw
        j = r - c * kw
        off_w = j * dw - pw
        lo, hi = _valid_range(off_w, sw, w_in, ow)
        for hh in range(n_rows):
            ih = hh - ph
            base = hh * ow
            if ih < 0 or ih >= h_in:
                for b in range(ow):
                    cols[r, base + b] = 0
            else:
                for b in range(lo):
                    cols[r, base + b] = 0
                for b in range(lo, hi):
                    cols[r, base + b] = x[c, ih, b * sw + off_w]
                for b in range(hi, ow):
                    cols[r, base + b] = 0


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


# --------------------------------------------------------------------------- convolution
def conv_forward(x, w, b, stride, pad, dilate, num_group=1, layout=None):
    """y = Convolution(x, w, b): x NCHW/NCW, w (F, C/G, kh[, kw]), b (F,) or None -> y NCHW/NCW."""
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
    L = oh * ow
    y = np.empty((n, f, oh, ow), dtype=dt)
    if s[0] == 1 and kh > 1 and L >= _ROWSHIFT_MIN_L:
        _conv_rowshift(x4, w4, y, s, p, d, g)
    else:
        _conv_im2col(x4, w4, y, s, p, d, g)
    if b is not None:
        y += np.asarray(b, dtype=dt).reshape(1, f, 1, 1)
    if nd == 1:
        y = y[:, :, 0, :]
    return _channel_last_out(y, nd) if cl else y


def _conv_rowshift(x4, w4, y, s, p, d, g):
    """Stride-1-in-H forward: y[:, f] = sum_i W_i @ rows(x) shifted by i*dh output rows."""
    n, c, h, wd = x4.shape
    f, cg, kh, kw = w4.shape
    oh, ow = y.shape[2:]
    L = oh * ow
    fg = f // g
    n_rows = oh + d[0] * (kh - 1)
    kr = cg * kw
    wi = np.ascontiguousarray(w4.transpose(2, 0, 1, 3)).reshape(kh, f, kr)
    cols = _workspace((c * kw, n_rows * ow), x4.dtype)
    tmp = _workspace((fg, L), x4.dtype, slot=1)
    for a in range(n):
        _im2row_kernel(x4[a], cols, kw, s[1], p[1], d[1], p[0], n_rows, ow)
        ya = y[a].reshape(f, L)
        for gi in range(g):
            yg = ya[gi * fg:(gi + 1) * fg]
            rows = cols[gi * kr:(gi + 1) * kr]
            for i in range(kh):
                off = i * d[0] * ow
                wgi = wi[i, gi * fg:(gi + 1) * fg]
                if i == 0:
                    np.matmul(wgi, rows[:, off:off + L], out=yg)
                else:
                    np.matmul(wgi, rows[:, off:off + L], out=tmp)
                    yg += tmp


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
        ws = _workspace((n1 - n0, c * kh * kw, L), dt)
        cols = im2col(x4[n0:n1], (kh, kw), s, p, d, (oh, ow), out=ws)
        np.matmul(wg, cols.reshape(n1 - n0, g, kg, L),
                  out=y[n0:n1].reshape(n1 - n0, g, f // g, L))


def conv_backward(x, w, dy, stride, pad, dilate, num_group=1, need_bias=True, layout=None):
    """Gradients of conv_forward: returns (dx like x, dw like w, db (F,) or None)."""
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
        ws = _workspace((m, c * kh * kw, L), dt)
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
    for n0 in range(0, n, nb):
        n1 = min(n, n0 + nb)
        m = n1 - n0
        ws = _workspace((m, g, fg * kh * kw, L), dt)
        cols = np.matmul(wgt, x4[n0:n1].reshape(m, g, cgi, L), out=ws).reshape(m, f * kh * kw, L)
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
    for n0 in range(0, n, nb):
        n1 = min(n, n0 + nb)
        m = n1 - n0
        ws = _workspace((m, f * kh * kw, L), dt)
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
