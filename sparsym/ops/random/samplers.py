"""Samplers: _random_uniform / _random_normal (scalar parameters), _sample_uniform /
_sample_normal (array parameters) and the *_like forms; drawn from ``mx.random``'s generator."""
from __future__ import annotations

import dataclasses

import numpy as np

from ... import _rng
from ...base import ParamError, dtype_of
from ..core import rules
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef
from ..core.registry import register as _register


def register(op):
    """Register a sampling op: marked random (never merged with an equal node)."""
    _register(dataclasses.replace(op, random=True))

_FLOATS = (None, "float16", "float32", "float64")


def _out_shape(a):
    shp = a.get("__out_shapes__")
    if shp is not None:
        return tuple(shp[0])
    return tuple(a.shape or ())


def _dt(a):
    return dtype_of(a.dtype) if a.dtype else np.dtype(np.float32)


def _param_shape(attrs, ins, outs):
    if not attrs.shape:  # MXNet: shape () is unknown, to be inferred from the consumers
        return ins, outs
    s = tuple(None if d == 0 else d for d in attrs.shape)
    rules.set_shape(outs, 0, s, "output")
    return ins, outs


def _param_type(attrs, ins, outs):
    if attrs.dtype or outs[0] is None:
        rules.set_type(outs, 0, _dt(attrs), "output")
    return ins, outs


def _uniform_check(op, a):
    require(a.low <= a.high, op, f"low {a.low} must not exceed high {a.high}")


def _normal_check(op, a):
    require(a.scale >= 0, op, f"scale must be non-negative, got {a.scale}")


_COMMON = dict(shape=Field("shape", (), doc="output shape (0 dims are inferred)"),
               ctx=Field("str", "", doc="context (ignored: one CPU generator)"),
               dtype=Field("dtype", None, choices=_FLOATS, doc="output dtype (float32)"))
_UNIFORM = Checked(_uniform_check, low=Field("float", 0.0), high=Field("float", 1.0), **_COMMON)
_NORMAL = Checked(_normal_check, loc=Field("float", 0.0), scale=Field("float", 1.0), **_COMMON)


def _uniform(a, xs):
    return (_rng.rng().uniform(a.low, a.high, size=_out_shape(a)).astype(_dt(a)),)


def _normal(a, xs):
    return (_rng.rng().normal(a.loc, a.scale, size=_out_shape(a)).astype(_dt(a)),)


_DOC = """Draw samples from {what}.

    Parameters
    ----------
    {params}
    shape : tuple of int, default () (0 dims are completed by shape inference)
    dtype : {{None, 'float16', 'float32', 'float64'}}, default None (float32)

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.{name}(shape=(2, 3)).shape
    (2, 3)
    """

register(OpDef(
    "_random_uniform", params=_UNIFORM, inputs=(), dispatch=(Dispatch((), (DNS,), _uniform),),
    infer_shape=_param_shape, infer_type=_param_type, gradient=lambda node, og: [],
    needs_out_shapes=True, aliases=("random_uniform", "uniform"),
    doc=_DOC.format(what="U[low, high)", params="low, high : float, default 0, 1",
                    name="random_uniform")))
register(OpDef(
    "_random_normal", params=_NORMAL, inputs=(), dispatch=(Dispatch((), (DNS,), _normal),),
    infer_shape=_param_shape, infer_type=_param_type, gradient=lambda node, og: [],
    needs_out_shapes=True, aliases=("random_normal", "normal"),
    doc=_DOC.format(what="N(loc, scale^2)", params="loc, scale : float, default 0, 1",
                    name="random_normal")))


# ----------------------------------------------------------------------------- *_like
def _like_kernel(fn):
    def k(a, xs):
        a2 = dict(a)
        a2["__out_shapes__"] = (xs[0].shape,)
        a2.setdefault("dtype", None)
        return (fn(type(a)(a2), [])[0].astype(xs[0].dtype, copy=False),)
    return k


for _name, _params, _fn in (("_random_uniform_like", _UNIFORM, _uniform),
                            ("_random_normal_like", _NORMAL, _normal)):
    _p = Checked(_params.check, **{k: f for k, f in _params.fields.items()
                                   if k not in ("shape", "dtype", "ctx")})
    register(OpDef(
        _name, params=_p, dispatch=(Dispatch((DNS,), (DNS,), _like_kernel(_fn)),),
        infer_shape=rules.same_shape, infer_type=rules.same_type,
        gradient=lambda node, og: [None],
        aliases=(_name[len("_random_"):],),
        doc=f"Samples shaped and typed like the input ({_name[8:-5]} distribution)."))


# ----------------------------------------------------------------------------- _sample_*
_SAMPLE = Checked(lambda op, a: None,
                  shape=Field("shape", (), doc="samples per parameter element"),
                  dtype=Field("dtype", None, choices=_FLOATS))


def _sample_shape(attrs, ins, outs):
    cur = rules.merged_shape(ins)
    if cur is not None:
        for i in range(len(ins)):
            rules.set_shape(ins, i, cur)
        rules.set_shape(outs, 0, tuple(cur) + tuple(attrs.shape or ()), "output")
    return ins, outs


def _sample_type(attrs, ins, outs):
    ins, _ = rules.same_type(attrs, ins, [None])
    if attrs.dtype:
        rules.set_type(outs, 0, dtype_of(attrs.dtype), "output")
    elif ins[0] is not None:
        rules.set_type(outs, 0, ins[0], "output")
    return ins, outs


def _sample(kind):
    def k(a, xs):
        p0, p1 = xs
        extra = tuple(a.shape or ())
        b = (Ellipsis,) + (None,) * len(extra)
        size = p0.shape + extra
        draw = _rng.rng().uniform if kind == "uniform" else _rng.rng().normal
        try:
            out = draw(p0[b], p1[b], size=size)
        except ValueError as err:   # NumPy's parameter checks ("scale < 0"...)
            raise ParamError(f"operator _sample_{kind}: invalid parameter array: {err}, got "
                             f"{p0.ravel()[:8].tolist()}, {p1.ravel()[:8].tolist()}") from err
        dt = dtype_of(a.dtype) if a.dtype else p0.dtype
        return (out.astype(dt),)
    return k


for _name, _ins, _kind in (("_sample_uniform", ("low", "high"), "uniform"),
                           ("_sample_normal", ("mu", "sigma"), "normal")):
    register(OpDef(
        _name, params=_SAMPLE, inputs=_ins,
        dispatch=(Dispatch((DNS, DNS), (DNS,), _sample(_kind)),),
        infer_shape=_sample_shape, infer_type=_sample_type,
        gradient=lambda node, og: [None, None], aliases=(_name[1:],),
        doc=f"""Draw ``{_kind}`` samples for each element of the parameter arrays
    {_ins}; output shape is param.shape + shape."""))
