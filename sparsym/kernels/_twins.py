"""The serial/parallel policy of the Numba kernels: twins of one kernel chosen per call by
the amount of work (:class:`Twin`), kernels over independent segments run whole or over
cost-balanced blocks (:class:`Blockwise`), and for the hot products a gate that also
measures which mode is faster right now (:func:`run_gated`). (kernels/_parallel.py is
another matter: a thread pool for chunks of the im2col/GEMM loops, with BLAS pinned to one
thread per worker.)

Starting a parallel region costs 10-70 us on 2 cores (a sleeping worker is woken), more than
a per-batch kernel over a few hundred rows takes: the matrix factorization example spent
a tenth of its training time in one always-parallel 256-id lookup. So every ``prange``
kernel that can see small inputs is compiled twice and goes parallel only from
``PAR_MIN_WORK`` units of work on (tests set it to 0 to run the parallel twin on tiny
inputs). A ``prange`` loop compiled without ``parallel=True`` is a plain loop.

A parallel twin also costs more to compile than its serial one (2-5 s against 0.3-1 s for
the csr products: Numba's parfor passes), which a fresh machine pays on the first large
call. So a parallel twin that is neither compiled in this process nor in Numba's disk cache
is compiled only once its serial twin has run ``COMPILE_AFTER_S`` seconds of this kind of
work: a short job never compiles it, a long one pays a compile bounded by the time it has
already spent (:func:`par_allowed`). Tests set ``COMPILE_AFTER_S = 0``.

Before any of that, Numba's first dispatch in a process (any kernel, its disk cache warm or
not) sets up Numba's typing and target contexts: ~0.4 s of CPU, imports of scipy.linalg,
cffi and numpy.f2py included. A short small-batch job (the matrix factorization example
trains in 0.4 s) paid more for it than for all its steps. So the kernels of such steps have
NumPy twins, run while :func:`numba_on` is False: until something in the process has set
Numba up, or those NumPy twins have done ``NUMBA_AFTER_WORK`` work (:func:`charge_numpy`),
after which the set-up pays for itself. Tests set ``NUMBA_AFTER_WORK = 0``.
"""
from __future__ import annotations

import sys
import time
import types

import numba
import numpy as np
from numba import njit, prange

from .._compile_notice import compile_seconds

# Below this much work (multiply-adds, entries or values visited) a parallel launch costs
# more than it saves, and on a busy machine a descheduled worker stalls the whole region.
PAR_MIN_WORK = 1 << 16


# Serial seconds after which a parallel twin that is not compiled yet is worth compiling.
COMPILE_AFTER_S = 2.0

_READY = set()        # parallel dispatchers compiled here or found in the disk cache
_ON_DISK_SEEN = set()  # dispatchers whose disk cache was looked at (looked at once)
_SERIAL_S: dict = {}  # key -> serial seconds run while its parallel twin was not ready


# Work of the NumPy twins (values touched per pass, ~1 ns each, plus CALL_WORK per NumPy
# call, ~1 us) after which setting Numba up is worth it. Counted, not timed, so that where
# a run switches (and so the rounding of the sums that differ between twins) does not
# depend on the machine's load. ~0.4 s of NumPy work: by then the twins have cost about
# the set-up's 0.4 s more than the compiled kernels would have (a ski-rental bound).
NUMBA_AFTER_WORK = 400_000_000
CALL_WORK = 1000
_NP_WORK = [0]  # work done by the NumPy twins in this process
_ON = [False]   # Numba is set up here (or due to be): the compiled kernels run


def numba_on() -> bool:
    """True when the compiled kernels should run: Numba is set up in this process (its
    target context's refresh imports numba.np.arraymath), or the NumPy twins have done
    ``NUMBA_AFTER_WORK`` work."""
    if _ON[0]:
        return True
    if "numba.np.arraymath" in sys.modules or _NP_WORK[0] >= NUMBA_AFTER_WORK:
        _ON[0] = True
    return _ON[0]


def charge_numpy(values, passes=1) -> None:
    """Count a NumPy twin's ``passes`` NumPy calls over ``values`` values each toward
    ``NUMBA_AFTER_WORK``."""
    _NP_WORK[0] += passes * (int(values) + CALL_WORK)


