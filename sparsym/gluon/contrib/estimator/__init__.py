"""Gluon's fit API (``mx.gluon.contrib.estimator``): an :class:`Estimator` that runs the
training loop of a Gluon network, and event handlers that hook into it."""
from .batch_processor import *  # noqa: F401,F403
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403
