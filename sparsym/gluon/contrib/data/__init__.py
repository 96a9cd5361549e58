"""Contributed data utilities (mx.gluon.contrib.data)."""
from ...data.sampler import IntervalSampler  # noqa: F401
from . import sampler  # noqa: F401
from . import text  # noqa: F401
