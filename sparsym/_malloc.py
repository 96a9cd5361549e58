"""Process-wide allocator policy: freed batch-sized arrays stay with the process.

A training step allocates and frees the same arrays every batch (a 2048-row batch of
15 embedding rows of 16 floats is 2 MB, and a step makes several). With glibc's default
policy such a block is handed back to the kernel when freed (``munmap``, or a heap trim
once the free top passes twice the adaptive mmap threshold), and the next batch's array
page-faults its memory in again, the kernel zeroing every page. On 2 cores that made two
thirds of the CPU time of a sparse-embedding training step: 8 ms against 3 ms a step
with the blocks kept.

So on glibc the package sets, once at import, the mmap threshold to 32 MB (glibc's own
ceiling for its adaptive threshold: smaller blocks come from the heap and are reused) and
the trim threshold to 128 MB (the free memory the heap may keep at its top). Larger arrays
(an embedding table of 64 MB) are still mapped and unmapped one by one. A user's own
``MALLOC_*`` variables or ``GLIBC_TUNABLES`` malloc settings win, and
``SPARSYM_MALLOC_KEEP=0`` leaves glibc's defaults alone.
"""
import ctypes
import os
import sys

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_USER_VARS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
              "MALLOC_MMAP_MAX_")


def _user_policy() -> bool:
    """Whether the user chose the allocator's thresholds (or asked us not to)."""
    if os.environ.get("SPARSYM_MALLOC_KEEP", "1") == "0":
        return True
    if any(v in os.environ for v in _USER_VARS):
        return True
    return "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "")


def keep_freed_blocks() -> bool:
    """Apply the policy above; True when glibc accepted both thresholds."""
    if not sys.platform.startswith("linux") or _user_policy():
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl has no such symbol)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


APPLIED = keep_freed_blocks()
