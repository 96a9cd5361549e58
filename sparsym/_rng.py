"""The random state shared by samplers, initializers and test utilities (``mx.random.seed``)."""
from __future__ import annotations

import numpy as np

_state = {"rng": np.random.default_rng(0)}


def seed(seed_state: int, ctx: str = "all") -> None:
    """Seed sparsym's generator (and numpy's legacy global one, as MXNet scripts expect)."""
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError(f"seed_state must be an int, got {type(seed_state).__name__}")
    # MXNet takes any int, negative ones too: as 64-bit two's complement (seeds stay distinct)
    _state["rng"] = np.random.default_rng(int(seed_state) % (1 << 64))


def rng() -> np.random.Generator:
    """The current generator."""
    return _state["rng"]
