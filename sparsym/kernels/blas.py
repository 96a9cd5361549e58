"""The library's one BLAS/OpenMP thread policy: one BLAS thread by default, all of them for
large GEMMs, the user's explicit setting always.

Most of sparsym's dense work is small: FullyConnected layers of a few hundred units,
elementwise ops, per-batch products of a few MB. OpenBLAS's default (a thread per core)
buys nothing there: its second thread spins between GEMMs, and on a shared machine a
descheduled BLAS thread stalls the GEMM that waits for it (the matrix factorization example
and an LSTM ran 3-20x slower in bursts under load). So the first time a kernel asks
(:func:`ensure_policy`, :func:`gemm_threads`), BLAS is set to one thread; a GEMM of
``LARGE_GEMM`` multiply-adds or more (tens of ms on one core, where a second thread halves
the time and the switch costs microseconds) runs with the library's original thread count
when other processes leave that many cores free (:func:`idle_cores`); on busy cores it
keeps one thread too.

The user's choice wins: with ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``,
``MKL_NUM_THREADS`` or ``BLIS_NUM_THREADS`` in the environment the policy never changes the
thread count, nor does it when the count differs from the one it set (a
``threadpoolctl.threadpool_limits`` in force). ``SPARSYM_BLAS_POLICY=0`` turns it off.

The BLAS libraries are found with threadpoolctl; their thread count is then read and set
through the libraries' own entry points with ctypes (about 1 us, where a
``threadpool_limits`` round trip costs about 30 us). A GEMM decides per call by its size
alone, so small ones never touch the count.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time

__all__ = ["ensure_policy", "gemm_threads", "single_blas", "policy_state", "LARGE_GEMM"]

# From this many multiply-adds on a GEMM runs with all BLAS threads (about 15-30 ms on one
# core: FullyConnected at batch 8192 x 1024 x 1024, a conv's im2col GEMM of a large image).
LARGE_GEMM = 1 << 26

USER_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")

_lock = threading.Lock()
# api: (get, set) or False; active: the policy set one thread; full: the original count;
# big: large GEMMs running with all threads; pin: single_blas regions; saved: count to restore
_state = {"api": None, "active": False, "full": None, "big": 0, "pin": 0, "saved": None}


def _fast_api(ctl):
    """(get, set) of one threadpoolctl controller through its library's own symbols."""
    import ctypes
    names = {"openblas": ("openblas_get_num_threads", "openblas_set_num_threads"),
             "blis": ("bli_thread_get_num_threads", "bli_thread_set_num_threads")}
    pair = names.get(ctl.internal_api)
    sym = getattr(ctl, "_get_symbol", None)
    if pair and sym is not None:
        get, put = sym(pair[0]), sym(pair[1])
        if get is not None and put is not None:
            get.restype = ctypes.c_int
            return (lambda: int(get()), lambda n: put(int(n)))
    if ctl.internal_api == "mkl":
        get = getattr(ctl.dynlib, "MKL_Get_Max_Threads", None)
        put = getattr(ctl.dynlib, "MKL_Set_Num_Threads", None)
        if get is not None and put is not None:
            get.restype = ctypes.c_int
            return (lambda: int(get()), lambda n: put(ctypes.byref(ctypes.c_int(int(n)))))
    return (ctl.get_num_threads, ctl.set_num_threads)


def _find_api():
    """(get, set) over every BLAS library loaded in the process, or False."""
    try:
        from threadpoolctl import ThreadpoolController
        ctls = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
    except Exception:  # noqa: BLE001  (threadpoolctl missing or failing: no policy)
        return False
    if not ctls:
        return False
    apis = [_fast_api(c) for c in ctls]

    def put(n):
        for a in apis:
            a[1](n)
    return (apis[0][0], put)


def _user_chose() -> bool:
    return (any(os.environ.get(v) for v in USER_VARS)
            or os.environ.get("SPARSYM_BLAS_POLICY", "1") == "0")


def ensure_policy():
    """Apply the policy once per process (one BLAS thread unless the user chose a count)."""
    if _state["api"] is not None:
        return
    with _lock:
        if _state["api"] is not None:
            return
        api = _find_api()
        if api and not _user_chose():
            full = api[0]()
            if full > 1:
                api[1](1)
                _state["full"] = full
                _state["active"] = True
        _state["api"] = api


def policy_state() -> dict:
    """What the policy did: ``active`` (it set one thread), ``full`` (the count large GEMMs
    get), ``current`` (BLAS's thread count now, None without a BLAS library found)."""
    ensure_policy()
    api = _state["api"]
    return {"active": _state["active"], "full": _state["full"],
            "current": api[0]() if api else None}


