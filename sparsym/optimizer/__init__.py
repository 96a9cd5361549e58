"""Optimizers with MXNet 1.9's formulas and lazy row_sparse updates."""
from .adaptive import FTML, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp  # noqa: F401
from .momentum import DCASGD, LBSGD, NAG, SGLD, Signum  # noqa: F401
from .large_batch import LAMB, LARS  # noqa: F401
from .optimizer import SGD, Optimizer, Test, Updater, ccSGD, create, get_updater, register  # noqa: F401
from . import contrib  # noqa: F401
from ..ndarray import abs as NDabs  # noqa: F401,N812  (MXNet's module exposes it)
