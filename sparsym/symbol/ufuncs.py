"""MXNet's Python-level ``mx.sym`` functions over operators: histogram, split_v2, eye and
linspace (maximum, minimum, hypot and power live in arith.py)."""
from __future__ import annotations

import numbers

from ..ops.shape.layout import split_v2_params
from .op import call
from .symbol import Symbol

__all__ = ["histogram", "split_v2", "eye", "linspace"]


def histogram(a, bins=10, range=None):  # noqa: A002  (MXNet's parameter name)
    """Histogram of the flattened ``a``: a Symbol with (int64 counts, bin edges).

    Parameters
    ----------
    a : Symbol
    bins : int or Symbol
        equal bins over ``range`` (then required), or the bin edges.
    range : (float, float), optional
    """
    if isinstance(bins, Symbol):
        return call("_histogram", [a, bins], {}, hint="histogram")
    if isinstance(bins, numbers.Integral):
        if range is None:
            raise ValueError("null range is not supported in symbol mode")
        return call("_histogram", [a], {"bin_cnt": bins, "range": tuple(range)},
                    hint="histogram")
    raise ValueError("bins argument should be either an integer or an NDArray")


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices
    (a tuple), as numpy.split; also the fluent ``Symbol.split_v2``.

    Parameters
    ----------
    ary : Symbol
    indices_or_sections : int or tuple of int
    axis : int, default 0
    squeeze_axis : bool, default False
    """
    indices, sections = split_v2_params(indices_or_sections)
    return call("_split_v2", [ary], {"indices": indices, "axis": axis,
                                     "squeeze_axis": squeeze_axis, "sections": sections},
                hint="split_v2")


Symbol.split_v2 = lambda self, *args, **kwargs: split_v2(self, *args, **kwargs)


def eye(N, M=0, k=0, dtype=None, **kwargs):  # noqa: N803  (MXNet's names)
    """A Symbol of an N x M array with ones on the k-th diagonal (M = N when 0)."""
    return call("_eye", [], dict(N=N, M=M, k=k, dtype=dtype or "float32", **kwargs), hint="eye")


def linspace(start, stop, num, endpoint=True, name=None, dtype="float32"):
    """A Symbol of ``num`` evenly spaced values over [start, stop]."""
    return call("_linspace", [], {"start": start, "stop": stop, "num": num,
                                  "endpoint": endpoint, "dtype": dtype}, name=name,
                hint="linspace")
