"""Contributed extensions, as MXNet's ``mx.contrib``.

- :mod:`sparsym.contrib.sbnet`: SBNet block-sparse convolution (block parameters, fused
  sparse convolution and bottleneck block, dispatch and autotuning switches).
- ``mx.contrib.ndarray`` / ``mx.contrib.symbol`` are ``mx.nd.contrib`` / ``mx.sym.contrib``.
- :mod:`sparsym.contrib.io`: ``DataLoaderIter`` (a Gluon DataLoader as a Module DataIter).
- :mod:`sparsym.contrib.text`: token counting, vocabularies, embeddings from local files.
"""
import importlib as _importlib

from . import sbnet  # noqa: F401

_ALIASES = {"amp": "sparsym.contrib.amp", "autograd": "sparsym.contrib.autograd",
            "io": "sparsym.contrib.io", "svrg_optimization": "sparsym.contrib.svrg_optimization",
            "tensorboard": "sparsym.contrib.tensorboard", "text": "sparsym.contrib.text",
            "ndarray": "sparsym.ndarray.contrib", "nd": "sparsym.ndarray.contrib",
            "symbol": "sparsym.symbol.contrib", "sym": "sparsym.symbol.contrib",
            # importable, every name raises NotImplementedError saying so
            "onnx": "sparsym.contrib.onnx", "quantization": "sparsym.contrib.quantization"}


def __getattr__(name):
    # resolved lazily: the op modules import this package while ndarray/symbol load
    if name in _ALIASES:
        return _importlib.import_module(_ALIASES[name])
    raise AttributeError(f"module 'sparsym.contrib' has no attribute {name!r}")
