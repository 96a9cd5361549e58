"""``mx.sym.zeros / ones / full / arange`` (and the ``mx.sym.random`` namespace)."""
from __future__ import annotations

from . import random  # noqa: F401  (mx.sym.random)
from .op import call

__all__ = ["zeros", "ones", "full", "arange", "random"]


def _shape(shape):
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def _call(op, params, kwargs):
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    params = {k: v for k, v in params.items() if v is not None}
    return call(op, [], dict(kwargs, **params), name=name, attr=attr)


def zeros(shape, dtype=None, **kwargs):
    """A symbol of zeros; 0 dims in ``shape`` (e.g. the batch) are inferred from the graph.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : str or numpy dtype, optional (float32)
    name : str, optional

    Returns
    -------
    Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> z = mx.sym.zeros(shape=(0, 4))
    >>> (z + mx.sym.var('x')).infer_shape(x=(3, 4))[1]
    [(3, 4)]
    """
    return _call("_zeros", {"shape": _shape(shape), "dtype": _dtype(dtype)}, kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol of ones; see :func:`zeros`."""
    return _call("_ones", {"shape": _shape(shape), "dtype": _dtype(dtype)}, kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol filled with ``val``; see :func:`zeros`."""
    return _call("_full", {"shape": _shape(shape), "value": float(val),
                           "dtype": _dtype(dtype)}, kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.sym.arange(0, 4, step=2).infer_shape()[1]
    [(2,)]
    """
    return _call("_arange", {"start": float(start), "stop": stop, "step": float(step),
                             "repeat": int(repeat), "infer_range": infer_range,
                             "dtype": _dtype(dtype)}, {"name": name})


def _dtype(dtype):
    if dtype is None:  # MXNet's sym.zeros & co. record dtype float32 explicitly
        return "float32"
    from ..base import dtype_of
    return dtype_of(dtype).name
