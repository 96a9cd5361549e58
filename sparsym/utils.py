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
        # mkstemp creates 0600 files; give the file the mode a plain open() would
        umask = os.umask(0)
        os.umask(umask)
        mode = os.stat(fname).st_mode & 0o777 if os.path.exists(fname) else 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
