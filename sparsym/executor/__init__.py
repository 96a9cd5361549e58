"""Executors: plan-running bound computations."""
from .executor import Executor  # noqa: F401
from .plan import clear_cache  # noqa: F401
from .plan import stats as plan_cache_stats  # noqa: F401
from .pool import MemoryPool  # noqa: F401
from . import subgraph as _subgraph  # noqa: F401  (installs the control-flow runner)
