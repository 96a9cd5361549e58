"""Serial and parallel twins of one Numba kernel, chosen per call by the amount of work.

Starting a parallel region costs 10-70 us on 2 cores (a sleeping worker is woken), more than
a per-batch kernel over a few hundred rows takes: the matrix factorization example spent
a tenth of its training time in one always-parallel 256-id lookup. So every ``prange``
kernel that can see small inputs is compiled twice and goes parallel only from
``PAR_MIN_WORK`` units of work on (tests set it to 0 to run the parallel twin on tiny
inputs). A ``prange`` loop compiled without ``parallel=True`` is a plain loop.
"""
from __future__ import annotations

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
