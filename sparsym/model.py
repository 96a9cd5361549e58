"""Checkpoints (``prefix-symbol.json`` + ``prefix-%04d.params`` with arg:/aux: keys) and
MXNet's legacy model API (``FeedForward``), as ``mx.model``."""
from __future__ import annotations

import importlib.util
import logging

from . import io, metric  # noqa: F401  (mx.model exposes the modules it uses, as MXNet's)
from . import kvstore as kvs  # noqa: F401
from . import ndarray as nd  # noqa: F401
from . import optimizer as opt  # noqa: F401
from . import symbol as sym  # noqa: F401
from .base import FormatError
from .callback import BatchEndParam, LogValidationMetricsCallback  # noqa: F401
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


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write a checkpoint; each file goes to a temp name and is renamed into place."""
    from .ndarray.utils import save
    if symbol is not None:
        symbol.save("%s-symbol.json" % prefix)
    d = {("arg:%s" % k): v for k, v in arg_params.items()}
    d.update({("aux:%s" % k): v for k, v in aux_params.items()})
    name = "%s-%04d.params" % (prefix, epoch)
    save(name, d)
    logging.getLogger("sparsym").info('Saved checkpoint to "%s"', name)


def load_params(prefix, epoch):
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    from .ndarray.utils import load
    fname = "%s-%04d.params" % (prefix, epoch)
    loaded = load(fname)
    if not isinstance(loaded, dict):
        raise FormatError(f"{fname}: expected named arrays (arg:/aux: keys), got a list")
    arg, aux = {}, {}
    for k, v in loaded.items():
        tp, _, name = k.partition(":")
        if tp == "arg":
            arg[name] = v
        elif tp == "aux":
            aux[name] = v
        else:
            raise FormatError(f"{fname}: key {k!r} is not prefixed with arg: or aux:")
    return arg, aux


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) of a checkpoint (MXNet 1.x files load too)."""
    symbol = sym.load("%s-symbol.json" % prefix)
    arg, aux = load_params(prefix, epoch)
    return symbol, arg, aux
