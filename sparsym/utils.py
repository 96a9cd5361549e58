"""Small shared helpers."""
from __future__ import annotations

import os
import tempfile


def atomic_write(fname, data: bytes):
    """Write ``data`` to a temp file beside ``fname`` and rename it into place, so an
    interrupted save leaves the previous file intact."""
    fname = os.fspath(fname)
    d = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
