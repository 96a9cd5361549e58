"""Devices: `cpu(i)` are distinct logical devices; `gpu(i)` is refused clearly."""
from __future__ import annotations

import threading

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "current_context", "num_gpus"]


class Context:
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

    _default = threading.local()
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in self.devstr2type:
            raise MXNetError(f"unknown device type {device_type!r}; expected one of "
                             f"{sorted(self.devstr2type)}")
        if device_type == "gpu":
            raise MXNetError("gpu contexts are not available: sparsym has no GPU backend yet; "
                             "use mx.cpu(i)")
        self.device_type = device_type
        self.device_id = int(device_id)
        self._old = None

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
        self._old = getattr(Context._default, "value", None)
        Context._default.value = self
        return self

    def __exit__(self, *exc):
        Context._default.value = self._old

    def empty_cache(self):
        """Nothing to release: arrays are plain NumPy memory."""


def cpu(device_id=0):
    """Return cpu context ``device_id``."""
    return Context("cpu", device_id)


def gpu(device_id=0):
    """Raise: sparsym has no GPU backend (MXNet scripts that probe for GPUs get a clear error)."""
    return Context("gpu", device_id)


def num_gpus():
    """Number of GPUs usable by sparsym (always 0)."""
    return 0


def current_context():
    """The context set by ``with mx.cpu(i):``, else cpu(0)."""
    ctx = getattr(Context._default, "value", None)
    return ctx if ctx is not None else Context("cpu", 0)
