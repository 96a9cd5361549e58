"""Image kernels on dense HWC / NHWC arrays: resampling with OpenCV's rules (as MXNet 1.9.1
bundles OpenCV 3.4.2 for ``_image_resize`` and ``_cvimresize``), crops, flips and the colour
adjustments of ``mx.nd.image``.

Every kernel takes and returns NumPy arrays (never aliasing its input) and states its layout.
Integer images are written as MXNet does: colour adjustments clip to the dtype's range and
truncate; resampling rounds (OpenCV's saturate_cast), with OpenCV's fixed-point arithmetic
for uint8 bilinear resizing so that results match bit for bit.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# OpenCV's fixed-point resize coefficients: 11 fractional bits
_COEF_BITS = 11
_COEF_SCALE = 1 << _COEF_BITS

# OpenCV's codes, which MXNet passes through (its docs swap 2 and 3)
NEAREST, BILINEAR, BICUBIC, AREA, LANCZOS = 0, 1, 2, 3, 4
INTERP_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos4"}


# ----------------------------------------------------------------------------- storing
def store(values, dtype):
    """Cast float results to ``dtype`` as MXNet's colour ops do: integers clip and truncate."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.trunc(np.clip(values, info.min, info.max)).astype(dtype)
    return values.astype(dtype)


def saturate(values, dtype):
    """Cast resampled values to ``dtype`` as OpenCV's saturate_cast (round half to even)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


# ----------------------------------------------------------------------------- tensors
def to_tensor(x):
    """(H, W, C) or (N, H, W, C), any dtype -> float32 (C, H, W) / (N, C, H, W) divided by 255."""
    t = np.moveaxis(x, -1, -3).astype(np.float32)
    return np.ascontiguousarray(t / np.float32(255.0))


def normalize(x, mean, std):
    """(C, H, W) or (N, C, H, W): ``(x - mean[c]) / std[c]`` per channel, in x's dtype."""
    c = x.shape[-3]
    m = np.broadcast_to(np.asarray(mean, np.float32), (c,)).reshape(c, 1, 1)
    s = np.broadcast_to(np.asarray(std, np.float32), (c,)).reshape(c, 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (x.astype(np.float32) - m) / s
    return store(out, x.dtype) if x.dtype.kind in "iu" else out.astype(x.dtype)


def crop(x, x0, y0, width, height):
    """(H, W, C) or (N, H, W, C): the window of ``height`` rows from ``y0`` and ``width``
    columns from ``x0`` (a copy)."""
    return np.ascontiguousarray(x[..., y0:y0 + height, x0:x0 + width, :])


def flip(x, axis):
    """A copy of ``x`` reversed along ``axis``."""
    return np.ascontiguousarray(np.flip(x, axis))


# ----------------------------------------------------------------------------- resampling
def _taps_linear(n_in, n_out, area_up=False, clamp=True):
    """Two-tap (index, float32 weight) tables of OpenCV's bilinear rule along one axis (or of
    INTER_AREA when it enlarges, which OpenCV runs as a linear resize with other weights).

    OpenCV moves out-of-range taps to the border with all the weight (``clamp``) along x
    only; along y it keeps the weights and clips the row indices."""
    inv_scale = n_out / n_in
    scale = 1.0 / inv_scale
    d = np.arange(n_out, dtype=np.float64)
    if area_up:
        s = np.floor(d * scale).astype(np.int64)
        f = ((d + 1) - (s + 1) * inv_scale).astype(np.float32)
        f = np.where(f <= 0, np.float32(0), f - np.floor(f)).astype(np.float32)
    else:
        f = ((d + 0.5) * scale - 0.5).astype(np.float32)
        s = np.floor(f).astype(np.int64)
        f = (f - s.astype(np.float32)).astype(np.float32)
    if clamp:
        low = s < 0
        f[low], s[low] = 0, 0
        high = s >= n_in - 1
        f[high], s[high] = 0, n_in - 1
    idx = np.clip(np.stack([s, s + 1], axis=1), 0, n_in - 1)
    w = np.stack([np.float32(1) - f, f], axis=1).astype(np.float32)
    return idx, w


def _cubic_weights(f, a=-0.75):
    """OpenCV's bicubic weights (A = -0.75) for fractional offsets ``f`` (float32)."""
    f = f.astype(np.float32)
    a = np.float32(a)
    one = np.float32(1)
    w0 = ((a * (f + one) - 5 * a) * (f + one) + 8 * a) * (f + one) - 4 * a
    w1 = ((a + 2) * f - (a + 3)) * f * f + one
    w2 = ((a + 2) * (one - f) - (a + 3)) * (one - f) * (one - f) + one
    w3 = one - w0 - w1 - w2
    return np.stack([w0, w1, w2, w3], axis=1).astype(np.float32)


def _lanczos_weights(f):
    """Lanczos weights over 8 taps (window 4), normalised to sum to 1, for offsets ``f``."""
    t = f[:, None].astype(np.float64) + 3 - np.arange(8)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.sinc(t) * np.sinc(t / 4.0)
    w = w.astype(np.float32)
    w /= w.sum(axis=1, keepdims=True)
    exact = f < np.finfo(np.float32).eps
    w[exact] = 0
    w[exact, 3] = 1
    return w.astype(np.float32)


def _taps_kernel(n_in, n_out, interp):
    """Index and float32 weight tables of the bicubic (4 taps) or Lanczos (8 taps) rule."""
    scale = n_in / n_out
    d = np.arange(n_out, dtype=np.float64)
    f = ((d + 0.5) * scale - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.int64)
    f = (f - s.astype(np.float32)).astype(np.float32)
    if interp == BICUBIC:
        w, first = _cubic_weights(f), -1
    else:
        w, first = _lanczos_weights(f), -3
    k = w.shape[1]
    idx = np.clip(s[:, None] + first + np.arange(k)[None, :], 0, n_in - 1)
    return idx, w


def _taps_area_down(n_in, n_out):
    """Variable-width box weights of OpenCV's INTER_AREA when shrinking (padded taps)."""
    scale = n_in / n_out
    rows = []
    for d in range(n_out):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, n_in - f1)
        s1, s2 = int(math.ceil(f1)), int(math.floor(f2))
        s2 = min(s2, n_in - 1)
        s1 = min(s1, s2)
        taps = []
        if s1 - f1 > 1e-3:
            taps.append((s1 - 1, (s1 - f1) / cell))
        for s in range(s1, s2):
            taps.append((s, 1.0 / cell))
        if f2 - s2 > 1e-3:
            taps.append((s2, min(min(f2 - s2, 1.0), cell) / cell))
        rows.append(taps)
    k = max(len(r) for r in rows)
    idx = np.zeros((n_out, k), np.int64)
    w = np.zeros((n_out, k), np.float32)
    for d, taps in enumerate(rows):
        for j, (s, wt) in enumerate(taps):
            idx[d, j], w[d, j] = s, wt
    return idx, w


