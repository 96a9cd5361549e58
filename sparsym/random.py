"""Random state shared by initializers, samplers and test utilities (mx.random)."""
from __future__ import annotations

import numpy as np

_state = {"rng": np.random.default_rng(0)}


def seed(seed_state, ctx="all"):
    """Seed sparsym's generator (and numpy's legacy global one, as MXNet scripts expect)."""
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError(f"seed_state must be an int, got {type(seed_state).__name__}")
    # MXNet takes any int, negative ones too: as 64-bit two's complement (seeds stay distinct)
    _state["rng"] = np.random.default_rng(int(seed_state) % (1 << 64))


def rng() -> np.random.Generator:
    """The current generator."""
    return _state["rng"]


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
