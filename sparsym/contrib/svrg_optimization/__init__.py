"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient (SVRG) training
for Module (Johnson and Zhang, 2013)."""
from . import svrg_module, svrg_optimizer  # noqa: F401
