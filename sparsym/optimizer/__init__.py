"""Optimizers with MXNet 1.9's formulas and lazy row_sparse updates."""
from .optimizer import (SGD, Optimizer, Test, Updater, create, get_updater,  # noqa: F401
                        register)
