"""Creation operators beyond fill.py: _eye, _linspace, _contrib_arange_like and
_zeros_without_dtype (MXNet 1.9.1's semantics, probed)."""
from __future__ import annotations

import numpy as np

from ..core import rules
from ..core.helpers import DNS, Checked, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from .fill import _TYPES, _dt, _fill_type


def _eye_check(op, a):
    require(a.N >= 0 and a.M >= 0, op, f"N and M must be >= 0, got N={a.N}, M={a.M}")


def _eye_shape_of(a):
    return (a.N, a.M if a.M > 0 else a.N)


def _eye(a, xs):
    n, m = _eye_shape_of(a)
    return (np.eye(n, m, a.k, dtype=_dt(a)),)


register(OpDef(
    "_eye", inputs=(), params=Checked(_eye_check, N=Field("int"), M=Field("int", 0),
                                      k=Field("int", 0), ctx=Field("str", ""),
                                      dtype=Field("str", "float32", choices=_TYPES)),
    dispatch=(Dispatch((), (DNS,), _eye),),
    infer_shape=lambda a, i, o: (i, [_eye_shape_of(a)]), infer_type=_fill_type,
    gradient=lambda node, og: [],
    doc="An N x M (M = N when 0) array with ones on the k-th diagonal (``mx.nd.eye``)."))


def _linspace_check(op, a):
    require(a.num >= 0, op, f"num must be non-negative, got {a.num}")


def _linspace(a, xs):
    return (np.linspace(a.start, a.stop, a.num, endpoint=a.endpoint).astype(_dt(a)),)


register(OpDef(
    "_linspace", inputs=(), params=Checked(
        _linspace_check, start=Field("float"), stop=Field("float"), num=Field("int"),
        endpoint=Field("bool", True), ctx=Field("str", ""),
        dtype=Field("str", "float32", choices=_TYPES)),
    dispatch=(Dispatch((), (DNS,), _linspace),),
    infer_shape=lambda a, i, o: (i, [(a.num,)]), infer_type=_fill_type,
    gradient=lambda node, og: [],
    doc="``num`` evenly spaced values over [start, stop] (``mx.nd.linspace``)."))


def _arange_like_len(a, shape):
    if a.axis is None:
        return int(np.prod(shape, dtype=np.int64))
    return shape[norm_axis(a.axis, len(shape), "arange_like")]


def _arange_like(a, xs):
    shape = xs[0].shape
    n = _arange_like_len(a, shape)
    i = np.arange(n, dtype=np.int64)  # integer floor division: float64's is ~20x slower
    vals = a.start + a.step * (i // a.repeat if a.repeat != 1 else i).astype(np.float64)
    vals = vals.astype(xs[0].dtype)
    return (vals.reshape(shape) if a.axis is None else vals,)


def _arange_like_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        rules.set_shape(outs, 0, s if attrs.axis is None else (_arange_like_len(attrs, s),),
                        "output")
    return ins, outs


register(OpDef(
    "_contrib_arange_like", params=Params(
        start=Field("float", 0.0), step=Field("float", 1.0), repeat=Field("int", 1),
        ctx=Field("str", ""), axis=Field("int_or_none", None)),
    dispatch=(Dispatch(("*",), (DNS,), _arange_like),),
    infer_shape=_arange_like_shape, infer_type=rules.first_input_type,
    gradient=lambda node, og: [None],
    doc="""``start + step * (i // repeat)`` shaped like ``data`` (or along ``axis`` only).

    Parameters
    ----------
    data : NDArray or Symbol
    start : float, default 0
    step : float, default 1
    repeat : int, default 1
    axis : int or None
    """))


def _zwd_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, tuple(None if d == 0 else d for d in (attrs.shape or ())), "output")
    return ins, outs


def _zwd(a, xs):
    shp = a.get("__out_shapes__")
    shape = tuple(shp[0]) if shp is not None else tuple(a.shape or ())
    return (np.zeros(shape, dtype=np.float32 if a.dtype < 0 else _ZWD_TYPES[a.dtype]),)


# MXNet's type flags (mshadow): -1 leaves the dtype to inference (float32 when nothing says)
_ZWD_TYPES = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
              5: np.int8, 6: np.int64, 7: np.bool_}
register(OpDef(
    "_zeros_without_dtype", inputs=(), params=Params(
        shape=Field("shape", ()), ctx=Field("str", ""), dtype=Field("int", -1)),
    dispatch=(Dispatch((), (DNS,), _zwd),), needs_out_shapes=True,
    infer_shape=_zwd_shape,
    infer_type=lambda a, i, o: (i, [np.dtype(_ZWD_TYPES[a.dtype]) if a.dtype >= 0 else o[0]]),
    gradient=lambda node, og: [],
    doc="Zeros whose dtype (an MXNet type flag, -1: inferred) may come from inference."))
