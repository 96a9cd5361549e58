"""MXNet's module-level NDArray arithmetic: ``mx.nd.add(x, 2)``, ``mx.nd.maximum(x, y)``...

Each takes NDArrays or scalars on either side, as MXNet's ``_ufunc_helper``: two arrays use
the ``broadcast_*`` operator, an array and a scalar the ``_*_scalar`` operator (or its
reversed form), two scalars the Python operator.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .ndarray import NDArray
from .op import invoke

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power",
           "maximum", "minimum", "hypot", "equal", "not_equal", "greater", "greater_equal",
           "lesser", "lesser_equal", "logical_and", "logical_or", "logical_xor",
           "onehot_encode"]


def _ufunc(lhs, rhs, array_op, py_op, scalar_op, rscalar_op, name):
    l_arr, r_arr = isinstance(lhs, NDArray), isinstance(rhs, NDArray)
    if l_arr and r_arr:
        return invoke(array_op, [lhs, rhs], {})[0]
    if l_arr or r_arr:
        arr, scalar = (lhs, rhs) if l_arr else (rhs, lhs)
        if not isinstance(scalar, (numbers.Number, np.generic)):
            raise TypeError(f"{name}: type {type(scalar).__name__} not supported")
        op = scalar_op if l_arr else rscalar_op
        if op is None:  # no scalar operator: broadcast a filled array of the same shape
            full = invoke("_full", [], {"shape": arr.shape, "value": float(scalar),
                                         "dtype": np.dtype(arr.dtype).name})[0]
            pair = [arr, full] if l_arr else [full, arr]
            return invoke(array_op, pair, {})[0]
        return invoke(op, [arr], {"scalar": float(scalar)})[0]
    return py_op(lhs, rhs)


def _make(name, array_op, py_op, scalar_op, rscalar_op, doc):
    def fn(lhs, rhs):
        return _ufunc(lhs, rhs, array_op, py_op, scalar_op, rscalar_op, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{doc} of ``lhs`` and ``rhs``, element-wise with broadcasting; either may "
                  "be a scalar (MXNet's ``mx.nd." + name + "``).\n\n"
                  "Parameters\n----------\nlhs, rhs : NDArray or scalar\n\n"
                  "Returns\n-------\nNDArray (a Python scalar for two scalars)\n")
    return fn


def _cmp(f):
    return lambda a, b: float(f(a, b))


add = _make("add", "broadcast_add", operator.add, "_plus_scalar", "_plus_scalar", "Sum")
subtract = _make("subtract", "broadcast_sub", operator.sub, "_minus_scalar", "_rminus_scalar",
                 "Difference")
multiply = _make("multiply", "broadcast_mul", operator.mul, "_mul_scalar", "_mul_scalar",
                 "Product")
divide = _make("divide", "broadcast_div", operator.truediv, "_div_scalar", "_rdiv_scalar",
               "Quotient")
true_divide = _make("true_divide", "broadcast_div", operator.truediv, "_div_scalar",
                    "_rdiv_scalar", "Quotient")
modulo = _make("modulo", "broadcast_mod", operator.mod, "_mod_scalar", "_rmod_scalar",
               "Remainder")
power = _make("power", "broadcast_power", operator.pow, "_power_scalar", "_rpower_scalar",
              "``lhs ** rhs``")
maximum = _make("maximum", "broadcast_maximum", max, "_maximum_scalar", "_maximum_scalar",
                "Maximum")
minimum = _make("minimum", "broadcast_minimum", min, "_minimum_scalar", "_minimum_scalar",
                "Minimum")
hypot = _make("hypot", "broadcast_hypot", np.hypot, None, None, "``sqrt(lhs**2 + rhs**2)``")
equal = _make("equal", "broadcast_equal", _cmp(operator.eq), "_equal_scalar", "_equal_scalar",
              "1 where equal, else 0,")
not_equal = _make("not_equal", "broadcast_not_equal", _cmp(operator.ne), "_not_equal_scalar",
                  "_not_equal_scalar", "1 where different, else 0,")
greater = _make("greater", "broadcast_greater", _cmp(operator.gt), "_greater_scalar",
                "_lesser_scalar", "1 where ``lhs > rhs``, else 0,")
greater_equal = _make("greater_equal", "broadcast_greater_equal", _cmp(operator.ge),
                      "_greater_equal_scalar", "_lesser_equal_scalar",
                      "1 where ``lhs >= rhs``, else 0,")
lesser = _make("lesser", "broadcast_lesser", _cmp(operator.lt), "_lesser_scalar",
               "_greater_scalar", "1 where ``lhs < rhs``, else 0,")
lesser_equal = _make("lesser_equal", "broadcast_lesser_equal", _cmp(operator.le),
                     "_lesser_equal_scalar", "_greater_equal_scalar",
                     "1 where ``lhs <= rhs``, else 0,")
logical_and = _make("logical_and", "broadcast_logical_and",
                    lambda a, b: float(bool(a) and bool(b)), None, None, "Logical and (1/0)")
logical_or = _make("logical_or", "broadcast_logical_or",
                   lambda a, b: float(bool(a) or bool(b)), None, None, "Logical or (1/0)")
logical_xor = _make("logical_xor", "broadcast_logical_xor",
                    lambda a, b: float(bool(a) != bool(b)), None, None, "Logical xor (1/0)")


def onehot_encode(indices, out):
    """One-hot rows of ``indices`` written into ``out`` (MXNet's deprecated form of
    :func:`one_hot`); returns ``out``."""
    depth = out.shape[1]
    res = invoke("one_hot", [indices], {"depth": depth, "dtype": np.dtype(out.dtype).name})[0]
    out[:] = res
    return out
