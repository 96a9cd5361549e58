"""``mx.nd.contrib``: imperative front ends of the ``_contrib_*`` operators (prefix dropped).

Generated from the op registry like ``mx.nd``; e.g. ``mx.nd.contrib.reduce_mask``,
``sparse_gather``, ``sparse_scatter``, ``sparse_scatter_var``, ``SparseBlockConvolution``,
``SparseBottleneck`` (sparsym/ops/sbnet/).
"""
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
