"""``mx.util``: environment access and MXNet's NumPy-semantics switches.

NumPy-shape semantics (``np_shape``) is real here: it changes how partially known shapes are
written by ``Symbol.infer_shape_partial`` (an unknown dimension is ``-1`` instead of ``0``,
an unknown shape ``None`` instead of ``()``) and which sizes ``infer_shape`` treats as unknown.
NumPy-array semantics (``np_array``, ``use_np``, ``set_np``) switches MXNet to its ``mx.np``
arrays, which sparsym does not provide: turning it on raises NotImplementedError.
"""
from __future__ import annotations

import functools
import inspect
import os

from .base import NP_SEMANTICS

__all__ = ["getenv", "setenv", "np_shape", "is_np_shape", "set_np_shape", "use_np_shape",
           "np_array", "is_np_array", "use_np_array", "set_np", "reset_np", "use_np",
           "set_module", "get_gpu_count", "get_gpu_memory", "get_cuda_compute_capability",
           "np_ufunc_legal_option", "wrap_np_unary_func", "wrap_np_binary_func"]

_STATE = NP_SEMANTICS  # the switches live in base, where ops/ can read them


def getenv(name):
    """The value of environment variable ``name``, or None when it is not set.

    sparsym has no separate C runtime: this is the process environment MXNet's backend reads.
    """
    return os.environ.get(name)


def setenv(name, value):
    """Set (or with ``value=None`` unset) environment variable ``name``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


# ----------------------------------------------------------------------------- NumPy shape
def is_np_shape():
    """Whether NumPy-shape semantics is on in this thread (off by default)."""
    return getattr(_STATE, "np_shape", False)


def set_np_shape(active):
    """Turn NumPy-shape semantics on or off in this thread; returns the previous state.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.util.set_np_shape(True)
    False
    >>> mx.util.set_np_shape(False)
    True
    """
    if not active and is_np_array():
        raise ValueError("Deactivating NumPy shape semantics while NumPy array semantics is "
                         "still active is not allowed.")
    prev = is_np_shape()
    _STATE.np_shape = bool(active)
    return prev


class _NumpyShapeScope:
    """``with`` scope setting NumPy-shape semantics and restoring it on exit."""

    def __init__(self, is_np_shape):
        self._enter_is_np_shape = bool(is_np_shape)
        self._prev_is_np_shape = None

    def __enter__(self):
        self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)
        return self

    def __exit__(self, ptype, value, trace):
        _STATE.np_shape = self._prev_is_np_shape


def np_shape(active=True):
    """A ``with`` scope with NumPy-shape semantics on (or off): in
    ``infer_shape_partial`` an unknown dimension is -1 and an unknown shape None, and 0 is
    a real (zero) size; outside it 0 means unknown and an unknown shape is ``()``.

    Examples
    --------
    >>> import sparsym as mx
    >>> with mx.np_shape():
    ...     mx.sym.sin(mx.sym.var("x")).infer_shape_partial()[1]
    [None]
    """
    return _NumpyShapeScope(active)


def _scoped(scope_factory, what):
    def decorate(func):
        if inspect.isclass(func):
            for name, member in inspect.getmembers(
                    func, lambda f: inspect.isfunction(f) or inspect.ismethod(f)
                    or isinstance(f, property)):
                if isinstance(member, property):
                    setattr(func, name, property(decorate(member.fget) if member.fget else None,
                                                 member.fset, member.fdel, member.__doc__))
                else:
                    setattr(func, name, decorate(member))
            return func
        if not callable(func):
            raise TypeError(f"{what} can only decorate classes and callable objects, while "
                            f"received a {type(func)}")

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with scope_factory():
                return func(*args, **kwargs)
        return wrapped
    return decorate


use_np_shape = _scoped(lambda: np_shape(True), "use_np_shape")
use_np_shape.__doc__ = """Decorator: run a function (or every method of a class) under
NumPy-shape semantics."""


# ----------------------------------------------------------------------------- NumPy array
def _refuse_np_array():
    raise NotImplementedError("NumPy-array semantics (mx.np / mx.npx ndarrays) is not "
                              "supported by sparsym; use the legacy mx.nd / mx.sym API")


def is_np_array():
    """Whether NumPy-array semantics is on: always False (sparsym has no ``mx.np``)."""
    return False


class _NumpyArrayScope:
    """``with`` scope for NumPy-array semantics: only ``active=False`` is possible."""

    def __init__(self, is_np_array):
        if is_np_array:
            _refuse_np_array()

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        pass


def np_array(active=True):
    """A ``with`` scope for NumPy-array semantics; ``active=True`` raises NotImplementedError
    (sparsym has no ``mx.np`` arrays), ``active=False`` is a no-op scope."""
    return _NumpyArrayScope(active)


use_np_array = _scoped(lambda: np_array(True), "use_np_array")
use_np_array.__doc__ = """Decorator for NumPy-array semantics: the decorated function raises
NotImplementedError when called (sparsym has no ``mx.np``)."""
use_np = _scoped(lambda: np_array(True), "use_np")
use_np.__doc__ = """Decorator for NumPy shape and array semantics: the decorated function
raises NotImplementedError when called (no ``mx.np``; :func:`use_np_shape` gives the shape
part alone)."""


def set_np(shape=True, array=True):
    """Set NumPy shape and array semantics; ``array=True`` raises NotImplementedError."""
    if not shape and array:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    if array:
        _refuse_np_array()
    set_np_shape(shape)


def reset_np():
    """Turn NumPy shape (and array) semantics off."""
    set_np(shape=False, array=False)


def set_module(module):
    """Decorator overriding a function's ``__module__`` (as shown in docs)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def np_ufunc_legal_option(key, value):
    """Whether ``key=value`` is a NumPy ufunc option MXNet's np operators accept."""
    import numpy as np
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        return value in (np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32,
                         np.float64, "int8", "uint8", "int32", "int64", "float16",
                         "float32", "float64")
    if key == "subok":
        return isinstance(value, bool)
    return False


def _refusing(func):
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _refuse_np_array()
    return wrapped


def wrap_np_unary_func(func):
    """Wrap an ``mx.np`` unary function: calling it raises NotImplementedError (no mx.np)."""
    return _refusing(func)


def wrap_np_binary_func(func):
    """Wrap an ``mx.np`` binary function: calling it raises NotImplementedError (no mx.np)."""
    return _refusing(func)


# ----------------------------------------------------------------------------- GPUs
def get_gpu_count():
    """Number of GPUs sparsym can use: 0 (no GPU backend)."""
    return 0


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of a GPU: raises, as there is no GPU backend."""
    from .base import MXNetError
    raise MXNetError(f"gpu({gpu_dev_id}) is not available: sparsym has no GPU backend")


def get_cuda_compute_capability(ctx):
    """The CUDA compute capability of ``ctx``'s GPU: raises (no CUDA)."""
    raise ValueError(f"Expecting a gpu context to get cuda arch, while given {ctx}: sparsym "
                     "has no GPU backend")
