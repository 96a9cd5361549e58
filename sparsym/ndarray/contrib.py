"""``mx.nd.contrib``: imperative front ends of the ``_contrib_*`` operators (prefix dropped).

Generated from the op registry like ``mx.nd``; e.g. ``mx.nd.contrib.reduce_mask``,
``sparse_gather``, ``sparse_scatter``, ``sparse_scatter_var``, ``SparseBlockConvolution``,
``SparseBottleneck`` (sparsym/ops/contrib/sbnet/).
"""
import math

import numpy as np

from ..ops.core.registry import all_ops as _all_ops
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


def _log_uniform_candidates(F, true_classes, num_sampled, range_max, **uniform_kwargs):
    """``rand_zipfian``'s graph in either front end (``F`` is ``mx.nd`` or ``mx.sym``)."""
    log_range = math.log(range_max + 1)
    draw = F.random.uniform(0, log_range, shape=(num_sampled,), dtype="float64",
                            **uniform_kwargs)
    # exp(U[0, log(range_max + 1))) - 1 is log-uniform on [0, range_max]
    sampled = F.Cast(F.exp(draw) - 1, dtype="int64") % range_max

    def expected(classes):
        c = F.Cast(classes, dtype="float64")
        return F.log((c + 2.0) / (c + 1.0)) / log_range * num_sampled

    return sampled, expected(true_classes), expected(sampled)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` candidate classes from the approximately log-uniform (Zipfian)
    distribution over [0, range_max), with replacement (MXNet's ``nd.contrib.rand_zipfian``).

    Parameters
    ----------
    true_classes : NDArray
        Target classes (1-D).
    num_sampled : int
    range_max : int
    ctx : Context, optional

    Returns
    -------
    (samples, expected_count_true, expected_count_sampled)
        int64 classes, and the expected counts (float64) of the true and sampled classes:
        ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)`` times ``num_sampled``.

    Examples
    --------
    >>> import sparsym as mx
    >>> s, t, e = mx.nd.contrib.rand_zipfian(mx.nd.array([3]), 4, 5)
    >>> s.shape, s.dtype.__name__, round(float(t.asscalar()), 4)
    ((4,), 'int64', 0.4982)
    """
    from .. import ndarray as nd
    if ctx is not None:
        true_classes = true_classes.as_in_context(ctx)
    return _log_uniform_candidates(nd, true_classes, num_sampled, range_max,
                                  **({"ctx": ctx} if ctx is not None else {}))


from .control_flow import cond, foreach, while_loop  # noqa: E402,F401


def _rescale(value, like):
    """``rescale_grad`` as the one-element array the update operators take (MXNet's)."""
    from . import full
    from .ndarray import NDArray
    if isinstance(value, NDArray):
        return value.as_in_context(like.context)
    return full(shape=(1,), val=value, ctx=like.context)


def _add_update_wrappers():
    from .. import _contrib_optim
    from .. import ndarray as _nd
    globals().update(_contrib_optim.wrappers(_nd, _rescale))


_add_update_wrappers()
