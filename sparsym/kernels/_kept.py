"""Values kept with an array for as long as it lives: what a forward kernel leaves for its
backward (a fused RNN's activations, a max pooling's workspace), found again through the
forward's output array that the backward receives."""
from __future__ import annotations

import threading
import weakref

__all__ = ["KeptWith"]


class KeptWith:
    """A map from arrays (by identity, weakly held) to values: an entry leaves with its
    array, so a value lives as long as the array it was kept with."""

    def __init__(self):
        self._d = {}
        self._lock = threading.Lock()

    def put(self, arr, value):
        """Keep ``value`` with ``arr`` (any object that takes weak references)."""
        key = id(arr)

        def drop(_ref, key=key):
            with self._lock:
                hit = self._d.get(key)
                if hit is not None and hit[0]() is None:
                    del self._d[key]
        with self._lock:
            self._d[key] = (weakref.ref(arr, drop), value)

    def get(self, arr):
        """The value kept with ``arr``, or None."""
        with self._lock:
            hit = self._d.get(id(arr))
        return hit[1] if hit is not None and hit[0]() is arr else None
