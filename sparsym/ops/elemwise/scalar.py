"""Array-scalar operators with MXNet 1.9.1's storage rows.

- _mul_scalar, _div_scalar, _scatter_plus/minus_scalar: R -> R, C -> C (stored values only);
- _plus_scalar, _minus_scalar: same stype when scalar == 0, else a dense result [ex];
- comparisons: R -> R, C -> C when op(0, scalar) is false, else dense (fallback in MXNet);
- the rest give dense results (sparse inputs fall back, as in MXNet).
Gradients: mul/div keep the ograd's storage; plus/minus pass it through.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...kernels import csr as kcsr
from ...kernels import rsp as krsp
from ..core.grad import bw, identity_grad, no_grad
from ..core.helpers import CSR, DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from .unary import mod_or_zero

_SCALAR = Params(scalar=Field("float", 1.0, doc="scalar operand"),
                 is_int=Field("bool", False, doc="treat the scalar as an integer"))


def _apply(fn, v, s):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(fn(v, s)).astype(v.dtype, copy=False)


def _dense_k(fn):
    return lambda a, xs: (_apply(fn, st.todense(xs[0]), a.scalar),)


def _values_k(fn):
    """fn on stored values only (csr and row_sparse keep their structure)."""
    def k(a, xs):
        x = xs[0]
        if isinstance(x, st.CSR):
            return (kcsr.map_values(x, lambda v: _apply(fn, v, a.scalar)),)
        return (krsp.map_values(x, lambda v: _apply(fn, v, a.scalar)),)
    return k


def scalar_op(name, fn, sparse_when=None, dense_when=None, grad=no_grad, doc=""):
    """Register ``name(data, scalar)``.

    sparse_when(scalar): R -> R, C -> C rows on stored values (fn(0, s) == 0 there).
    dense_when(scalar): R/C -> dense rows computed directly (MXNet's [ex] dense results).
    """
    rows = [Dispatch((DNS,), (DNS,), _dense_k(fn))]
    if sparse_when is not None:
        cond = lambda a, s, _z=sparse_when: _z(a.scalar)  # noqa: E731
        rows += [Dispatch((CSR,), (CSR,), _values_k(fn), when=cond),
                 Dispatch((RSP,), (RSP,), _values_k(fn), when=cond)]
    if dense_when is not None:
        cond = lambda a, s, _z=dense_when: _z(a.scalar)  # noqa: E731
        rows += [Dispatch((CSR,), (DNS,), _dense_k(fn), when=cond),
                 Dispatch((RSP,), (DNS,), _dense_k(fn), when=cond)]
    register(OpDef(name, params=_SCALAR, dispatch=tuple(rows), gradient=grad,
                   doc=doc or f"Array-scalar {name.strip('_').replace('_scalar', '')}."))


# ----------------------------------------------------------------------------- gradients
_DERIV = {
    "rdiv": lambda x, s: -s / (x * x), "pow": lambda x, s: s * x ** (s - 1),
    "rpow": lambda x, s: np.log(s) * s ** x,
    "rmod": lambda x, s: -np.floor(s / x),
    "max": lambda x, s: (x >= s).astype(x.dtype), "min": lambda x, s: (x <= s).astype(x.dtype),
}


def _bscalar(a, xs):
    og, x = st.todense(xs[0]), st.todense(xs[1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return ((og * _DERIV[a.fn](x, a.scalar)).astype(og.dtype, copy=False),)


def _bscalar_grad(node, og):
    """Second-order rule: d/dograd is the same op on g; d/dx is g * ograd * f''(x), written
    as this op again (pow: s(s-1)x^(s-2); rdiv: 2s/x^3; rpow: ln(s)^2 s^x)."""
    ograd, x = node.inputs
    fn, s = node.params.fn, node.params.scalar
    d_og = bw("_backward_scalar", [og[0], x], node, "grad_ograd", fn=fn, scalar=s)
    if fn in ("max", "min", "rmod"):
        return [d_og, None]
    gg = bw("elemwise_mul", [og[0], ograd], node, "grad_g_ograd")
    if fn == "pow":
        scale, fn2, s2 = s, "pow", s - 1
    elif fn == "rdiv":
        scale, fn2, s2 = -s, "pow", -2.0
    else:
        scale, fn2, s2 = float(np.log(s)), "rpow", s
    gg = bw("_mul_scalar", [gg], node, "grad_scale", scalar=scale)
    return [d_og, bw("_backward_scalar", [gg, x], node, "grad_data", fn=fn2, scalar=s2)]


register(OpDef("_backward_scalar", inputs=("ograd", "data"),
               params=Params(fn=Field("str", choices=tuple(_DERIV)), scalar=Field("float", 1.0)),
               dispatch=(Dispatch((DNS, DNS), (DNS,), _bscalar),
                         Dispatch(("*", "*"), (DNS,), _bscalar)),
               gradient=_bscalar_grad,
               doc="ograd * d/dx f(x, scalar) for the scalar ops with a dense gradient."))


def _deriv_grad(kind):
    def grad(node, og):
        return [bw("_backward_scalar", [og[0], node.inputs[0]], node, "backward",
                   fn=kind, scalar=node.params.scalar)]
    return grad


def _scale_grad(inverse):
    """ograd * s (or / s) through _mul_scalar / _div_scalar: the ograd's storage is kept."""
    def grad(node, og):
        op = "_div_scalar" if inverse else "_mul_scalar"
        return [bw(op, [og[0]], node, "backward", scalar=node.params.scalar)]
    return grad


def _neg_grad(node, og):
    return [bw("negative", [og[0]], node, "backward")]


def _is_zero(s):
    return s == 0


def _nonzero(s):
    return s != 0


scalar_op("_plus_scalar", np.add, _is_zero, _nonzero, identity_grad,
          doc="data + scalar; sparse stays sparse only for scalar 0, else a dense result.")
scalar_op("_minus_scalar", np.subtract, _is_zero, _nonzero, identity_grad,
          doc="data - scalar; sparse stays sparse only for scalar 0, else a dense result.")
scalar_op("_rminus_scalar", lambda x, s: s - x, grad=_neg_grad)
scalar_op("_mul_scalar", np.multiply, lambda s: True, grad=_scale_grad(False),
          doc="data * scalar; keeps the storage type.")
scalar_op("_div_scalar", np.divide, lambda s: True, grad=_scale_grad(True),
          doc="data / scalar; keeps the storage type.")
scalar_op("_rdiv_scalar", lambda x, s: s / x, grad=_deriv_grad("rdiv"))
scalar_op("_power_scalar", np.power, grad=_deriv_grad("pow"))
scalar_op("_rpower_scalar", lambda x, s: np.power(s, x), grad=_deriv_grad("rpow"))
scalar_op("_maximum_scalar", np.maximum, grad=_deriv_grad("max"))
scalar_op("_minimum_scalar", np.minimum, grad=_deriv_grad("min"))
scalar_op("_mod_scalar", mod_or_zero, grad=identity_grad)
scalar_op("_rmod_scalar", lambda x, s: mod_or_zero(s, x), grad=_deriv_grad("rmod"))
scalar_op("_scatter_plus_scalar", np.add, lambda s: True,
          doc="scalar added to stored values only (sparse inputs keep their structure).")
scalar_op("_scatter_minus_scalar", np.subtract, lambda s: True,
          doc="scalar subtracted from stored values only (sparse inputs keep their structure).")
for _n, _f in (("_equal_scalar", np.equal), ("_not_equal_scalar", np.not_equal),
               ("_greater_scalar", np.greater), ("_greater_equal_scalar", np.greater_equal),
               ("_lesser_scalar", np.less), ("_lesser_equal_scalar", np.less_equal)):
    # MXNet: a sparse result only when op(0, s) is false (implicit zeros stay zero)
    scalar_op(_n, _f, lambda s, _f=_f: not bool(_f(0.0, s)),
              doc=f"1 where data {_n[1:-7]} scalar, else 0; sparse kept when 0 maps to 0.")
