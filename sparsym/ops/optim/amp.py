"""Mixed-precision and gradient-bookkeeping operators: amp_cast, amp_multicast, all_finite,
multi_all_finite, multi_sum_sq, _copyto, _contrib_div_sqrt_dim and
_contrib_allclose (MXNet 1.9.1's semantics, probed; dense rows only).

- all_finite / multi_all_finite give a (1,) float32 flag: 1 when every element is finite.
  With ``init_output=False`` MXNet only clears the flag in a buffer it does not initialise
  (a fresh one is zeros); the flag then starts at 0 here.
- amp_multicast casts every input to the widest (``cast_narrow``: narrowest) input dtype, by
  item size, floats winning ties.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import dtype_of
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_AMP_TYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def _arrays(a):
    return tuple(f"data{i}" for i in range(a.num_arrays))


def _amp_dtype(a):
    return np.dtype(np.float32) if a.dtype == "bfloat16" else dtype_of(a.dtype)


def _amp_cast(a, xs):
    x = xs[0]
    # MXNet: only floating inputs are cast (an int32 input stays int32)
    return (x.astype(_amp_dtype(a)) if x.dtype.kind == "f" else x.copy(),)


def _amp_cast_type(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_type(outs, 0, _amp_dtype(attrs) if ins[0].kind == "f" else ins[0], "output")
    return ins, outs


register(OpDef(
    "amp_cast", params=Params(dtype=Field("str", choices=_AMP_TYPES)),
    dispatch=(Dispatch((DNS,), (DNS,), _amp_cast),), infer_type=_amp_cast_type,
    gradient=lambda node, og: [bw("_backward_Cast", [og[0], node.inputs[0]], node,
                                  "backward")],
    doc="""Cast floating-point data to ``dtype`` (AMP); other dtypes pass unchanged.

    Parameters
    ----------
    data : NDArray or Symbol
    dtype : str
    """))


def _multicast_target(a, dtypes):
    def key(t):
        return (t.itemsize, t.kind == "f")
    pick = min if a.cast_narrow else max
    return pick(dtypes, key=key)


def _multicast(a, xs):
    t = _multicast_target(a, [x.dtype for x in xs])
    return tuple(x.astype(t) for x in xs)


def _multicast_type(attrs, ins, outs):
    if all(t is not None for t in ins):
        t = _multicast_target(attrs, list(ins))
        for i in range(len(outs)):
            rules.set_type(outs, i, t, "output")
    return ins, outs


def _multicast_shape(attrs, ins, outs):
    for i in range(len(ins)):
        if ins[i] is not None:
            rules.set_shape(outs, i, ins[i], "output")
    return ins, outs


def _multicast_bwd(a, xs):
    n = len(xs) // 2
    return tuple(st.todense(g).astype(x.dtype) for g, x in zip(xs[:n], xs[n:]))


def _multicast_check(op, a):
    require(a.num_outputs >= 1, op, f"num_outputs must be positive, got {a.num_outputs}")


_MULTICAST = Checked(_multicast_check, num_outputs=Field("int"),
                     cast_narrow=Field("bool", False))
register(OpDef(
    "_backward_amp_multicast", params=_MULTICAST,
    inputs=lambda a: tuple(f"ograd{i}" for i in range(a.num_outputs))
    + tuple(f"data{i}" for i in range(a.num_outputs)),
    num_outputs=lambda a: a.num_outputs,
    dispatch=(Dispatch((DNS, "..."), (DNS,), _multicast_bwd),),
    infer_shape=lambda a, i, o: (i, list(i[a.num_outputs:])),
    infer_type=lambda a, i, o: (i, list(i[a.num_outputs:])),
    doc="Gradients of amp_multicast: each output gradient cast back to its input's dtype."))
register(OpDef(
    "amp_multicast", params=_MULTICAST,
    inputs=lambda a: tuple(f"data{i}" for i in range(a.num_outputs)),
    key_var_num_args="num_outputs", num_outputs=lambda a: a.num_outputs,
    dispatch=(Dispatch((DNS, "..."), (DNS,), _multicast),),
    infer_shape=_multicast_shape, infer_type=_multicast_type,
    gradient=lambda node, og: multi_bw("_backward_amp_multicast", list(og) + list(node.inputs),
                                       node, "backward", len(node.inputs), **kept(node)),
    doc="""Cast all inputs to their widest dtype (narrowest with ``cast_narrow``).

    Parameters
    ----------
    data : NDArrays or Symbols
    num_outputs : int
    cast_narrow : bool, default False
    """))


# ----------------------------------------------------------------------------- finiteness
def _flag(a, ok):
    return np.array([1.0 if ok and a.init_output else 0.0], dtype=np.float32)


def _finite(xs):
    return all(bool(np.isfinite(st.todense(x)).all()) for x in xs)


def _flag_out(attrs, ins, outs):
    rules.set_shape(outs, 0, (1,), "output")
    return ins, outs


def _float32_out(attrs, ins, outs):
    rules.set_type(outs, 0, np.dtype(np.float32), "output")
    return ins, outs


register(OpDef(
    "all_finite", params=Params(init_output=Field("bool", True)),
    dispatch=(Dispatch(("*",), (DNS,), lambda a, xs: (_flag(a, _finite(xs)),)),),
    infer_shape=_flag_out, infer_type=_float32_out, gradient=lambda n, og: [None],
    doc="""1.0 in a (1,) float32 array when every element of ``data`` is finite, else 0.

    Parameters
    ----------
    data : NDArray
    init_output : bool, default True
    """))
register(OpDef(
    "multi_all_finite", params=Params(num_arrays=Field("int", 1),
                                      init_output=Field("bool", True)),
    inputs=_arrays, key_var_num_args="num_arrays",
    dispatch=(Dispatch(("*", "..."), (DNS,), lambda a, xs: (_flag(a, _finite(xs)),)),),
    infer_shape=_flag_out, infer_type=_float32_out,
    gradient=lambda n, og: [None] * len(n.inputs),
    doc="""1.0 in a (1,) float32 array when every element of every input is finite, else 0.

    Parameters
    ----------
    data : NDArrays
    num_arrays : int, default 1
    init_output : bool, default True
    """))


def _sum_sq(a, xs):
    return (np.array([np.square(st.todense(x), dtype=np.float64).sum() for x in xs],
                     dtype=np.float32),)


register(OpDef(
    "multi_sum_sq", params=Params(num_arrays=Field("int")), inputs=_arrays,
    key_var_num_args="num_arrays", dispatch=(Dispatch(("*", "..."), (DNS,), _sum_sq),),
    infer_shape=lambda a, i, o: (i, [(a.num_arrays,)]), infer_type=_float32_out,
    gradient=lambda n, og: [None] * len(n.inputs),
    doc="""The sum of squares of each input, as a (num_arrays,) float32 array.

    Parameters
    ----------
    data : NDArrays
    num_arrays : int
    """))


register(OpDef(
    "_copyto", dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (xs[0].copy(),)),),
    gradient=lambda node, og: [og[0]], doc="A copy of the input."))


# ----------------------------------------------------------------------------- contrib
def _div_sqrt_dim(a, xs):
    x = xs[0]
    return ((x / np.sqrt(x.shape[-1])).astype(x.dtype, copy=False),)


register(OpDef(
    "_backward_contrib_div_sqrt_dim", inputs=("ograd",),
    dispatch=(Dispatch((DNS,), (DNS,), _div_sqrt_dim),),
    doc="Gradient of div_sqrt_dim: ograd / sqrt(last dim)."))
register(OpDef(
    "_contrib_div_sqrt_dim", dispatch=(Dispatch((DNS,), (DNS,), _div_sqrt_dim),),
    gradient=lambda node, og: [bw("_backward_contrib_div_sqrt_dim", [og[0]], node, "backward")],
    doc="""data / sqrt(data.shape[-1]) (attention's scaling).

    Parameters
    ----------
    data : NDArray or Symbol
    """))


def _allclose(a, xs):
    x, y = (st.todense(v) for v in xs)
    ok = np.allclose(x, y, rtol=a.rtol, atol=a.atol, equal_nan=a.equal_nan)
    return (np.array(1 if ok else 0, dtype=np.uint8),)


register(OpDef(
    "_contrib_allclose", inputs=("a", "b"),
    params=Params(rtol=Field("float", 1e-5), atol=Field("float", 1e-8),
                  equal_nan=Field("bool", True)),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _allclose),),
    infer_shape=lambda a, i, o: (i, [()]),
    infer_type=lambda a, i, o: (i, [np.dtype(np.uint8)]),
    gradient=lambda n, og: [None, None],
    doc="""1 (uint8, 0-d) when |a - b| <= atol + rtol * |b| everywhere, else 0.

    Parameters
    ----------
    a, b : NDArray or Symbol
    rtol : float, default 1e-5
    atol : float, default 1e-8
    equal_nan : bool, default True
    """))
