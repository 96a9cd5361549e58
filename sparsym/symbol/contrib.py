"""``mx.sym.contrib``: symbolic front ends of the ``_contrib_*`` operators (prefix dropped).

Generated from the op registry like ``mx.sym``; node names default to the public name
(``sparseblockconvolution0``), as MXNet's contrib symbols.
"""
from ..ops.core.registry import all_ops as _all_ops
from .op import make_function as _make_function

_PREFIX = "_contrib_"
# MXNet names exposed in mx.sym.contrib although registered without the prefix
_LISTED: tuple = ()


def _front_end(key, op, pub):
    try:
        return _make_function(key, op, hint=pub.lower())
    except TypeError:  # front-end generator without name hints
        return _make_function(key, op)


def _populate(namespace):
    ops = _all_ops()
    for key, op in ops.items():
        if key.startswith(_PREFIX):
            pub = key[len(_PREFIX):]
            namespace[pub] = _front_end(key, op, pub)
    for key in _LISTED:
        if key in ops:
            namespace[key] = _front_end(key, ops[key], key)


_populate(globals())


def rand_zipfian(true_classes, num_sampled, range_max):
    """Symbolic ``rand_zipfian`` (see ``mx.nd.contrib.rand_zipfian``): three outputs, the
    sampled int64 classes and the expected counts of the true and sampled classes."""
    from .. import symbol as sym
    from ..ndarray.contrib import _log_uniform_candidates
    return list(_log_uniform_candidates(sym, true_classes, num_sampled, range_max))


from .control_flow import cond, foreach, while_loop  # noqa: E402,F401


def _rescale(value, like):
    """``rescale_grad`` as a one-element symbol when given as a number (MXNet's)."""
    from .symbol import Symbol
    if isinstance(value, Symbol):
        return value
    from .. import symbol as sym
    return sym.full(shape=(1,), val=value)


def _add_update_wrappers():
    from .. import _contrib_optim
    from .. import symbol as _sym
    globals().update(_contrib_optim.wrappers(_sym, _rescale))


_add_update_wrappers()
