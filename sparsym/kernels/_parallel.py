"""Chunk-level parallelism for im2col/GEMM loops: one BLAS thread per worker thread.

Used by the dense convolution kernels (kernels/conv.py) and the block-sparse paths
(kernels/sbnet).  Both alternate short numba loops (im2col, scatter) with small GEMMs.  With
OpenBLAS's own threads, every GEMM wakes (or spins) a worker and the loops in between run
on one core, several times slower on a shared 2-core machine (docs/threading.md).
So the fused ops pin BLAS to one thread and run independent chunks of
tiles on a small thread pool instead (numba kernels are ``nogil``, NumPy releases the GIL in
matmul and ufuncs).

BLAS threads follow the library's one policy (kernels/blas.py): one thread by default, so
the workers' GEMMs already run single-threaded.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

_lock = threading.Lock()
_tls = threading.local()
_pool = None


def workers() -> int:
    """Worker threads used for chunks: numba's thread count (SPARSYM_SBNET_THREADS caps it)."""
    n = numba.get_num_threads()
    cap = os.environ.get("SPARSYM_SBNET_THREADS")
    if cap and cap.isdigit() and int(cap) > 0:
        n = min(n, int(cap))
    return max(1, n)


# below this many multiply-adds in total, handing chunks to threads costs more than it saves
MIN_PARALLEL_WORK = 4_000_000


def run(tasks, work=None):
    """Run the zero-argument callables (in parallel when there are workers and ``work``,
    the total multiply-adds, is large enough); return their results in order."""
    global _pool
    n = workers()
    # a task that itself calls run() (e.g. a dense conv inside a block-sparse task) must not
    # wait on the pool it occupies: nested calls run serially
    if (n == 1 or len(tasks) < 2 or getattr(_tls, "in_worker", False)
            or (work is not None and work < MIN_PARALLEL_WORK)):
        return [t() for t in tasks]
    with _lock:
        if _pool is None or _pool._max_workers != n - 1:
            _pool = ThreadPoolExecutor(max_workers=n - 1, thread_name_prefix="sparsym-sbnet")
        pool = _pool
    # the caller is one of the n workers: it takes tasks too instead of sleeping on the
    # pool's (one thread hand-off fewer; its core stays busy from the start)
    results = [None] * len(tasks)
    order = iter(range(len(tasks)))
    take = threading.Lock()

    def drain():
        while True:
            with take:
                i = next(order, None)
            if i is None:
                return
            results[i] = tasks[i]()

    helpers = [pool.submit(_call_in_worker, drain) for _ in range(min(n, len(tasks)) - 1)]
    try:
        _call_in_worker(drain)
    finally:
        for f in helpers:  # a failed task on the caller still waits for the others
            f.result()
    return results


def in_worker() -> bool:
    """Whether the calling thread runs a task of :func:`run` (its own GEMMs then keep
    BLAS at one thread: the other workers hold the other cores)."""
    return getattr(_tls, "in_worker", False)


def _call_in_worker(task):
    """Run ``task`` with the thread marked as a pool worker (see run)."""
    _tls.in_worker = True
    try:
        return task()
    finally:
        _tls.in_worker = False


def copy(dst, src):
    """np.copyto(dst, src) for same-shape C-contiguous arrays, in slices on the workers
    (one core does not saturate memory bandwidth here; large copies gain ~1.5x)."""
    if not (dst.flags.c_contiguous and src.flags.c_contiguous and dst.shape == src.shape):
        np.copyto(dst, src)
        return
    d, s = dst.reshape(-1), src.reshape(-1)
    parts = split(d.size, 4 * workers(), 1 << 16)
    run([lambda a=a, b=b: np.copyto(d[a:b], s[a:b]) for a, b in parts], work=d.size)


def split(m, parts, min_size=1):
    """Contiguous ranges [(a, b)] covering range(m) in about ``parts`` pieces."""
    parts = max(1, min(parts, m // max(min_size, 1) or 1))
    bounds = [m * i // parts for i in range(parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i] < bounds[i + 1]]


def workspace(shape, dtype, slot):
    """Per-thread scratch buffer reused across calls (never returned to callers).

    Fresh memory is expensive: its first-touch page faults can cost more than the loop
    writing it (a 1 MB cumsum into new memory took 15x as long as into a reused buffer).
    Slots: 0-1 conv operands, 2-5 bottleneck stages, 6-7 masks, 8-10 dense conv
    (kernels/conv.py).
    """
    dtype = np.dtype(dtype)
    need = int(np.prod(shape)) * dtype.itemsize
    bufs = getattr(_tls, "bufs", None)
    if bufs is None:
        bufs = _tls.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < need:
        buf = np.empty(max(need, 64), dtype=np.uint8)
        bufs[slot] = buf
    off = (-buf.ctypes.data) % dtype.itemsize
    return buf[off:off + need].view(dtype).reshape(shape)