def _cached_on_disk(disp) -> bool:
    """True when Numba's disk cache holds an entry for ``disp`` (any signature)."""
    try:
        return bool(disp._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001  (no cache or another Numba: treat as not cached)
        return False


def par_allowed(key, par) -> bool:
    """True when the parallel dispatcher ``par`` may run: compiled, cached on disk, or its
    serial twin has run ``COMPILE_AFTER_S`` seconds under ``key``."""
    if par in _READY:
        return True
    if par.overloads or (par not in _ON_DISK_SEEN and _cached_on_disk(par)):
        _READY.add(par)
        return True
    _ON_DISK_SEEN.add(par)
    if _SERIAL_S.get(key, 0.0) >= COMPILE_AFTER_S:
        _READY.add(par)
        return True
    return False


def run_serial_charged(key, serial):
    """``serial()``, its run time (not its compile time) charged to ``key``."""
    c0 = compile_seconds()
    t0 = time.perf_counter()
    res = serial()
    dt = time.perf_counter() - t0 - (compile_seconds() - c0)
    _SERIAL_S[key] = _SERIAL_S.get(key, 0.0) + max(dt, 0.0)
    return res


def want_par(work) -> bool:
    """True when parallel may pay: enough work and at least 2 Numba threads."""
    return work >= PAR_MIN_WORK and numba.get_num_threads() >= 2


def _renamed(f, code=None, globs=None):
    """A copy of function ``f``, or a function running ``code`` over ``globs``, named
    ``<name>_par`` and placed at ``f``'s source file and line: its Numba cache then lives
    next to ``f``'s under its own name, and goes stale when ``f``'s file changes."""
    name = f.__name__ + "_par"
    if code is None:
        g = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    else:
        code = code.replace(co_filename=f.__code__.co_filename, co_name=name,
                            co_firstlineno=f.__code__.co_firstlineno)
        g = types.FunctionType(code, globs, name)
    g.__qualname__ = f.__qualname__ + "_par"
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


def twins(f, **opts):
    """(serial, parallel) Numba compilations of ``f``; the parallel one is named
    ``<name>_par`` so that both live in the on-disk cache."""
    return njit(cache=True, **opts)(f), njit(cache=True, parallel=True, **opts)(_renamed(f))


class Twin:
    """A kernel compiled serial and parallel: ``k(work, *args)`` runs the one that pays."""

    __slots__ = ("ser", "par")

    def __init__(self, f, **opts):
        self.ser, self.par = twins(f, **opts)

    def __call__(self, work, *args):
        if not want_par(work):
            return self.ser(*args)
        if par_allowed(self.par, self.par):
            return self.par(*args)
        return run_serial_charged(self.par, lambda: self.ser(*args))


def twin(f):
    """Decorator: ``f`` as a :class:`Twin` (call it with the work first)."""
    return Twin(f)


# ----------------------------------------------------------------------------- blockwise
def _blocks_driver(bounds, *args):
    # compiled once per kernel with _body bound to it (Blockwise): the blocks in parallel
    for t in prange(len(bounds) - 1):
        _body(bounds[t], bounds[t + 1], *args)  # noqa: F821  (bound per kernel)


class Blockwise:
    """A kernel ``f(lo, hi, *args)`` over independent segments ``lo..hi-1`` (rows of a csr,
    stored columns): ``ser`` is ``f`` compiled, ``par(bounds, *args)`` runs it in parallel
    over the blocks ``[bounds[t], bounds[t + 1])``, generated from ``f``, so the pair is
    written once."""

    __slots__ = ("ser", "par")

    def __init__(self, f, **opts):
        self.ser = njit(cache=True, **opts)(f)
        globs = dict(_blocks_driver.__globals__, _body=self.ser)
        self.par = njit(cache=True, parallel=True, **opts)(
            _renamed(f, _blocks_driver.__code__, globs))

    def run(self, key, work, ptr, *args):
        """``f`` over every segment of ``ptr`` (a csr ``indptr``): serial in one call, or
        over :func:`segment_blocks` in parallel, as gate ``key`` decides (:func:`run_gated`)."""
        m = len(ptr) - 1
        if work < PAR_MIN_WORK:  # serial without building the gate's closures
            return self.ser(0, m, *args)
        return run_gated(key, work, lambda: self.ser(0, m, *args),
                         lambda: self.par(segment_blocks(ptr), *args), self.par)


def blockwise(f):
    """Decorator: ``f(lo, hi, *args)`` as a :class:`Blockwise` kernel."""
    return Blockwise(f)


def segment_blocks(ptr):
    """Boundaries splitting the segments of ``ptr`` into cost-balanced blocks, 4 per thread
    (a segment costs its entries plus one)."""
    return balanced_bounds(ptr, 4 * numba.get_num_threads())


@njit(cache=True)
def balanced_bounds(ptr, nb):
    """``nb + 1`` boundaries splitting the segments of ``ptr`` into ``nb`` blocks of about
    equal cost (entries plus one per segment)."""
    # In Numba: NumPy's searchsorted/unique/linspace took 20-45 us, a third of the 2-thread
    # product whose blocks it computed.
    m = len(ptr) - 1
    nb = max(1, min(m, nb))
    total = ptr[m] - ptr[0] + m
    bounds = np.empty(nb + 1, dtype=np.int64)
    bounds[0] = 0
    lo = 0
    for t in range(1, nb):
        target = ptr[0] + (total * t) // nb
        hi = m
        while lo < hi:  # first segment whose cumulative cost reaches target
            mid = (lo + hi) // 2
            if ptr[mid] + mid < target:
                lo = mid + 1
            else:
                hi = mid
        bounds[t] = lo
    bounds[nb] = m
    return bounds


# ----------------------------------------------------------------------------- measured gate
class Gate:
    """Serial or parallel for one kernel family, chosen by measured speed.

    Keeps each mode's last ``_WINDOW`` readings (seconds per unit of work) and compares
    their medians; parallel runs while it is 10% faster. A median shrugs off the odd stalled
    call and follows a lasting change within a few calls. The first call after a switch of
    mode is not a reading: it pays for waking the workers (or for the caches the other
    mode left), which one-call probes would charge to the mode. So the modes alternate in
    pairs of calls until each has ``_SETTLE`` readings; then every ``_PROBE_S`` seconds the
    other mode runs twice, so a change in machine load is noticed. On shared cores a
    parallel region whose worker is descheduled waits milliseconds: measuring catches that
    where the load average (a minute late, counting our own workers) does not.
    """

    __slots__ = ("win", "rate", "probe_at", "last", "calls", "hold")

    def __init__(self):
        self.win = ([], [])  # serial, parallel readings, oldest first
        self.rate = [None, None]  # their lower medians
        self.probe_at = 0.0
        self.last = None  # the previous call's mode
        self.calls = 0
        self.hold = 0  # calls left in the current probe

    def parallel(self, now):
        """True to run this call in parallel."""
        if min(len(self.win[0]), len(self.win[1])) < _SETTLE:
            return self.calls // 2 % 2 == 1  # settling: two calls per mode, serial first
        if self.hold:
            self.hold -= 1
            return self.last
        best = self.rate[1] < 0.9 * self.rate[0]
        if now >= self.probe_at:
            self.probe_at = now + _PROBE_S
            self.hold = 1
            return not best
        return best

    def record(self, par, secs, work):
        self.calls += 1
        if par != self.last:  # first call in this mode since the other ran: warm-up
            self.last = par
            return
        w = self.win[par]
        w.append(secs / work)
        if len(w) > _WINDOW:
            del w[0]
        self.rate[par] = sorted(w)[(len(w) - 1) // 2]


_SETTLE = 3
_WINDOW = 5
_PROBE_S = 0.5
_ADAPTIVE = True  # tests set False: parallel whenever the work is large enough
_GATES: dict = {}


def _gate(key):
    g = _GATES.get(key)
    if g is None:
        g = _GATES[key] = Gate()
    return g


def run_gated(key, work, serial, parallel, par_kernel=None):
    """Call ``parallel()`` or ``serial()`` (same result) as gate ``key`` decides; time it.

    ``par_kernel``, the parallel Numba dispatcher that ``parallel()`` calls, is compiled
    only when :func:`par_allowed` says so. Numba's thread count is read only once the gate
    picks parallel: that call costs ~1 us, a tenth of the serial path's overhead around a
    0.1 ms kernel.
    """
    if work < PAR_MIN_WORK:
        return serial()
    if par_kernel is not None and not par_allowed(key, par_kernel):
        return run_serial_charged(key, serial)
    if not _ADAPTIVE:
        return parallel() if numba.get_num_threads() >= 2 else serial()
    g = _gate(key)
    t0 = time.perf_counter()
    par = g.parallel(t0) and numba.get_num_threads() >= 2
    res = parallel() if par else serial()
    g.record(par, time.perf_counter() - t0, work)
    return res
