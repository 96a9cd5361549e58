"""``mx.model``: the checkpoint functions (from ``checkpoint``) and
MXNet's legacy model API (``FeedForward``), as ``mx.model``."""
from __future__ import annotations

import importlib.util

from . import io, metric  # noqa: F401  (mx.model exposes the modules it uses, as MXNet's)
from . import kvstore as kvs  # noqa: F401
from . import ndarray as nd  # noqa: F401
from . import optimizer as opt  # noqa: F401
from . import symbol as sym  # noqa: F401
from .callback import BatchEndParam, LogValidationMetricsCallback  # noqa: F401
from .checkpoint import load_checkpoint, load_params, save_checkpoint  # noqa: F401
from .context import Context, cpu  # noqa: F401
from .feedforward import DataParallelExecutorManager, FeedForward  # noqa: F401
from .initializer import Uniform  # noqa: F401
from .io import DataDesc  # noqa: F401
from .optimizer import get_updater  # noqa: F401

__all__ = ["save_checkpoint", "load_checkpoint", "load_params", "BatchEndParam", "FeedForward"]

# MXNet derives FeedForward from sklearn's BaseEstimator when sklearn is installed; here it
# never does (sparsym.sklearn has the scikit-learn estimators), so importing mx.model does
# not import scikit-learn
SKLEARN_INSTALLED = importlib.util.find_spec("sklearn") is not None
BASE_ESTIMATOR = object
