"""``mx.image``'s functions over NDArray images (H, W, C): resizing and cropping with OpenCV's
rules (the ``_cvimresize`` and ``_image_*`` operators), normalisation, rotation, and decoding
through Pillow when it is installed (MXNet decodes with OpenCV; sparsym has no codec of its
own).

Random choices use Python's ``random`` and NumPy's global generator, as MXNet's do.
"""
from __future__ import annotations

import errno
import io as _io
import random
from numbers import Number

import numpy as np

from .. import ndarray as nd
from ..base import MissingFileError, MXNetError, ParamError, ShapeError

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate"]


# ----------------------------------------------------------------------------- decoding
def _pillow():
    try:
        from PIL import Image
    except ImportError:
        raise NotImplementedError(
            "decoding images (mx.image.imdecode/imread, ImageRecordDataset, "
            "ImageFolderDataset) needs Pillow: pip install pillow (MXNet decodes with "
            "OpenCV, which sparsym does not bundle)") from None
    return Image


def _decode(data, flag, to_rgb, where):
    Image = _pillow()
    try:
        im = Image.open(_io.BytesIO(data))
        im.load()
    except Exception as err:  # noqa: BLE001  (Pillow raises several types)
        raise MXNetError(f"{where}: cannot decode the image: {err}") from err
    if flag == 0:
        arr = np.asarray(im.convert("L"))[:, :, None]
    else:
        arr = np.asarray(im.convert("RGB"))
        if not to_rgb:
            arr = arr[:, :, ::-1]
    return nd.array(np.ascontiguousarray(arr), dtype=np.uint8)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an image (JPEG, PNG, ... whatever Pillow reads) to an NDArray (H, W, C) uint8.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        The encoded image.
    flag : int, default 1
        1: three channels; 0: one channel (grayscale), shape (H, W, 1).
    to_rgb : bool, default True
        RGB channel order (False: BGR, OpenCV's own).
    out : NDArray, optional
        Receives the result.

    Returns
    -------
    NDArray
    """
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.astype(np.uint8).tobytes()
    elif not isinstance(buf, (bytes, bytearray)):
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray,if you would "
                         "like to input type str, please convert to bytes")
    img = _decode(bytes(buf), flag, to_rgb, "imdecode")
    if out is not None:
        out[:] = img
        return out
    return img


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image file to an NDArray (H, W, C) uint8 (see :func:`imdecode`)."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        # an MXNetError (MXNet's type) and a FileNotFoundError, with MXNet's text
        raise MissingFileError(errno.ENOENT, f"Imread: '{filename}' couldn't open file: No "
                               "such file or directory", filename) from None
    img = _decode(data, flag, to_rgb, f"imread({filename!r})")
    if out is not None:
        out[:] = img
        return out
    return img


# ----------------------------------------------------------------------------- geometry
def imresize(src, w, h, interp=1, out=None):
    """Resize an image (H, W[, C]) to width ``w`` and height ``h`` as OpenCV does.

    ``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos-4.
    """
    return nd._internal._cvimresize(src, w=w, h=h, interp=interp, out=out)


def scale_down(src_size, size):
    """Scale the wanted crop ``size`` (w, h) down to fit in ``src_size`` (w, h), keeping its
    aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=None,  # noqa: A002
                   out=None):
    """Pad an image (H, W[, C]) with a border as OpenCV's copyMakeBorder.

    ``type``: 0 constant (``value``, or per-channel ``values``), 1 replicate, 2 reflect,
    3 wrap, 4 reflect-101.
    """
    return nd._internal._cvcopyMakeBorder(src, top=top, bot=bot, left=left, right=right,
                                          type=type, value=value, values=values or (), out=out)


def _get_interp_method(interp, sizes=()):
    """Resolve MXNet's interpolation codes 9 (by size change) and 10 (random)."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}")
    return interp


def _hw(src):
    if src.ndim != 3:
        raise ShapeError(f"mx.image: expected an image (H, W, C), got shape {src.shape}")
    return src.shape[0], src.shape[1]


def resize_short(src, size, interp=2):
    """Resize the shorter side of an image (H, W, C) to ``size``, keeping the aspect ratio."""
    h, w = _hw(src)
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop the window (x0, y0, w, h) of an image (H, W, C), then resize it to ``size``
    (w, h) when given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        out = imresize(out, *size, interp=_get_interp_method(interp, (h, w, size[1], size[0])))
    return out


def random_crop(src, size, interp=2):
    """Crop a random window of ``size`` (w, h) (scaled down to fit); returns (image,
    (x0, y0, w, h))."""
    h, w = _hw(src)
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """Crop the central window of ``size`` (w, h) (scaled down to fit, then resized back);
    returns (image, (x0, y0, w, h))."""
    h, w = _hw(src)
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """Subtract ``mean`` and divide by ``std`` (in place on ``src``, which is returned)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """Crop a window of random area (fraction ``area``, a number or (min, max)) and aspect
    ratio (``ratio`` (min, max), log-uniform), resized to ``size`` (w, h); after 10 failed
    draws, the center crop. Returns (image, (x0, y0, w, h))."""
    h, w = _hw(src)
    if "min_area" in kwargs:
        area = kwargs.pop("min_area")
    if kwargs:
        raise ParamError(f"unexpected keyword arguments for `random_size_crop`: "
                         f"{sorted(kwargs)}")
    if isinstance(area, Number):
        area = (area, 1.0)
    for _ in range(10):
        target = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target * new_ratio)))
        new_h = int(round(np.sqrt(target / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


# ----------------------------------------------------------------------------- rotation
def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate float32 images (C, H, W) or (N, C, H, W) about their centres by
    ``rotation_degrees`` (a number, or one per image), bilinear, zero outside.

    ``zoom_in`` scales so that no padding shows; ``zoom_out`` so that the whole image stays.
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype != np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is required to "
                            "be a scalar.")
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = src.shape
    if isinstance(rotation_degrees, Number):
        angles = np.full(n, float(rotation_degrees))
    else:
        angles = np.asarray(rotation_degrees.asnumpy() if isinstance(rotation_degrees, nd.NDArray)
                            else rotation_degrees, np.float64).reshape(-1)
    if len(angles) != n:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    rad = np.pi * angles / 180.0
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    yy, xx = np.meshgrid(np.arange(h) - hs, np.arange(w) - ws, indexing="ij")
    cos, sin = np.cos(rad)[:, None, None], np.sin(rad)[:, None, None]
    gx = (xx * cos - yy * sin) / ws
    gy = (xx * sin + yy * cos) / hs
    scale = np.ones((n, 1, 1))
    if zoom_in or zoom_out:
        rho, ang = np.hypot(h, w), np.arctan(h / w)
        a = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(ang + a)), np.abs(rho * np.cos(ang - a)))
        max_y = np.maximum(np.abs(rho * np.sin(ang + a)), np.abs(rho * np.sin(ang - a)))
        if zoom_out:
            scale = np.maximum(max_x / w, max_y / h)[:, None, None]
        else:
            scale = np.minimum(w / max_x, h / max_y)[:, None, None]
    grid = np.stack([gx * scale, gy * scale], axis=1).astype(np.float32)
    out = nd.BilinearSampler(src, nd.array(grid))
    return out[0] if single else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate float32 images (C, H, W) or (N, C, H, W) by angles drawn uniformly from
    ``angle_limits`` (one per image)."""
    if src.ndim == 3:
        degrees = np.random.uniform(*angle_limits)
    else:
        degrees = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)