# Separable passes over (B, H, W, C) images: each output value is the sum of its taps in tap
# order, in the weights' precision (float32 for float32 images, as OpenCV; int64 for the
# fixed-point uint8 paths; float64 otherwise).
@njit(cache=True, nogil=True)
def _hpass(src, idx, w, out):
    """out[b, y, x, c] = sum_k src[b, y, idx[x, k], c] * w[x, k]."""
    nb, nh, _, nc = src.shape
    nw, nk = idx.shape
    for b in range(nb):
        for y in range(nh):
            for x in range(nw):
                for c in range(nc):
                    acc = src[b, y, idx[x, 0], c] * w[x, 0]
                    for k in range(1, nk):
                        acc += src[b, y, idx[x, k], c] * w[x, k]
                    out[b, y, x, c] = acc
    return out


@njit(cache=True, nogil=True)
def _vpass_bilinear_u8(src, idx, w, out):
    """OpenCV's uint8 bilinear vertical pass on 11-bit fixed-point rows (see _bilinear_u8)."""
    nb, _, nw, nc = src.shape
    nh = idx.shape[0]
    for b in range(nb):
        for y in range(nh):
            b0, b1 = w[y, 0], w[y, 1]
            for x in range(nw):
                for c in range(nc):
                    v = (((src[b, idx[y, 0], x, c] >> 4) * b0) >> 16) \
                        + (((src[b, idx[y, 1], x, c] >> 4) * b1) >> 16)
                    v = (v + 2) >> 2
                    out[b, y, x, c] = min(max(v, 0), 255)
    return out


def _as4(img):
    return img.reshape((-1,) + img.shape[-3:])


def _separable(img, ix, wx, iy, wy, acc):
    """Horizontal then vertical pass (Numba) in ``acc`` precision; (..., H', W', C)."""
    x = np.ascontiguousarray(_as4(img))
    h = _hpass(x, ix, wx.astype(acc), np.empty(x.shape[:2] + (ix.shape[0], x.shape[3]), acc))
    out = np.empty((h.shape[0], iy.shape[0]) + h.shape[2:], acc)
    # the vertical pass is the horizontal one over (B, W', H, C) views
    _hpass(h.transpose(0, 2, 1, 3), iy, wy.astype(acc), out.transpose(0, 2, 1, 3))
    return out.reshape(img.shape[:-3] + out.shape[1:])


