"""``mx.engine``: MXNet's bulk-execution settings.

sparsym runs every operation at once (there is no asynchronous engine to batch operators
for), so the bulk size is recorded and returned as MXNet does and has no other effect.

Examples
--------
>>> import sparsym as mx
>>> with mx.engine.bulk(10):
...     x = mx.nd.ones((2,)) * 2
>>> x.asnumpy().tolist()
[2.0, 2.0]
"""
from __future__ import annotations

import threading

__all__ = ["set_bulk_size", "bulk"]

_STATE = threading.local()
_DEFAULT_BULK = 0  # what MXNet 1.9.1 reports before any set_bulk_size call


def set_bulk_size(size):
    """Set the maximum number of operators bundled in a bulk; returns the previous size."""
    prev = getattr(_STATE, "size", _DEFAULT_BULK)
    _STATE.size = int(size)
    return prev


class _BulkScope:
    """``with`` scope setting the bulk size and restoring it on exit."""

    def __init__(self, size):
        self._size = size
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, ptype, value, trace):
        set_bulk_size(self._old_size)


def bulk(size):
    """A ``with`` scope with bulk size ``size`` (see the module doc)."""
    return _BulkScope(size)
