"""Executors: plan-running bound computations."""
from .executor import Executor  # noqa: F401
from .plan import clear_cache  # noqa: F401
