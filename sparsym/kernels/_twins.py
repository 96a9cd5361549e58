"""The serial/parallel policy of the Numba kernels: twins of one kernel chosen per call by
the amount of work, and for the hot products a gate that also measures which mode is faster
right now (:func:`run_gated`). (kernels/_parallel.py is another matter: a thread pool for
chunks of the im2col/GEMM loops, with BLAS pinned to one thread per worker.)

Starting a parallel region costs 10-70 us on 2 cores (a sleeping worker is woken), more than
a per-batch kernel over a few hundred rows takes: the matrix factorization example spent
a tenth of its training time in one always-parallel 256-id lookup. So every ``prange``
kernel that can see small inputs is compiled twice and goes parallel only from
``PAR_MIN_WORK`` units of work on (tests set it to 0 to run the parallel twin on tiny
inputs). A ``prange`` loop compiled without ``parallel=True`` is a plain loop.
"""
from __future__ import annotations

import time
import types

import numba
from numba import njit

# Below this much work (multiply-adds, entries or values visited) a parallel launch costs
# more than it saves, and on a busy machine a descheduled worker stalls the whole region.
PAR_MIN_WORK = 1 << 16


def want_par(work) -> bool:
    """True when parallel may pay: enough work and at least 2 Numba threads."""
    return work >= PAR_MIN_WORK and numba.get_num_threads() >= 2


def twins(f, **opts):
    """(serial, parallel) Numba compilations of ``f``; the parallel one is named
    ``<name>_par`` so that both live in the on-disk cache."""
    ser = njit(cache=True, **opts)(f)
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + "_par", f.__defaults__,
                           f.__closure__)
    g.__qualname__ = f.__qualname__ + "_par"
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return ser, njit(cache=True, parallel=True, **opts)(g)


class Twin:
    """A kernel compiled serial and parallel: ``k(work, *args)`` runs the one that pays."""

    __slots__ = ("ser", "par")

    def __init__(self, f, **opts):
        self.ser, self.par = twins(f, **opts)

    def __call__(self, work, *args):
        return (self.par if want_par(work) else self.ser)(*args)


def twin(f):
    """Decorator: ``f`` as a :class:`Twin` (call it with the work first)."""
    return Twin(f)


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


def run_gated(key, work, serial, parallel):
    """Call ``parallel()`` or ``serial()`` (same result) as gate ``key`` decides; time it.

    Numba's thread count is read only once the gate picks parallel: that call costs ~1 us,
    a tenth of the serial path's overhead around a 0.1 ms kernel.
    """
    if work < PAR_MIN_WORK:
        return serial()
    if not _ADAPTIVE:
        return parallel() if numba.get_num_threads() >= 2 else serial()
    g = _gate(key)
    t0 = time.perf_counter()
    par = g.parallel(t0) and numba.get_num_threads() >= 2
    res = parallel() if par else serial()
    g.record(par, time.perf_counter() - t0, work)
    return res
