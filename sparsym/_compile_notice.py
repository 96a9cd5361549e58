"""One line on stderr when kernels compile on first use for more than a couple of seconds.

sparsym's kernels are Numba functions compiled on their first call and cached on disk
(next to the package, or in Numba's user cache directory when the package directory is
read-only). A first run on a fresh machine can spend tens of seconds compiling; without a
word it looks like a hang or a slow engine. Cache loads take milliseconds and stay silent.

``SPARSYM_COMPILE_NOTICE=0`` silences the line.
"""
from __future__ import annotations

import os
import sys
import threading
import time

THRESHOLD_S = 2.0

_state = {"total": 0.0, "said": False}
_tls = threading.local()
_lock = threading.Lock()


def compile_seconds() -> float:
    """Seconds spent in outermost Numba compilations (and cache loads) in this process."""
    return _state["total"]


def _say(total):
    sys.stderr.write(f"sparsym: compiling kernels for their first use ({total:.0f} s so far); "
                     "Numba caches them, so later runs start at once "
                     "(SPARSYM_COMPILE_NOTICE=0 silences this line)\n")
    sys.stderr.flush()


def _install():
    try:
        from numba.core import event
    except ImportError:   # a Numba without the event API: no notice, nothing else changes
        return

    class _Timer(event.Listener):
        """Adds up outermost compile events (a kernel's callees compile inside it)."""

        def on_start(self, ev):
            depth = getattr(_tls, "depth", 0)
            if depth == 0:
                _tls.t0 = time.perf_counter()
            _tls.depth = depth + 1

        def on_end(self, ev):
            _tls.depth = depth = getattr(_tls, "depth", 1) - 1
            if depth:
                return
            with _lock:
                _state["total"] += time.perf_counter() - _tls.t0
                due = not _state["said"] and _state["total"] > THRESHOLD_S
                if due:
                    _state["said"] = True
            if due and os.environ.get("SPARSYM_COMPILE_NOTICE", "1") != "0":
                _say(_state["total"])

    event.register("numba:compile", _Timer())


_install()
