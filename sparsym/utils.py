"""Small shared helpers."""
from __future__ import annotations

import glob
import os
import tempfile
import threading

_umask_lock = threading.Lock()
_live_tmps: set = set()   # temp files this process is writing now (never stale)


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # no procfs: os.umask is the only reader; the lock keeps our own threads consistent
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_stale_temps(fname) -> int:
    """Delete temp files left beside ``fname`` by saves whose process died; return the count.

    Temp names carry the writer's pid (``.<name>.<pid>.<random>.tmp``); a file whose pid is
    gone, or ours but not being written now, is an interrupted save of this target.
    """
    fname = os.fspath(fname)
    d = os.path.dirname(os.path.abspath(fname))
    base = glob.escape(os.path.basename(fname))
    removed = 0
    for path in glob.glob(os.path.join(glob.escape(d), f".{base}.*.tmp")):
        parts = os.path.basename(path).rsplit(".", 3)
        try:
            pid = int(parts[-3])
        except (ValueError, IndexError):
            continue
        if path in _live_tmps or (pid != os.getpid() and _pid_alive(pid)):
            continue
        try:
            os.unlink(path)
            removed += 1
        except OSError:
            pass
    return removed


def read_saved(fname) -> bytes:
    """The bytes of a file :func:`atomic_write` wrote, removing the temp files interrupted
    saves of it left (a missing file is a MissingFileError naming it)."""
    from .base import open_for_load
    remove_stale_temps(fname)
    with open_for_load(fname) as f:
        return f.read()


def atomic_write(fname, data=None, writer=None):
    """Write a file through a temp file beside it and ``os.replace``.

    An interrupted save leaves the previous file intact; its temp file is removed by the
    next save of the same target. Pass ``data`` (bytes) or ``writer(fileobj)``.
    """
    fname = os.fspath(fname)
    if isinstance(fname, bytes):
        fname = os.fsdecode(fname)
    d = os.path.dirname(os.path.abspath(fname))
    remove_stale_temps(fname)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(fname)}.{os.getpid()}.",
                               suffix=".tmp", dir=d)
    _live_tmps.add(tmp)
    try:
        # mkstemp creates 0600 files; give the file the mode a plain open() would
        try:
            mode = os.stat(fname).st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~current_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            if writer is not None:
                writer(f)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, fname)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        _live_tmps.discard(tmp)
