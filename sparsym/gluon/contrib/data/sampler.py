"""Contributed samplers (MXNet keeps IntervalSampler here)."""
from ...data.sampler import IntervalSampler  # noqa: F401
