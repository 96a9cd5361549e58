"""The colour augmentations of MXNet's ImageRecordIter, on (H, W, 3) uint8 RGB images.

MXNet's default augmenter works on OpenCV's BGR images with 8-bit OpenCV calls; these
functions reproduce those calls' arithmetic (float32, round-half-even saturation, OpenCV's
fixed-point grey and its 8-bit HLS conversion). MXNet's contrast and saturation take the
grey of its BGR image with ``CV_RGB2GRAY``, i.e. with the red and blue weights swapped
(grey = 0.114 R + 0.587 G + 0.299 B); that is kept, so the results are MXNet's.
"""
from __future__ import annotations

import numpy as np

from ..base import ParamError

# the colour parameters with the defaults that disable them
COLOR_DEFAULTS = dict(brightness=0.0, contrast=0.0, saturation=0.0, random_h=0, random_s=0,
                      random_l=0, pca_noise=0.0)

_F = np.float32
# MXNet's PCA lighting: eigenvalue times eigenvector, rows R, G, B (float32 products)
_EIGVEC = (np.array([[55.46, 4.794, 1.148]] * 3, _F)
           * np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                       [-0.5836, -0.6948, 0.4203]], _F))


def color_active(p):
    """Whether any colour augmentation is asked for."""
    return any(p[k] != v for k, v in COLOR_DEFAULTS.items())


def check_color(p, channels):
    """Validate the colour parameters of ``p`` (a dict), raising ParamError."""
    if channels != 3 and color_active(p):
        raise ParamError("ImageRecordIter: the colour augmentations (brightness, contrast, "
                         "saturation, random_h/s/l, pca_noise) need colour images "
                         f"(data_shape (3, H, W)), got {channels} channel(s)")
    for k in ("random_h", "random_s", "random_l"):
        if int(p[k]) != p[k]:
            raise ParamError(f"ImageRecordIter: {k} must be an integer, got {p[k]!r}")
    for k in ("brightness", "contrast", "saturation", "pca_noise"):
        if p[k] < 0:
            raise ParamError(f"ImageRecordIter: {k} must be >= 0, got {p[k]}")


def _sat(x):
    """OpenCV's saturate_cast<uchar> of float values: round half to even, clip."""
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def _swapped_grey(img):
    """MXNet's grey of an RGB image (OpenCV's 14-bit fixed point, red/blue weights
    swapped as in MXNet, which converts its BGR image with CV_RGB2GRAY)."""
    r, g, b = (img[..., i].astype(np.int32) for i in range(3))
    return ((r * 1868 + g * 9617 + b * 4899 + (1 << 13)) >> 14).astype(np.uint8)


def color_jitter(img, p, rng):
    """Brightness, contrast and saturation, each scaled by a factor in ``1 +- value``,
    applied in a random order (MXNet's draws: the three factors, then the order)."""
    f = [_F(1.0 + rng.uniform(-p[k], p[k])) for k in ("brightness", "contrast",
                                                      "saturation")]
    order = rng.permutation(3)
    x = img
    for i in order:
        if i == 0:
            x = _sat(x.astype(_F) * f[0])
        elif i == 1:
            mean = _F(_swapped_grey(x).mean(dtype=np.float64))
            x = _sat(x.astype(_F) * f[1] + (_F(1) - f[1]) * mean)
        else:
            grey = _swapped_grey(x).astype(_F)[..., None]
            x = _sat(x.astype(_F) * f[2] + grey * (_F(1) - f[2]))
    return x


def _rgb_to_hls(img):
    """OpenCV's 8-bit RGB -> HLS: H in [0, 180], L and S in [0, 255] (float32 maths)."""
    x = img.astype(_F) * _F(1.0 / 255.0)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    vmax = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * _F(0.5)
    grey = diff <= np.finfo(_F).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        # OpenCV's vector path: 2 - (vmax + vmin), which rounds differently from its
        # scalar 2 - vmax - vmin on rare ties (MXNet's images go through the vector path)
        total = vmax + vmin
        s = np.where(light < _F(0.5), diff / total, diff / (_F(2) - total))
        k = _F(60) / diff
        h = np.where(vmax == r, (g - b) * k,
                     np.where(vmax == g, (b - r) * k + _F(120), (r - g) * k + _F(240)))
    h = np.where(h < 0, h + _F(360), h)
    h, s = np.where(grey, _F(0), h), np.where(grey, _F(0), s)
    return np.stack([_sat(h * _F(0.5)), _sat(light * _F(255)), _sat(s * _F(255))], -1)


# which of (p2, p1, rising, falling) gives B, G, R in each 60-degree sector
_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _hls_to_rgb(hls):
    """OpenCV's 8-bit HLS -> RGB (H in [0, 180])."""
    h = hls[..., 0].astype(_F) * _F(6.0 / 180.0)
    light = hls[..., 1].astype(_F) * _F(1.0 / 255.0)
    s = hls[..., 2].astype(_F) * _F(1.0 / 255.0)
    p2 = np.where(light <= _F(0.5), light * (_F(1) + s), light + s - light * s)
    p1 = _F(2) * light - p2
    h = np.where(h >= 6, h - _F(6), h)
    sector = np.floor(h).astype(np.int64)
    frac = h - sector
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (_F(1) - frac), p1 + (p2 - p1) * frac], -1)
    bgr = np.take_along_axis(tab, _SECTORS[sector], -1)
    rgb = np.where((s == 0)[..., None], light[..., None], bgr[..., ::-1])
    return _sat(rgb * _F(255))


def hls_shift(img, p, rng):
    """Add whole random offsets to H, L and S (each drawn as ``(u1 + 4 u2) / 5`` scaled to
    ``[-v, v]`` and truncated, as MXNet does), clipped to OpenCV's 8-bit ranges."""
    off = []
    for k in ("random_h", "random_s", "random_l"):
        u = _F(rng.random_sample())
        u = (u + _F(4) * _F(rng.random_sample())) / _F(5)
        off.append(int(u * _F(p[k]) * _F(2) - _F(p[k])))
    dh, ds, dl = off
    hls = _rgb_to_hls(img).astype(np.int32)
    hls += np.array([dh, dl, ds], np.int32)
    hls = np.clip(hls, 0, np.array([180, 255, 255]))
    return _hls_to_rgb(hls.astype(np.uint8))


def pca_noise(img, p, rng):
    """AlexNet-style lighting: add ``eigvec @ alpha`` (alpha ~ N(0, pca_noise) per
    component) to every pixel, truncated toward zero and clipped, as MXNet does."""
    alpha = np.array([rng.normal(0, p["pca_noise"]) for _ in range(3)], _F)
    offset = (_EIGVEC * alpha).sum(1, dtype=_F)
    return np.clip(np.trunc(img.astype(_F) + offset), 0, 255).astype(np.uint8)


def color_augment(img, p, rng):
    """Every colour augmentation ``p`` asks for, in MXNet's order (RGB uint8 image)."""
    if p["brightness"] > 0 or p["contrast"] > 0 or p["saturation"] > 0:
        img = color_jitter(img, p, rng)
    if p["random_h"] != 0 or p["random_s"] != 0 or p["random_l"] != 0:
        img = hls_shift(img, p, rng)
    if p["pca_noise"] > 0:
        img = pca_noise(img, p, rng)
    return img
