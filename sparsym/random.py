"""``mx.random``: seeding and MXNet's sampler front ends (the state lives in ``_rng``)."""
from __future__ import annotations

from ._rng import _state, rng, seed  # noqa: F401  (_state: saved and restored by sklearn)


def uniform(low=0, high=1, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high) (``mx.nd.random.uniform``)."""
    from .ndarray.random import uniform as _u
    return _u(low, high, shape, dtype, ctx, out, **kwargs)


def normal(loc=0, scale=1, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale^2) (``mx.nd.random.normal``)."""
    from .ndarray.random import normal as _n
    return _n(loc, scale, shape, dtype, ctx, out, **kwargs)


def randn(*shape, **kwargs):
    """Standard-normal samples (``mx.nd.random.randn``)."""
    from .ndarray.random import randn as _r
    return _r(*shape, **kwargs)


def __getattr__(name):
    """The other samplers of ``mx.nd.random`` (MXNet's mx.random re-exports them all)."""
    from .ndarray import random as _ndr
    if name in _ndr.__all__:
        return getattr(_ndr, name)
    raise AttributeError(f"module 'sparsym.random' has no attribute {name!r}")
