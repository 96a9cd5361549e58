"""Creation operators with no data input: _zeros, _ones, _full, _arange (the ops behind
``mx.sym.zeros/ones/full/arange``). Shapes with 0 dims are completed by shape inference."""
from __future__ import annotations

import math

import numpy as np

from ...base import dtype_of
from ..core import rules
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register

_TYPES = ("float16", "float32", "float64", "int32", "int64", "int8", "uint8", "bool",
          "bfloat16")


def _dt(a):
    return np.dtype(np.float32) if a.dtype in (None, "bfloat16") else dtype_of(a.dtype)


def _shape(a):
    shp = a.get("__out_shapes__")
    if shp is not None:
        return tuple(shp[0])
    s = tuple(a.shape or ())
    if any(d in (0, -1) for d in s):
        from ...base import ShapeError
        raise ShapeError(f"shape {s} has unknown (0 or -1) dims; give a full shape or use it in a "
                         "graph where inference completes it")
    return s


def _fill_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, tuple(None if d in (0, -1) else d for d in (attrs.shape or ())),
                    "output")
    return ins, outs


def _fill_type(attrs, ins, outs):
    rules.set_type(outs, 0, _dt(attrs), "output")
    return ins, outs


_COMMON = dict(shape=Field("shape", (), doc="output shape; 0 and -1 dims are inferred"),
               ctx=Field("str", "", doc="context (ignored)"),
               dtype=Field("str", "float32", choices=_TYPES, doc="output dtype"))


def _nonneg(op, a):
    """0 and -1 (MXNet's unknown under NumPy shapes) are dims left to inference."""
    require(all(d >= -1 for d in (a.shape or ())), op,
            f"shape dims must be >= -1 (-1 or 0: inferred), got {a.shape}")


for _name, _val in (("_zeros", 0), ("_ones", 1)):
    register(OpDef(
        _name, params=Checked(_nonneg, **_COMMON), inputs=(),
        dispatch=(Dispatch((), (DNS,), lambda a, xs, _v=_val: (np.full(_shape(a), _v, _dt(a)),)),),
        infer_shape=_fill_shape, infer_type=_fill_type, gradient=lambda node, og: [],
        needs_out_shapes=True,
        doc=f"An array of {'zeros' if _val == 0 else 'ones'} (``mx.sym.{_name[1:]}``)."))
register(OpDef(
    "_full", params=Checked(_nonneg, **_COMMON, value=Field("float", doc="fill value")),
    inputs=(),
    dispatch=(Dispatch((), (DNS,), lambda a, xs: (np.full(_shape(a), a.value, _dt(a)),)),),
    infer_shape=_fill_shape, infer_type=_fill_type, gradient=lambda node, og: [],
    needs_out_shapes=True, doc="An array filled with ``value`` (``mx.sym.full``)."))


# ----------------------------------------------------------------------------- _arange
def _arange_check(op, a):
    require(a.step != 0, op, "step must not be 0")
    for key in ("start", "stop", "step"):  # MXNet: "Invalid Parameter format for stop"
        v = getattr(a, key)
        require(v is None or math.isfinite(v), op, f"{key} must be a finite number, got {v}")
    require(a.repeat >= 1, op, f"repeat must be positive, got {a.repeat}")


_ARANGE = Checked(_arange_check, start=Field("float"), stop=Field("float_or_none", None),
                  step=Field("float", 1.0), repeat=Field("int", 1),
                  infer_range=Field("bool", False, doc="take the length from inference"),
                  ctx=Field("str", ""), dtype=Field("str", "float32", choices=_TYPES))


def _arange_len(a):
    start, stop = (0.0, a.start) if a.stop is None else (a.start, a.stop)
    return max(0, int(math.ceil((stop - start) / a.step))) * a.repeat


def _arange_shape(attrs, ins, outs):
    if attrs.infer_range and attrs.stop is None:
        return ins, outs
    rules.set_shape(outs, 0, (_arange_len(attrs),), "output")
    return ins, outs


def _arange(a, xs):
    start = 0.0 if a.stop is None and not a.infer_range else a.start
    shp = a.get("__out_shapes__")
    n = shp[0][0] // a.repeat if shp is not None else _arange_len(a) // a.repeat
    dt = _dt(a)
    if dt.kind in "iu":  # MXNet casts start and step to the integer type first (C truncation)
        i64 = np.arange(n, dtype=np.int64)
        vals = int(start) + int(a.step) * i64
    else:
        vals = start + a.step * np.arange(n, dtype=np.float64)
    return (np.repeat(vals, a.repeat).astype(dt),)


register(OpDef(
    "_arange", params=_ARANGE, inputs=(), dispatch=(Dispatch((), (DNS,), _arange),),
    infer_shape=_arange_shape, infer_type=_fill_type, gradient=lambda node, og: [],
    needs_out_shapes=True,
    doc="""Evenly spaced values in [start, stop) (``[0, start)`` when stop is None), each
    repeated ``repeat`` times (``mx.sym.arange``)."""))
