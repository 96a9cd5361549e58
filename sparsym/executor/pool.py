"""A pool of byte buffers that executors write intermediate results into.

Executors bound with ``shared_exec`` share their pool (MXNet's shared data pool), so the
buckets of one model cost the memory of the largest bucket. A buffer is handed out only
while nothing else references it: every view of a buffer holds a reference to it, so a
reference count at its floor proves that no live value (of any executor sharing the pool,
or a view a kernel returned) still uses the memory. Otherwise the caller gets a fresh
array: sharing never corrupts a value, it only saves memory when executors run one at a
time (forward + backward of one bucket, then the next).
"""
from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["MemoryPool"]


class MemoryPool:
    """Byte buffers handed out as typed views.

    Attributes
    ----------
    nbytes : int
        Bytes held by the pool's buffers (the pool statistic for shared executors).
    hits, misses : int
        Views handed out, and requests that found their buffer in use (served fresh).
    """

    def __init__(self):
        self._bufs: list = []
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        probe = [np.empty(8, np.uint8)]
        # the refcount of an unused buffer seen from _free(); 2 on CPython (list + argument)
        self._floor = sys.getrefcount(probe[0])

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self._bufs)

    @property
    def num_buffers(self) -> int:
        return len(self._bufs)

    def assign(self, slot_bytes) -> tuple:
        """Map a plan's slots onto pool buffers (largest slot to largest buffer), growing
        or adding buffers where needed; returns the buffer index of every slot."""
        order = sorted(range(len(slot_bytes)), key=lambda k: -slot_bytes[k])
        with self._lock:
            by_size = sorted(range(len(self._bufs)), key=lambda i: -self._bufs[i].nbytes)
            mapping = [0] * len(slot_bytes)
            for rank, k in enumerate(order):
                need = int(slot_bytes[k])
                if rank < len(by_size):
                    i = by_size[rank]
                    if self._bufs[i].nbytes < need:
                        # views of the old buffer keep it alive until they die
                        self._bufs[i] = np.empty(need, np.uint8)
                else:
                    self._bufs.append(np.empty(need, np.uint8))
                    i = len(self._bufs) - 1
                mapping[k] = i
        return tuple(mapping)

    def free(self, i) -> bool:
        """True when no view of buffer ``i`` is alive."""
        return sys.getrefcount(self._bufs[i]) <= self._floor

    def view(self, i, shape, dtype):
        """A typed view of buffer ``i`` if it is free, else a fresh array."""
        buf = self._bufs[i]
        # local ``buf`` adds one reference to the floor
        if sys.getrefcount(buf) <= self._floor + 1:
            self.hits += 1
            return np.ndarray(shape, dtype, buffer=buf)
        self.misses += 1
        return np.empty(shape, dtype)

    def owns(self, i, arr) -> bool:
        """True when ``arr`` is a view of buffer ``i`` and the only one alive."""
        buf = self._bufs[i]
        return arr.base is buf and sys.getrefcount(buf) <= self._floor + 2

    def stats(self) -> dict:
        return {"buffers": len(self._bufs), "nbytes": self.nbytes, "hits": self.hits,
                "misses": self.misses}

    def __repr__(self):
        return f"MemoryPool({len(self._bufs)} buffers, {self.nbytes} bytes)"
