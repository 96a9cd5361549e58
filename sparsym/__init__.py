"""sparsym: declarative deep learning with first-class sparse storage.

``import sparsym as mx`` offers MXNet 1.x's symbolic API (symbols, executors, Module,
optimizers, KVStore, IO) on NumPy, SciPy and Numba.
"""
from . import _threading_env  # noqa: F401  (before anything loads OpenMP)
from . import _malloc  # noqa: F401  (freed batch-sized arrays stay with the process)
from . import _compile_notice  # noqa: F401  (says so when first-use compilation is long)
from . import base  # noqa: F401
from .base import MXNetError  # noqa: F401
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from . import util  # noqa: F401
from .util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape,  # noqa: F401
                   use_np, use_np_array, use_np_shape)
from . import engine  # noqa: F401
from . import ndarray  # noqa: F401
from . import ndarray as nd  # noqa: F401
from . import symbol  # noqa: F401
from . import symbol as sym  # noqa: F401
from . import autograd  # noqa: F401
from .cached_op import CachedOp as _CachedOp
ndarray.CachedOp = _CachedOp  # MXNet's mx.nd.CachedOp (runs the executor: defined above nd)
from . import rnn  # noqa: F401,E402  (mx.rnn: cells, BucketSentenceIter)
from . import name  # noqa: F401
from . import attribute  # noqa: F401
from .attribute import AttrScope  # noqa: F401
from . import contrib  # noqa: F401,E402  (mx.contrib, SBNet helpers)
from . import executor  # noqa: F401
from . import random  # noqa: F401
from . import random as rnd  # noqa: F401
from . import c_api as _c_api  # noqa: F401,E402  (the C API calls mx.base._LIB answers)
from . import initializer  # noqa: F401
from . import initializer as init  # noqa: F401
from . import optimizer  # noqa: F401
from . import optimizer as opt  # noqa: F401
from . import lr_scheduler  # noqa: F401
from . import metric  # noqa: F401
from . import io  # noqa: F401
from . import recordio  # noqa: F401
from . import image  # noqa: F401  (mx.image)
from . import image as img  # noqa: F401  (MXNet's alias)
from . import kvstore  # noqa: F401
from . import kvstore as kv  # noqa: F401
from . import module  # noqa: F401
from . import module as mod  # noqa: F401
from . import gluon  # noqa: F401
from . import callback  # noqa: F401
from . import operator  # noqa: F401
from . import profiler  # noqa: F401
from . import model  # noqa: F401
from . import monitor  # noqa: F401
from . import monitor as mon  # noqa: F401
from . import viz  # noqa: F401
from . import visualization  # noqa: F401
from . import runtime  # noqa: F401
from . import error  # noqa: F401
from . import log  # noqa: F401
from . import registry  # noqa: F401
from . import plotting  # noqa: F401  (mx.callback.TrainingCurve)
from . import onnx  # noqa: F401  (mx.onnx.export_model; the onnx package loads on use)

from . import numpy  # noqa: F401,E402  (mx.numpy: importable, not implemented)


def __getattr__(attr):
    """``mx.test_utils`` is imported on first use: it loads scipy.stats (about 1 s, a third
    of the package's import time), which only tests need."""
    if attr == "test_utils":
        import importlib
        return importlib.import_module(".test_utils", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
__version__ = "0.1.0"
__mxnet_version__ = "1.9.1"   # the MXNet API level (`mxnet.__version__` under the alias)


def _freeze_import_objects():
    """Move the objects the import left (about 120k: generated front ends, Numba's typing
    tables) to the collector's permanent generation: every full collection and the
    interpreter's exit would otherwise walk them again (exit took 0.3-1 s, 10x more than
    with them frozen). ``SPARSYM_GC_FREEZE=0`` leaves the collector alone."""
    import gc
    import os
    if os.environ.get("SPARSYM_GC_FREEZE", "1") != "0":
        gc.freeze()


_freeze_import_objects()
