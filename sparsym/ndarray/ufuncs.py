"""MXNet's module-level NDArray arithmetic: ``mx.nd.add(x, 2)``, ``mx.nd.maximum(x, y)``...

Each takes NDArrays or scalars on either side, as MXNet's ``_ufunc_helper``: two arrays use
the ``broadcast_*`` operator, an array and a scalar the ``_*_scalar`` operator (or its
reversed form), two scalars the Python operator. Also histogram, split_v2, eye and
linspace, MXNet's Python functions over _histogram, _split_v2, _eye and _linspace.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from ..ops.shape.layout import split_v2_params
from .ndarray import NDArray
from .op import invoke

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power",
           "maximum", "minimum", "hypot", "equal", "not_equal", "greater", "greater_equal",
           "lesser", "lesser_equal", "logical_and", "logical_or", "logical_xor",
           "onehot_encode", "histogram", "split_v2", "eye", "linspace"]


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


def histogram(a, bins=10, range=None):  # noqa: A002  (MXNet's parameter name)
    """Histogram of the flattened ``a``: (int64 counts, bin edges).

    Parameters
    ----------
    a : NDArray
    bins : int or NDArray
        the number of equal bins over ``range``, or the bin edges.
    range : (float, float), optional
        with an integer ``bins``; without it the result is NumPy's (float32 arrays, as
        MXNet's, which warns).

    Returns
    -------
    (NDArray, NDArray)
    """
    if isinstance(bins, NDArray):
        return tuple(invoke("_histogram", [a, bins], {}))
    if range is None:
        from .ndarray import array
        counts, edges = np.histogram(a.asnumpy(), bins)
        return array(counts), array(edges)
    return tuple(invoke("_histogram", [a], {"bin_cnt": int(bins), "range": tuple(range)}))


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices
    (a tuple), as numpy.split.

    Parameters
    ----------
    ary : NDArray
    indices_or_sections : int or tuple of int
    axis : int, default 0
    squeeze_axis : bool, default False
        drop the axis from sections of size 1.

    Returns
    -------
    NDArray or list of NDArray
    """
    indices, sections = split_v2_params(indices_or_sections)
    res = invoke("_split_v2", [ary], {"indices": indices, "axis": axis,
                                      "squeeze_axis": squeeze_axis, "sections": sections})
    return res[0] if len(res) == 1 else res


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):  # noqa: N803  (MXNet's names)
    """An N x M array with ones on the k-th diagonal (M = N when 0).

    Parameters
    ----------
    N : int
    M : int, default 0
    k : int, default 0
    ctx : Context, optional
    dtype : str, default float32
    """
    return invoke("_eye", [], {"N": N, "M": M, "k": k, "dtype": dtype or "float32",
                               **kwargs})[0]


def linspace(start, stop, num, endpoint=True, ctx=None, dtype="float32"):
    """``num`` evenly spaced values over [start, stop] ([start, stop) without endpoint).

    Parameters
    ----------
    start, stop : float
    num : int
    endpoint : bool, default True
    ctx : Context, optional
    dtype : str, default float32
    """
    return invoke("_linspace", [], {"start": start, "stop": stop, "num": num,
                                    "endpoint": endpoint, "dtype": np.dtype(dtype).name})[0]
