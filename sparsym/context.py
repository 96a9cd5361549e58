"""Devices: `cpu(i)` are distinct logical devices; `gpu(i)` can be created (as in MXNet) and
raises a clear error where it is used: at allocation or bind."""
from __future__ import annotations

import re
import threading

from .base import MXNetError, classproperty

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "gpu_memory_info", "require_usable"]


class _ContextMeta(type):
    """``Context.default_ctx``: the thread's default context, readable and assignable on
    the class (MXNet 1.x's deprecated class property)."""

    @property
    def default_ctx(cls):
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx):
        cls._default_ctx.value = ctx


class Context(metaclass=_ContextMeta):
    """A device context, ``Context('cpu', 0)``.

    Parameters
    ----------
    device_type : str
        'cpu' (or 'cpu_pinned', treated as cpu).
    device_id : int
        Logical device id; data-parallel groups split batches across cpu(0), cpu(1)...

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.cpu(1)
    cpu(1)
    """

    _default_ctx = threading.local()  # MXNet's name: test code sets ``_default_ctx.value``
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in self.devstr2type:
            raise MXNetError(f"unknown device type {device_type!r}; expected one of "
                             f"{sorted(self.devstr2type)}")
        self.device_type = device_type
        self.device_id = int(device_id)
        self._old = None

    @classproperty
    def default_ctx(cls):
        """The default context (MXNet's deprecated spelling of :func:`current_context`)."""
        return current_context()

    @property
    def device_typeid(self):
        return self.devstr2type[self.device_type]

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        self._old = getattr(Context._default_ctx, "value", None)
        Context._default_ctx.value = self
        return self

    def __exit__(self, *exc):
        Context._default_ctx.value = self._old

    def empty_cache(self):
        """Nothing to release: arrays are plain NumPy memory."""


def cpu(device_id=0):
    """Return cpu context ``device_id``."""
    return Context("cpu", device_id)


def gpu(device_id=0):
    """Return gpu context ``device_id``.

    As in MXNet without CUDA, creating it works and using it raises: sparsym has no GPU
    backend, so allocating an array or binding an executor on it raises MXNetError.
    """
    return Context("gpu", device_id)


def cpu_pinned(device_id=0):
    """Return a cpu_pinned context (page-locked host memory in MXNet; plain cpu memory here)."""
    return Context("cpu_pinned", device_id)


def gpu_memory_info(device_id=0):
    """(free, total) bytes of a GPU: raises, as sparsym has no GPU backend."""
    raise MXNetError(f"gpu_memory_info(gpu({device_id})): sparsym has no GPU backend "
                     "(MXNet: only supported for MXNet built with CUDA support)")


def _from_string(text):
    """The Context a "dev(id)" string names (MXNet's ``Context::FromString``)."""
    if not isinstance(text, str):
        raise TypeError(f"ctx must be a Context or a string such as 'cpu(0)', got "
                        f"{type(text).__name__}")
    m = re.fullmatch(r"\s*(cpu|gpu|cpu_pinned|cpu_shared)\((\d+)\)\s*", text)
    if m is None:
        raise MXNetError(f"Invalid context string {text}")
    return Context(m.group(1), int(m.group(2)))


def require_usable(ctx, what="allocate an array"):
    """``ctx`` itself when sparsym can compute on it; a gpu context raises MXNetError.

    A string in MXNet's "cpu(0)" form names a context, as MXNet's C API parses it."""
    if not isinstance(ctx, Context):
        ctx = _from_string(ctx)
    if ctx.device_type == "gpu":
        raise MXNetError(f"cannot {what} on {ctx}: sparsym has no GPU backend (MXNet built "
                         "without CUDA raises here too); use mx.cpu(i)")
    return ctx


def num_gpus():
    """Number of GPUs usable by sparsym (always 0)."""
    return 0


def current_context():
    """The context set by ``with mx.cpu(i):``, else cpu(0)."""
    # the thread's own dict: getattr(local, "value", None) raises and catches an
    # AttributeError inside whenever no ``with`` block is open (4 us against 0.5 us, and
    # every array made without a context asks)
    ctx = Context._default_ctx.__dict__.get("value")
    return ctx if ctx is not None else _CPU0


# the default context, shared as MXNet shares its default (every array made outside a
# ``with`` block points at it; building one per array cost a call per batch array)
_CPU0 = Context("cpu", 0)