def _bilinear_u8(img, ix, wx, iy, wy):
    """OpenCV 3.4's uint8 bilinear resize: 11-bit integer weights, and its vertical pass
    ``((b0 * (S0 >> 4)) >> 16) + ((b1 * (S1 >> 4)) >> 16) + 2) >> 2`` (SIMD and scalar)."""
    ax = np.rint(wx * _COEF_SCALE).astype(np.int64)
    ay = np.rint(wy * _COEF_SCALE).astype(np.int64)
    x = np.ascontiguousarray(_as4(img))
    h = _hpass(x, ix, ax, np.empty(x.shape[:2] + (ix.shape[0], x.shape[3]), np.int64))
    out = _vpass_bilinear_u8(h, iy, ay, np.empty((h.shape[0], iy.shape[0]) + h.shape[2:],
                                                 np.uint8))
    return out.reshape(img.shape[:-3] + out.shape[1:])


def _area_fast2_u8(img):
    """OpenCV's exact 2x shrink of uint8 images: (sum of the 2x2 cell + 2) >> 2."""
    s = img.astype(np.int64)
    tot = (s[..., 0::2, 0::2, :] + s[..., 0::2, 1::2, :] + s[..., 1::2, 0::2, :]
           + s[..., 1::2, 1::2, :])
    return ((tot + 2) >> 2).astype(np.uint8)


def resize(img, width, height, interp=BILINEAR):
    """Resize (H, W, C) or (N, H, W, C) to (height, width) with OpenCV 3.4's rules.

    ``interp``: 0 nearest, 1 bilinear, 2 area, 3 bicubic, 4 Lanczos-4. uint8 bilinear
    (and OpenCV's exact-2x shrinks) are bit-exact; the others round as OpenCV within one
    unit of the last place. Float inputs are resampled in their own precision.
    """
    h_in, w_in = img.shape[-3], img.shape[-2]
    if (h_in, w_in) == (height, width):
        return img.copy()
    if interp == NEAREST:
        sx = np.minimum(np.floor(np.arange(width) * (1.0 / (width / w_in))).astype(np.int64),
                        w_in - 1)
        sy = np.minimum(np.floor(np.arange(height) * (1.0 / (height / h_in))).astype(np.int64),
                        h_in - 1)
        return np.take(np.take(img, sy, axis=-3), sx, axis=-2)
    sx, sy = w_in / width, h_in / height
    int_x, int_y = round(sx), round(sy)
    area_fast = (abs(sx - int_x) < np.finfo(float).eps and abs(sy - int_y) < np.finfo(float).eps)
    if interp == BILINEAR and area_fast and int_x == 2 and int_y == 2:
        interp = AREA
    if interp == AREA and sx >= 1 and sy >= 1:
        if area_fast and int_x == 2 and int_y == 2 and img.dtype == np.uint8:
            return _area_fast2_u8(img)
        ix, wx = _taps_area_down(w_in, width)
        iy, wy = _taps_area_down(h_in, height)
        # OpenCV sums uint8 and float32 cells in float32 (other types in float64)
        acc = np.float32 if img.dtype in (np.uint8, np.float32) else np.float64
        return saturate(_separable(img, ix, wx, iy, wy, acc), img.dtype)
    if interp in (BILINEAR, AREA):
        ix, wx = _taps_linear(w_in, width, area_up=interp == AREA)
        iy, wy = _taps_linear(h_in, height, area_up=interp == AREA, clamp=False)
        if img.dtype == np.uint8:
            return _bilinear_u8(img, ix, wx, iy, wy)
    else:
        ix, wx = _taps_kernel(w_in, width, interp)
        iy, wy = _taps_kernel(h_in, height, interp)
        if img.dtype == np.uint8:
            return _fixed_u8(img, ix, wx, iy, wy)
    acc = np.float32 if img.dtype == np.float32 else np.float64
    return saturate(_separable(img, ix, wx, iy, wy, acc), img.dtype)


def _fixed_u8(img, ix, wx, iy, wy):
    """uint8 resampling over integer (11-bit) weights, rounded as OpenCV's FixedPtCast."""
    ax = np.rint(wx * _COEF_SCALE).astype(np.int64)
    ay = np.rint(wy * _COEF_SCALE).astype(np.int64)
    v = _separable(img, ix, ax, iy, ay, np.int64)
    return np.clip((v + (1 << 21)) >> 22, 0, 255).astype(np.uint8)


def resize_shape(h, w, size, keep_ratio):
    """Output (height, width) of ``_image_resize``: ``size`` is (w, h) or one int (the short
    side when ``keep_ratio``, else both sides)."""
    if len(size) >= 2:
        return size[1], size[0]
    s = size[0]
    if not keep_ratio:
        return s, s
    if h > w:
        return int(h * s / w), s
    return s, int(w * s / h)


