"""The crops of MXNet's ImageRecordIter: random-size square crops (``min/max_crop_size``),
random resized crops (``random_resized_crop`` with ``min/max_random_area`` and the aspect
ratio range), and the final crop to ``data_shape``, which first enlarges an image smaller
than ``data_shape`` (keeping its aspect ratio) as MXNet 1.9.1 does.
"""
from __future__ import annotations

import numpy as np

from .. import ndarray as nd
from ..base import ParamError
from ..image import image as _img
from ._affine_aug import aspect_range

# the crop parameters with their defaults (max_aspect_ratio is the affine warp's)
CROP_DEFAULTS = dict(max_crop_size=-1, min_crop_size=-1, random_resized_crop=False,
                     max_random_area=1.0, min_random_area=1.0, min_aspect_ratio=None)


def check_crop(p):
    """Validate the crop parameters of ``p`` (a dict), raising ParamError."""
    lo, hi = aspect_range(p)
    if p["min_aspect_ratio"] is not None and not 0 < lo <= hi:
        raise ParamError(f"ImageRecordIter: expected 0 < min_aspect_ratio <= max_aspect_ratio, "
                         f"got {lo} and {hi}")
    cmin, cmax = int(p["min_crop_size"]), int(p["max_crop_size"])
    if p["random_resized_crop"]:
        if (p["min_random_scale"] != 1 or p["max_random_scale"] != 1 or cmin != -1
                or cmax != -1 or p["rand_crop"]):
            raise ParamError("ImageRecordIter: Setting random_resized_crop to true conflicts "
                             "with min_random_scale, max_random_scale, min_crop_size, "
                             "max_crop_size, and rand_crop.")
        if not 0 < p["min_random_area"] <= p["max_random_area"]:
            raise ParamError("ImageRecordIter: expected 0 < min_random_area <= "
                             f"max_random_area, got {p['min_random_area']} and "
                             f"{p['max_random_area']}")
    elif (cmin, cmax) != (-1, -1) and not 1 <= cmin <= cmax:
        # MXNet draws the size from [min, max] and fails in OpenCV on a size below 1
        raise ParamError(f"ImageRecordIter: expected 1 <= min_crop_size <= max_crop_size, got "
                         f"{cmin} and {cmax}")


def inter_method(method, old_w, old_h, new_w, new_h, rng):
    """MXNet's interpolation choice: 9 is cubic to enlarge both sides, area to shrink both,
    else bilinear; 10 draws one of 0-4; any other value is used as it is."""
    if method == 9:
        if new_w > old_w and new_h > old_h:
            return 2
        return 3 if new_w < old_w and new_h < old_h else 1
    if method == 10:
        return int(rng.randint(5))
    return method


def _resize(img, w, h, method):
    return _img.imresize(nd.array(img, dtype=np.uint8), int(w), int(h),
                         interp=method).asnumpy()


def _resized_crop(img, p, out_hw, rng):
    """MXNet's random resized crop: up to ten draws of an area share and a ratio; the first
    box that fits is cut at a random place and resized to ``out_hw``. None if none fits."""
    rows, cols = img.shape[:2]
    lo, hi = aspect_range(p)
    area = np.float32(rows * cols)
    for _ in range(10):
        share = np.float32(rng.uniform(p["min_random_area"], p["max_random_area"]))
        ratio = np.float32(rng.uniform(lo, hi))
        target = area * share
        y_len = int(np.round(np.sqrt(target / ratio)))
        x_len = int(np.round(np.sqrt(target * ratio)))
        if rng.random_sample() > 0.5:
            x_len, y_len = y_len, x_len
        if y_len <= rows and x_len <= cols:
            y0 = rng.randint(0, rows - y_len + 1)
            x0 = rng.randint(0, cols - x_len + 1)
            m = inter_method(int(p["inter_method"]), x_len, y_len, out_hw[1], out_hw[0], rng)
            return _resize(img[y0:y0 + y_len, x0:x0 + x_len], out_hw[1], out_hw[0], m)
    return None


def _size_crop(img, p, out_hw, rng):
    """A square of random side in ``[min_crop_size, max_crop_size]``, resized to
    ``out_hw``."""
    rows, cols = img.shape[:2]
    cmax = int(p["max_crop_size"])
    if cols < cmax or rows < cmax:
        raise ParamError(f"ImageRecordIter: input image size {rows}x{cols} smaller than "
                         f"max_crop_size {cmax}")
    size = rng.randint(int(p["min_crop_size"]), cmax + 1)
    y, x = rows - size, cols - size
    if p["rand_crop"]:
        y, x = rng.randint(0, y + 1), rng.randint(0, x + 1)
    else:
        y, x = y // 2, x // 2
    m = inter_method(int(p["inter_method"]), size, size, out_hw[1], out_hw[0], rng)
    return _resize(img[y:y + size, x:x + size], out_hw[1], out_hw[0], m)


def _fit_crop(img, p, out_hw, rng):
    """The crop to ``out_hw`` (random with ``rand_crop``, else centred), after enlarging an
    image with fewer rows or columns, keeping its aspect ratio."""
    h, w = out_hw
    rows, cols = img.shape[:2]
    m = inter_method(int(p["inter_method"]), cols, rows, w, h, rng)
    f32 = np.float32
    if rows < h:
        img = _resize(img, int(f32(h) / f32(rows) * f32(cols)), h, m)
        rows, cols = img.shape[:2]
    if cols < w:
        img = _resize(img, w, int(f32(w) / f32(cols) * f32(rows)), m)
        rows, cols = img.shape[:2]
    y, x = rows - h, cols - w
    if p["rand_crop"]:
        y, x = rng.randint(0, y + 1), rng.randint(0, x + 1)
    else:
        y, x = y // 2, x // 2
    return img[y:y + h, x:x + w]


def crop(img, p, out_hw, rng):
    """Cut ``img`` (H, W, C uint8) to ``out_hw`` as MXNet's augmenter does."""
    out = None
    if p["random_resized_crop"]:
        lo, hi = aspect_range(p)
        if (p["max_random_area"] != 1 or p["min_random_area"] != 1 or lo != 1 or hi != 1):
            out = _resized_crop(img, p, out_hw, rng)
    elif p["max_crop_size"] != -1 or p["min_crop_size"] != -1:
        out = _size_crop(img, p, out_hw, rng)
    if out is None:
        out = _fit_crop(img, p, out_hw, rng)
    if out.ndim == 2:
        out = out[:, :, None]
    return out
