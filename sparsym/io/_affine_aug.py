"""The random affine warp of MXNet's ImageRecordIter (rotation, shear, aspect ratio, scale).

MXNet's default augmenter draws one 2x3 matrix per image and warps with OpenCV's
``warpAffine`` (constant border of ``fill_value``); this reproduces that warp with
``scipy.ndimage.map_coordinates``, sampling source pixels at integer pixel coordinates
rounded to 1/32 pixel as OpenCV's fixed-point warp does.
"""
from __future__ import annotations

import numpy as np

from ..base import ParamError

# the augmentation parameters of the warp, with the defaults that disable it
AFFINE_DEFAULTS = dict(max_rotate_angle=0, rotate=-1, max_shear_ratio=0.0,
                       max_aspect_ratio=0.0, min_random_scale=1.0, max_random_scale=1.0,
                       min_img_size=0.0, max_img_size=1e10)

# MXNet's inter_method -> spline order (OpenCV's area and Lanczos have no spline
# counterpart: area is bilinear when the warp does not shrink, Lanczos is cubic)
_ORDER = {0: 0, 1: 1, 2: 3, 3: 1, 4: 3}


def check_affine(p):
    """Validate the warp parameters of ``p`` (a dict), raising ParamError."""
    for k in ("max_rotate_angle", "rotate"):
        if int(p[k]) != p[k]:
            raise ParamError(f"ImageRecordIter: {k} must be an integer (degrees), got {p[k]!r}")
    if p["max_rotate_angle"] < 0:
        raise ParamError(f"ImageRecordIter: max_rotate_angle must be >= 0, got "
                         f"{p['max_rotate_angle']}")
    if p["max_shear_ratio"] < 0:
        raise ParamError(f"ImageRecordIter: max_shear_ratio must be >= 0, got "
                         f"{p['max_shear_ratio']}")
    if p.get("min_aspect_ratio") is None and not 0 <= p["max_aspect_ratio"] < 1:
        raise ParamError(f"ImageRecordIter: max_aspect_ratio must be in [0, 1) (the ratio "
                         f"is drawn from 1 +- max_aspect_ratio), got {p['max_aspect_ratio']}")
    if not 0 < p["min_random_scale"] <= p["max_random_scale"]:
        raise ParamError("ImageRecordIter: expected 0 < min_random_scale <= max_random_scale, "
                         f"got {p['min_random_scale']} and {p['max_random_scale']}")
    if not 0 <= p["min_img_size"] <= p["max_img_size"]:
        raise ParamError("ImageRecordIter: expected 0 <= min_img_size <= max_img_size, got "
                         f"{p['min_img_size']} and {p['max_img_size']}")
    if p["inter_method"] not in (0, 1, 2, 3, 4, 9, 10):
        raise ParamError("ImageRecordIter: invalid inter_method: valid value 0,1,2,3,4,9,10, "
                         f"got {p['inter_method']!r}")


def aspect_range(p):
    """(lowest, highest) width / height ratio: ``[min_aspect_ratio, max_aspect_ratio]``
    when ``min_aspect_ratio`` is given, else ``1 -+ max_aspect_ratio``."""
    if p.get("min_aspect_ratio") is not None:
        return float(p["min_aspect_ratio"]), float(p["max_aspect_ratio"])
    return 1.0 - p["max_aspect_ratio"], 1.0 + p["max_aspect_ratio"]


def affine_active(p):
    """Whether the parameters ask for the warp (MXNet's condition: with
    ``random_resized_crop`` the aspect ratio belongs to the crop, not the warp)."""
    lo, hi = aspect_range(p)
    return (p["max_shear_ratio"] > 0 or p["max_rotate_angle"] > 0 or p["rotate"] > 0
            or p["max_random_scale"] != 1.0 or p["min_random_scale"] != 1.0
            or (not p.get("random_resized_crop") and (lo != 1.0 or hi != 1.0))
            or p["max_img_size"] != 1e10 or p["min_img_size"] != 0.0)


