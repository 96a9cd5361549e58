"""Process-wide threading defaults, applied before Numba's thread pool starts.

Numba runs parallel kernels on its first available threading layer, TBB before OpenMP.
sparsym depends on the ``tbb`` wheel (on x86-64 Linux and Windows) so that TBB is the one
used: on 2 cores it is the only layer with which a 0.1 ms parallel region pays.

- GNU OpenMP with its default policy spins at every barrier for milliseconds: on a machine
  shared with other processes a spinning worker holds a core that a descheduled worker of
  the same region needs, so a region of microseconds stalls for milliseconds. A shorter spin
  count only narrows the gap.
- Passive OpenMP waiting is safe under load, but waking a sleeping worker costs about as
  much as a 0.1 ms kernel, so small kernels never gain from the second core.
- TBB's workers spin briefly and yield: small parallel products gain and a loaded machine
  does not stall. TBB is also fork-safe, where GNU OpenMP is not.

(The measurements behind these choices are in docs/threading.md.)

Where TBB is missing (other platforms, or a user's ``NUMBA_THREADING_LAYER``), OpenMP waits
passively unless the user has chosen a policy; libgomp reads the variable when it loads,
which is after this module runs unless another library started OpenMP earlier.
"""
import ctypes
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _preload_tbb():
    """Load the tbb wheel's libtbb.so.12 globally so Numba's TBB layer can link to it.

    The wheel puts the library in ``<prefix>/lib``, which is not on the loader's path in a
    virtual environment, and Numba's ``tbbpool`` extension carries no rpath: without this,
    Numba silently falls back to OpenMP in a plain venv. A user's explicit
    ``NUMBA_THREADING_LAYER`` (or ``SPARSYM_NO_TBB_PRELOAD=1``) wins.
    """
    if not sys.platform.startswith("linux") or os.environ.get("SPARSYM_NO_TBB_PRELOAD") == "1":
        return None
    if os.environ.get("NUMBA_THREADING_LAYER", "default").lower() not in ("default", "tbb",
                                                                        "threadsafe"):
        return None
    seen = set()
    for prefix in (sys.prefix, sys.base_prefix, getattr(sys, "exec_prefix", sys.prefix)):
        path = os.path.join(prefix, "lib", "libtbb.so.12")
        if path in seen or not os.path.exists(path):
            continue
        seen.add(path)
        try:
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:  # a broken or foreign-architecture file: OpenMP remains
            continue
    return None


_TBB = _preload_tbb()
