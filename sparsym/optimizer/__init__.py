"""Optimizers with MXNet 1.9's formulas and lazy row_sparse updates."""
from .adaptive import FTML, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp  # noqa: F401
from .momentum import DCASGD, LBSGD, NAG, SGLD, Signum  # noqa: F401
from .optimizer import SGD, Optimizer, Test, Updater, ccSGD, create, get_updater, register  # noqa: F401