def random_affine(img, p, rng):
    """Warp ``img`` (H, W, C uint8) by one matrix drawn from ``rng`` as MXNet draws it."""
    f32 = np.float32
    # the draws, in MXNet's order: shear, angle, scale, aspect ratio
    s = f32(rng.rand() * p["max_shear_ratio"] * 2 - p["max_shear_ratio"])
    mra = int(p["max_rotate_angle"])
    angle = rng.randint(-mra, mra + 1)
    if p["rotate"] > 0:
        angle = int(p["rotate"])
    a, b = f32(np.cos(angle / 180.0 * np.pi)), f32(np.sin(angle / 180.0 * np.pi))
    # a random resized crop draws its own scale and ratio: the warp then keeps both at 1
    scale = ratio = f32(1)
    if not p.get("random_resized_crop"):
        lo, hi = p["min_random_scale"], p["max_random_scale"]
        scale = f32(rng.rand() * (hi - lo) + lo)
        lo, hi = aspect_range(p)
        ratio = f32(rng.rand() * (hi - lo) + lo)
    hs = f32(2 * scale / (1 + ratio))
    ws = f32(ratio * hs)
    rows, cols = img.shape[:2]
    new_w = f32(max(p["min_img_size"], min(p["max_img_size"], scale * cols)))
    new_h = f32(max(p["min_img_size"], min(p["max_img_size"], scale * rows)))
    # the forward matrix in float32, as MXNet builds it; the translation centres the
    # warped image in the (new_w, new_h) output
    m = np.zeros((2, 3), np.float32)
    m[0, 0], m[0, 1] = hs * a - s * b * ws, hs * b + s * a * ws
    m[1, 0], m[1, 1] = -b * ws, a * ws
    m[0, 2] = (new_w - (m[0, 0] * f32(cols) + m[0, 1] * f32(rows))) / f32(2)
    m[1, 2] = (new_h - (m[1, 0] * f32(cols) + m[1, 1] * f32(rows))) / f32(2)
    new_w, new_h = int(new_w), int(new_h)
    method = int(p["inter_method"])
    if method == 9:     # MXNet's auto: cubic when both sides grow, area when both shrink
        method = (2 if new_w > cols and new_h > rows else
                  3 if new_w < cols and new_h < rows else 1)
    elif method == 10:  # MXNet's random choice among its five methods
        method = rng.randint(5)
    order = _ORDER[method]
    sx, sy = _source_coords(m.astype(np.float64), new_w, new_h, 0 if order == 0 else 5)
    # imported here: scipy.ndimage costs 0.2-0.35 s, paid by every `import sparsym` when
    # imported with the module, and only image iterators with a warp need it
    from scipy import ndimage
    out = np.empty((new_h, new_w, img.shape[2]), np.uint8)
    for c in range(img.shape[2]):
        v = ndimage.map_coordinates(img[:, :, c].astype(np.float64), [sy, sx], order=order,
                                    mode="grid-constant", cval=float(p["fill_value"]),
                                    prefilter=order > 1)
        out[:, :, c] = np.clip(np.rint(v), 0, 255).reshape(new_h, new_w)
    return out


def _source_coords(m, width, height, bits):
    """Source (x, y) of every output pixel, quantised as OpenCV's fixed-point warp does."""
    # the inverse of the forward matrix, then each coordinate as a 1/1024-pixel integer
    # (row part and column part rounded separately), rounded to 1/2**bits pixel
    det = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
    d = 1.0 / det if det != 0 else 0.0
    a11, a22, a12, a21 = m[1, 1] * d, m[0, 0] * d, -m[0, 1] * d, -m[1, 0] * d
    b1 = -a11 * m[0, 2] - a12 * m[1, 2]
    b2 = -a21 * m[0, 2] - a22 * m[1, 2]
    shift = 10 - bits
    half = 1 << (shift - 1)
    xs = np.arange(width, dtype=np.float64)[None, :]
    ys = np.arange(height, dtype=np.float64)[:, None]
    x = (np.rint((a12 * ys + b1) * 1024).astype(np.int64)
         + np.rint(a11 * xs * 1024).astype(np.int64) + half) >> shift
    y = (np.rint((a22 * ys + b2) * 1024).astype(np.int64)
         + np.rint(a21 * xs * 1024).astype(np.int64) + half) >> shift
    return x.ravel() / 2.0 ** bits, y.ravel() / 2.0 ** bits
