"""``mx.runtime``: which features this build has (MXNet's ``Features``), reported truthfully.

MXNet reports its compile-time flags. sparsym reports what it actually runs on: no CUDA,
cuDNN, NCCL or TensorRT; the CPU instruction sets the host has (Numba compiles kernels for
the host CPU); NumPy's BLAS and LAPACK; int64 tensor sizes (shapes and sparse indices are
int64); the distributed kvstore when Ray is installed; the profiler when ``mx.profiler`` exists;
``MKLDNN`` (and ``ONEDNN``, MXNet 2's name, after MXNet 1.9.1's list) when the dense NN
kernels run on oneDNN (``sparsym.kernels.onednn.enabled()``: the library loads and
``SPARSYM_ONEDNN`` does not turn it off), with ``OPENMP`` for its OpenMP runtime.

Examples
--------
>>> import sparsym as mx
>>> mx.runtime.Features().is_enabled("CUDA")
False
"""
from __future__ import annotations

import collections
import importlib.util

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14",
          "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP", "ONEDNN")
# feature -> LLVM's name of the host CPU feature
_CPU = {"CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "sse3", "CPU_SSE4_1": "sse4.1",
        "CPU_SSE4_2": "sse4.2", "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2",
        "SSE": "sse", "F16C": "f16c"}


class Feature:
    """One feature: ``name`` and whether it is ``enabled``."""

    __slots__ = ("name", "enabled", "index")

    def __init__(self, name, enabled, index=0):
        self.name, self.enabled, self.index = name, bool(enabled), index

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _host_cpu():
    try:
        import llvmlite.binding as ll
        feats = ll.get_host_cpu_features()
        return {k for k in set(_CPU.values()) if feats.get(k)}
    except Exception:  # noqa: BLE001 - no llvmlite or an unknown host: report none
        return set()


def _blas():
    """NumPy's BLAS library name (lower case), '' when unknown."""
    import numpy as np
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        return (deps.get("blas", {}).get("name") or "").lower(), bool(deps.get("lapack"))
    except Exception:  # noqa: BLE001 - numpy 1.x without dict config
        return "", True


def _onednn():
    """{'MKLDNN', 'ONEDNN', 'OPENMP'} when the dense NN kernels run on oneDNN, else {}."""
    from .kernels import onednn
    try:
        if not onednn.enabled():
            return set()
    except onednn.OneDNNUnavailable:  # forced on but absent: kernels raise, report off
        return set()
    ver = onednn.version()
    omp = ver is not None and ver[3] == onednn.E.RUNTIME_OMP
    return {"MKLDNN", "ONEDNN"} | ({"OPENMP"} if omp else set())


def _detect():
    cpu = _host_cpu()
    blas, lapack = _blas()
    on = {k for k, v in _CPU.items() if v in cpu}
    on |= {"INT64_TENSOR_SIZE"}
    if "openblas" in blas:
        on.add("BLAS_OPEN")
    if "mkl" in blas:
        on.add("BLAS_MKL")
    if "accelerate" in blas:
        on.add("BLAS_APPLE")
    if "atlas" in blas:
        on.add("BLAS_ATLAS")
    if lapack:
        on.add("LAPACK")
    if importlib.util.find_spec("ray") is not None:
        on.add("DIST_KVSTORE")
    if importlib.util.find_spec("sparsym.profiler") is not None:
        on.add("PROFILER")
    on |= _onednn()
    return [Feature(n, n in on, i) for i, n in enumerate(_NAMES)]


def feature_list():
    """The list of :class:`Feature` of this build."""
    return list(Features().values())


class Features(collections.OrderedDict):
    """Name -> :class:`Feature` of this build; one shared instance (as MXNet's)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super().__init__(cls.instance, [(f.name, f) for f in _detect()])
        return cls.instance

    def __init__(self):  # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether ``feature_name`` is enabled; an unknown name raises RuntimeError."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: "
                               f"{list(self.keys())}")
        return self[feature_name].enabled
