"""Shared fixtures: a fresh fallback log and a fixed seed for every test."""
import numpy as np
import pytest

import sparsym as mx


@pytest.fixture(autouse=True)
def _fresh_state():
    mx.ops.registry.reset_fallback_log()
    mx.random.seed(0)
    np.random.seed(0)
    yield
