"""Logical and hypot operators MXNet 1.9.1 registers beside the arithmetic ones, and the
legacy CamelCase aliases of the elementwise and scalar operators (``_Equal``,
``_PlusScalar``...), which old symbol JSON files name.

Storage: MXNet has no sparse rows for these (sparse inputs fall back to dense), so only the
dense rows are declared and the registry's fallback densifies.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ..core.grad import bw, no_grad
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register, register_alias
from . import binary  # noqa: F401  (the ops aliased below)
from .scalar import scalar_op
from .unary import dense1


def _logic(fn):
    """numpy logical function cast back to the input dtype (MXNet's 0/1 of the data type)."""
    return lambda x, s: fn(x, s).astype(x.dtype)


scalar_op("_logical_and_scalar", _logic(np.logical_and), grad=no_grad,
          doc="1 where data and scalar are both non-zero, else 0 (data's dtype).")
scalar_op("_logical_or_scalar", _logic(np.logical_or), grad=no_grad,
          doc="1 where data or scalar is non-zero, else 0 (data's dtype).")
scalar_op("_logical_xor_scalar", _logic(np.logical_xor), grad=no_grad,
          doc="1 where exactly one of data and scalar is non-zero, else 0 (data's dtype).")


def _bhypot_scalar(a, xs):
    og, x = st.todense(xs[0]), st.todense(xs[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return ((og * x / np.hypot(x, a.scalar)).astype(og.dtype, copy=False),)


register(OpDef("_backward_hypot_scalar", inputs=("ograd", "data"),
               params=Params(scalar=Field("float", 1.0), is_int=Field("bool", True)),
               dispatch=(Dispatch((DNS, DNS), (DNS,), _bhypot_scalar),
                         Dispatch(("*", "*"), (DNS,), _bhypot_scalar)),
               doc="ograd * data / hypot(data, scalar)."))
scalar_op("_hypot_scalar", np.hypot,
          grad=lambda node, og: [bw("_backward_hypot_scalar", [og[0], node.inputs[0]], node,
                                    "backward", scalar=node.params.scalar)],
          doc="sqrt(data**2 + scalar**2), elementwise.")


def _logical_not(x):
    return np.logical_not(x).astype(x.dtype)


register(OpDef("logical_not", dispatch=(Dispatch((DNS,), (DNS,), dense1(_logical_not)),),
               gradient=no_grad,
               doc="""1 where data is zero, else 0, in data's dtype.

    Parameters
    ----------
    data : NDArray or Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.logical_not(mx.nd.array([0., 2.])).asnumpy().tolist()
    [1.0, 0.0]
    """))

# MXNet's legacy CamelCase names (kept so that old symbol JSON files load)
for _name, _alias in (
        ("_equal", "_Equal"), ("_not_equal", "_Not_Equal"), ("_greater", "_Greater"),
        ("_greater_equal", "_Greater_Equal"), ("_lesser", "_Lesser"),
        ("_lesser_equal", "_Lesser_Equal"), ("_logical_and", "_Logical_And"),
        ("_logical_or", "_Logical_Or"), ("_logical_xor", "_Logical_Xor"), ("_hypot", "_Hypot"),
        ("_plus_scalar", "_PlusScalar"), ("_minus_scalar", "_MinusScalar"),
        ("_rminus_scalar", "_RMinusScalar"), ("_mul_scalar", "_MulScalar"),
        ("_div_scalar", "_DivScalar"), ("_rdiv_scalar", "_RDivScalar"),
        ("_mod_scalar", "_ModScalar"), ("_rmod_scalar", "_RModScalar"),
        ("_power_scalar", "_PowerScalar"), ("_rpower_scalar", "_RPowerScalar"),
        ("_maximum_scalar", "_MaximumScalar"), ("_minimum_scalar", "_MinimumScalar"),
        ("_equal_scalar", "_EqualScalar"), ("_not_equal_scalar", "_NotEqualScalar"),
        ("_greater_scalar", "_GreaterScalar"), ("_greater_equal_scalar", "_GreaterEqualScalar"),
        ("_lesser_scalar", "_LesserScalar"), ("_lesser_equal_scalar", "_LesserEqualScalar"),
        ("_logical_and_scalar", "_LogicalAndScalar"), ("_logical_or_scalar", "_LogicalOrScalar"),
        ("_logical_xor_scalar", "_LogicalXorScalar"), ("_hypot_scalar", "_HypotScalar")):
    register_alias(_name, _alias)
