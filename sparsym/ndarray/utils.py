"""nd.save / nd.load in MXNet's binary NDArray-list format (never unpickles)."""
from __future__ import annotations

from .ndarray import NDArray, array, empty, wrap, zeros  # noqa: F401  (MXNet's utils names)


def save(fname, data):
    """Save a list or dict (str -> NDArray) of arrays of any storage type.

    Files are MXNet 1.x compatible and written atomically (temp file + rename).
    """
    from .serialization import save_raw
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        for k, v in data.items():
            if not isinstance(k, str) or not isinstance(v, NDArray):
                raise TypeError("save only accepts dict str->NDArray or list of NDArray")
        raw = {k: v._raw for k, v in data.items()}
    elif isinstance(data, (list, tuple)):
        if not all(isinstance(v, NDArray) for v in data):
            raise TypeError("save only accepts dict str->NDArray or list of NDArray")
        raw = [v._raw for v in data]
    else:
        raise TypeError("save only accepts dict str->NDArray or list of NDArray")
    from ..util import is_np_shape
    # MXNet writes every dense array as version 3 under numpy shape semantics; outside them
    # sparsym writes version 3 only for a list holding 0-d arrays (MXNet has none there)
    save_raw(fname, raw, np_shape=True if is_np_shape() else None)


def load(fname):
    """Load arrays saved by :func:`save` or by MXNet 1.x; returns a list or a dict."""
    from ..util import is_np_shape
    from .serialization import load_raw
    return _wrap_loaded(load_raw(fname, np_shape=is_np_shape()))


def load_frombuffer(buf):
    """Load arrays from the bytes of a file written by :func:`save` (MXNet's
    ``nd.load_frombuffer``); returns a list or a dict."""
    from .serialization import load_raw
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_frombuffer expects bytes, got {type(buf).__name__}")
    from ..util import is_np_shape
    return _wrap_loaded(load_raw(buf, np_shape=is_np_shape()))


def _wrap_loaded(raw):
    if isinstance(raw, dict):
        return {k: wrap(v) for k, v in raw.items()}
    return [wrap(v) for v in raw]
