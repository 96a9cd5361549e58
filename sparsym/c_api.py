"""The MXNet C API calls that ``mx.base._LIB`` answers, in Python with the C conventions:
scalars in, results written through ``ctypes.byref`` arguments, 0 returned (a failure
records its text for ``MXGetLastError`` and returns -1). Registered into
``base.LIB_CALLS`` when sparsym is imported; other calls raise UnsupportedFeatureError."""
from __future__ import annotations

import ctypes

import numba

from . import base, random, util

__all__ = []


def _store(ref, value):
    """Write ``value`` through a ``ctypes.byref``/``pointer`` argument or into a ctypes
    scalar."""
    target = getattr(ref, "_obj", None)  # ctypes.byref(x) keeps x here
    if target is None:
        target = ref.contents if isinstance(ref, ctypes._Pointer) else ref
    target.value = value


def _call(fn):
    """Register ``fn`` under its name; exceptions become -1 and the last-error text."""
    def c_call(*args):
        try:
            fn(*args)
        except Exception as err:  # the C convention: an error code, the text kept
            base.set_last_error(f"{type(err).__name__}: {err}")
            return -1
        return 0
    c_call.__name__ = c_call.__qualname__ = fn.__name__
    c_call.__doc__ = fn.__doc__
    base.LIB_CALLS[fn.__name__] = c_call
    return c_call


def _int(x):
    return int(getattr(x, "value", x))


def omp_get_max_threads():
    """The threads sparsym's parallel kernels may use (Numba's thread count)."""
    return numba.get_num_threads()


base.LIB_CALLS["omp_get_max_threads"] = omp_get_max_threads


@_call
def MXGetVersion(out):  # noqa: N802  (MXNet's C names)
    """The MXNet API level sparsym implements (10901 for 1.9.1)."""
    _store(out, 10901)


@_call
def MXGetGPUCount(out):  # noqa: N802
    """0: sparsym runs on CPUs."""
    _store(out, 0)


@_call
def MXRandomSeed(seed):  # noqa: N802
    """``mx.random.seed(seed)``."""
    random.seed(_int(seed))


@_call
def MXSetNumOMPThreads(n):  # noqa: N802
    """Threads of sparsym's parallel kernels (at most the ones Numba started with)."""
    numba.set_num_threads(max(1, min(_int(n), numba.config.NUMBA_NUM_THREADS)))


@_call
def MXNotifyShutdown():  # noqa: N802
    """Nothing to shut down (no engine threads)."""


@_call
def MXIsNumpyShape(out):  # noqa: N802
    """1 when NumPy-shape semantics is on in this thread, else 0."""
    _store(out, int(util.is_np_shape()))


@_call
def MXSetIsNumpyShape(is_np_shape, prev):  # noqa: N802
    """Turn NumPy-shape semantics on (non-zero) or off; the previous state goes to prev."""
    _store(prev, int(util.set_np_shape(bool(_int(is_np_shape)))))