class _AllThreads:
    """Context: BLAS at its original thread count for the body (one large GEMM)."""

    __slots__ = ("raised",)

    def __enter__(self):
        get, put = _state["api"]
        with _lock:
            # a count other than ours is the user's (threadpool_limits): leave it
            self.raised = _state["big"] > 0 or get() == 1
            if self.raised:
                if _state["big"] == 0:
                    put(_state["full"])
                _state["big"] += 1
        return self

    def __exit__(self, *exc):
        if self.raised:
            with _lock:
                _state["big"] -= 1
                if _state["big"] == 0:
                    _state["api"][1](1)
        return False


_NOTHING = contextlib.nullcontext()


# (when computed, free cores, the sample it came from: (monotonic s, machine busy s, own s))
_load = [-10.0, 0.0, None]
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SAMPLE_S = 0.5  # the shortest interval a free-core figure is averaged over
STALE_S = 5.0  # an older sample says little about now: start over from a snapshot


def _ncpu():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _machine():
    """(busy CPU seconds of the whole machine since boot, tasks running now), from
    /proc/stat; None where there is none."""
    try:
        with open("/proc/stat", "rb") as f:
            text = f.read(8192)
    except OSError:
        return None
    lines = text.split(b"\n")
    v = [int(t) for t in lines[0].split()[1:9]]  # user nice system idle iowait irq softirq steal
    running = next((int(ln.split()[1]) for ln in lines if ln.startswith(b"procs_running")), 1)
    return (sum(v) - v[3] - v[4]) / _HZ, running  # steal counts as busy: not ours to use


def _own_running() -> int:
    """This process's threads running now (at least the caller): the tasks of
    ``procs_running`` that are not other processes' (a pool thread finishing its block, an
    OpenMP thread winding down)."""
    n = 0
    try:
        for t in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{t}/stat", "rb") as f:
                    n += f.read().rsplit(b")", 1)[1].split()[0] == b"R"
            except OSError:  # the thread ended meanwhile
                pass
    except OSError:
        pass
    return max(1, n)


def idle_cores() -> float:
    """Cores other processes leave free: usable CPUs minus the CPU time the rest of the
    machine used over the last half second or more (from /proc/stat, this process's own
    CPU time taken out), read at most every ``SAMPLE_S``.

    The 1-minute load average is not used: it counts this process too, so a run on two
    threads raises it to two and would put that same run on one thread (ResNet-18
    inference in a benchmark that follows MXNet's two spinning threads, for one).
    The first figure, before an interval has passed, counts the tasks running at that
    moment (this process's own aside); without /proc/stat it is cores minus the load
    average."""
    now = time.monotonic()
    if now - _load[0] < SAMPLE_S:
        return _load[1]
    ncpu = _ncpu()
    m = _machine()
    if m is None:
        try:
            free = ncpu - os.getloadavg()[0]
        except OSError:
            free = float(ncpu)
        _load[0], _load[1] = now, free
        return free
    own = time.process_time()
    prev = _load[2]
    if prev is None or now - prev[0] > STALE_S:
        others = max(0, m[1] - _own_running())
    else:
        others = max(0.0, (m[0] - prev[1]) - (own - prev[2])) / (now - prev[0])
    _load[0], _load[1], _load[2] = now, ncpu - others, (now, m[0], own)
    return _load[1]


def gemm_threads(macs):
    """Context for a GEMM of ``macs`` multiply-adds: all BLAS threads when it is large, the
    policy is active and the machine has an idle core, else nothing (the default of one
    thread stands). On busy cores the extra threads stall: at load 10 on 2 cores a
    512x768x640 sgemm took 140 ms with two threads and 41 ms with one."""
    if macs < LARGE_GEMM:
        if _state["api"] is None:
            ensure_policy()
        return _NOTHING
    if _state["api"] is None:
        ensure_policy()
    return _AllThreads() if _state["active"] and idle_cores() >= _state["full"] - 0.5 \
        else _NOTHING


class _SingleBlas:
    """The single_blas() scope: a plain class (a generator-based context manager costs
    several microseconds, and the conv and RNN kernels enter one per call)."""

    __slots__ = ()

    def __enter__(self):
        if _state["api"] is None:
            ensure_policy()
        api = _state["api"]
        if not api or _state["active"]:
            return self  # the policy's default is one thread already
        with _lock:
            if _state["pin"] == 0:
                _state["saved"] = api[0]()
                if _state["saved"] != 1:
                    api[1](1)
            _state["pin"] += 1
        return self

    def __exit__(self, *exc):
        api = _state["api"]
        if not api or _state["active"]:
            return False
        with _lock:
            _state["pin"] -= 1
            saved = _state["saved"]
            if _state["pin"] == 0 and saved not in (None, 1):
                api[1](saved)
        return False


_SINGLE = _SingleBlas()


def single_blas():
    """Run the body with BLAS limited to one thread (for loops that run GEMMs on several
    worker threads of their own); restored when the last user leaves. Under the active
    policy the count is one already and nothing changes."""
    return _SINGLE
