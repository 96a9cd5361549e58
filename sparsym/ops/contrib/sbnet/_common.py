"""Helpers shared by the SBNet op records (geometry params, index and dtype checks)."""
from __future__ import annotations

import numpy as np

from ....base import DTypeError, ShapeError
from ...core.params import Field

_I32 = np.dtype(np.int32)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _geom_fields(**extra):
    f = dict(
        bsize=Field("shape", doc="block size (bh, bw)"),
        bstride=Field("shape", doc="block stride (sh, sw)"),
        boffset=Field("shape", (0, 0), doc="offset of block (0, 0), usually -padding"),
        transpose=Field("bool", False, doc="blocks laid out [M,C,bh,bw] instead of [M,bh,bw,C]"),
        layout=Field("str", "NHWC", choices=("NHWC", "NCHW"), doc="dense data layout"))
    f.update(extra)
    return f


def _pair(v, name):
    v = tuple(v)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise ShapeError(f"{name}={v} must be an (H, W) pair")
    return v


def _channels(shape, layout):
    return shape[3] if layout == "NHWC" else shape[1]


def _block_shape(a, m, c):
    bh, bw_ = _pair(a.bsize, "bsize")
    return (m, c, bh, bw_) if a.transpose else (m, bh, bw_, c)


def _indices(idx):
    """int32 [M,3] indices and the mask of valid rows (None when every row is valid)."""
    idx = np.asarray(idx)
    if idx.ndim != 2 or idx.shape[1] != 3:
        raise ShapeError(f"indices must have shape (M, 3), got {idx.shape}")
    idx = np.ascontiguousarray(idx, dtype=np.int32)
    valid = idx[:, 0] >= 0
    return idx, (None if valid.all() else valid)


def _float_data(x, where):
    x = np.asarray(x)
    if x.dtype not in _FLOATS:
        raise DTypeError(f"{where}: data must be float32 or float64, got {x.dtype}")
    return x


def _check_float(types, i, where):
    if types[i] is not None and np.dtype(types[i]) not in _FLOATS:
        raise DTypeError(f"{where}: expected float32 or float64, got {np.dtype(types[i])}")