# ----------------------------------------------------------------------------- colour
_GRAY = np.array([0.299, 0.587, 0.114], np.float32)
# AlexNet's PCA of ImageNet RGB pixels (eigenvalues, eigenvectors as columns)
_EIGVAL = np.array([55.46, 4.794, 1.148], np.float32)
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]], np.float32)


def brightness(x, alpha):
    """(H, W, C): ``x * alpha``."""
    return store(x.astype(np.float32) * np.float32(alpha), x.dtype)


def contrast(x, alpha):
    """(H, W, C): blend with the image's mean luminance (0.299 R + 0.587 G + 0.114 B)."""
    f = x.astype(np.float32)
    gray = f.mean() if f.shape[-1] == 1 else float((f * _GRAY).sum(-1).mean())
    return store(f * np.float32(alpha) + np.float32(gray * (1 - alpha)), x.dtype)


def saturation(x, alpha):
    """(H, W, C): blend each pixel with its luminance.

    MXNet 1.9.1 takes only 0.114 B as the luminance (it overwrites the sum); this is the
    full weighted sum (docs/migrating_from_mxnet.md)."""
    f = x.astype(np.float32)
    if f.shape[-1] == 1:
        return x.copy()
    gray = (f * _GRAY).sum(-1, keepdims=True)
    return store(f * np.float32(alpha) + gray * np.float32(1 - alpha), x.dtype)


# per sector of 60 degrees: which of (p2, p1, rising, falling) feeds b, g, r
_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


@njit(cache=True, nogil=True)
def _hue_shift(f, shift, sectors, out):
    """RGB (values in [0, 1], float32, (P, 3)) -> HLS, hue + ``shift`` degrees, -> RGB * 255."""
    eps = np.finfo(np.float32).eps
    half, one, two = np.float32(0.5), np.float32(1), np.float32(2)
    tab = np.empty(4, np.float32)
    for p in range(f.shape[0]):
        r, g, b = f[p, 0], f[p, 1], f[p, 2]
        vmax = max(max(r, g), b)
        vmin = min(min(r, g), b)
        diff = vmax - vmin
        light = (vmax + vmin) * half
        hue = np.float32(0)
        sat = np.float32(0)
        if diff > eps:
            sat = diff / (vmax + vmin) if light < half else diff / (two - vmax - vmin)
            k = np.float32(60) / diff
            if vmax == r:
                hue = (g - b) * k
            elif vmax == g:
                hue = (b - r) * k + np.float32(120)
            else:
                hue = (r - g) * k + np.float32(240)
            if hue < 0:
                hue += np.float32(360)
        if sat == 0:
            out[p, 0] = out[p, 1] = out[p, 2] = light * np.float32(255)
            continue
        p2 = light * (one + sat) if light <= half else light + sat - light * sat
        p1 = two * light - p2
        h = (hue + shift) * np.float32(1.0 / 60.0)
        h = h - np.float32(6) * np.floor(h / np.float32(6))
        sector = min(int(h), 5)
        h -= np.float32(sector)
        tab[0], tab[1] = p2, p1
        tab[2] = p1 + (p2 - p1) * (one - h)
        tab[3] = p1 + (p2 - p1) * h
        out[p, 2] = tab[sectors[sector, 0]] * np.float32(255)
        out[p, 1] = tab[sectors[sector, 1]] * np.float32(255)
        out[p, 0] = tab[sectors[sector, 2]] * np.float32(255)
    return out


def hue(x, alpha):
    """(H, W, C): rotate the hue by ``alpha * 360`` degrees in HLS space (MXNet's rule)."""
    if x.shape[-1] == 1:
        return x.copy()
    f = (x.astype(np.float32) / np.float32(255)).reshape(-1, 3)
    out = _hue_shift(f, np.float32(alpha * 360.0), _SECTORS, np.empty_like(f))
    return store(out.reshape(x.shape), x.dtype)


def lighting(x, alpha):
    """(H, W, 3): add AlexNet's PCA noise ``eigvec @ (alpha * eigval)`` to each pixel."""
    shift = _EIGVEC @ (np.asarray(alpha, np.float32) * _EIGVAL)
    return store(x.astype(np.float32) + shift.astype(np.float32), x.dtype)


def pad(x, top, bot, left, right, kind, value):
    """(H, W, C) or (H, W): OpenCV's copyMakeBorder (0 constant, 1 replicate, 2 reflect,
    3 wrap, 4 reflect-101)."""
    widths = [(top, bot), (left, right)] + [(0, 0)] * (x.ndim - 2)
    if kind == 0:
        fill = saturate(np.asarray(value, np.float64), x.dtype)
        return np.pad(x, widths, mode="constant", constant_values=fill)
    mode = {1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}[kind]
    return np.pad(x, widths, mode=mode)
