"""``mx.nd.contrib``: imperative front ends of the ``_contrib_*`` operators (prefix dropped).

Generated from the op registry like ``mx.nd``; e.g. ``mx.nd.contrib.reduce_mask``,
``sparse_gather``, ``sparse_scatter``, ``sparse_scatter_var``, ``SparseBlockConvolution``,
``SparseBottleneck`` (sparsym/ops/sbnet/).
"""
import numpy as np

from ..ops.registry import all_ops as _all_ops
from .op import make_function as _make_function

_PREFIX = "_contrib_"
# MXNet names exposed in mx.nd.contrib although registered without the prefix
_LISTED: tuple = ()


def _populate(namespace):
    ops = _all_ops()
    for key, op in ops.items():
        if key.startswith(_PREFIX):
            namespace[key[len(_PREFIX):]] = _make_function(key, op)
    for key in _LISTED:
        if key in ops:
            namespace[key] = _make_function(key, ops[key])


_populate(globals())


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0 (MXNet's ``nd.contrib.isinf``)."""
    return data.abs() == np.inf


def isfinite(data):
    """1 where ``data`` is neither inf nor nan, else 0 (MXNet's ``nd.contrib.isfinite``)."""
    from . import logical_and
    return logical_and(data.abs() != np.inf, data == data)


def isnan(data):
    """1 where ``data`` is nan, else 0 (MXNet's ``nd.contrib.isnan``)."""
    return data != data
