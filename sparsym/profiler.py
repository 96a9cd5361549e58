"""Profiler (mx.profiler): per-operator timings from executors and imperative calls,
user annotations (Domain, Task, Frame, Event, Counter, Marker), a Chrome trace file
(:func:`dump`) and aggregate statistics (:func:`dumps`), with MXNet 1.9.1's API.

When the profiler is not running, executors and ``nd.*`` calls read one flag
(``RUN.symbolic`` / ``RUN.imperative``) and do nothing else.

Examples
--------
>>> import sparsym as mx
>>> mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename='prof.json')
>>> mx.profiler.set_state('run')
>>> y = mx.nd.sqrt(mx.nd.ones((3,)))
>>> mx.profiler.set_state('stop')
>>> 'sqrt' in mx.profiler.dumps()
True
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import warnings
import weakref
from collections import OrderedDict

from .base import MXNetError

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume", "scope",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker", "profiler_set_config",
           "profiler_set_state", "dump_profile", "set_kvstore_handle"]

_BOOL_KEYS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_memory",
              "profile_api", "continuous_dump", "aggregate_stats")
_DEFAULTS = {"filename": "profile.json", "profile_all": False, "profile_symbolic": True,
             "profile_imperative": True, "profile_memory": True, "profile_api": True,
             "continuous_dump": False, "dump_period": 1.0, "aggregate_stats": False,
             "profile_process": "worker"}


class _Run:
    """What to record right now (read by the executor and nd.* on every call)."""

    __slots__ = ("symbolic", "imperative", "memory")

    def __init__(self):
        self.symbolic = self.imperative = self.memory = False


RUN = _Run()
_LOCK = threading.Lock()
_CONFIG = dict(_DEFAULTS)
_STATE = {"running": False, "paused": False}
_EVENTS: list = []          # Chrome trace events since the last finished dump
_SERIAL: list = []          # JSON text of _EVENTS[:len(_SERIAL)] (each event encoded once)
_STATS: dict = {}           # domain -> name -> [count, total, min, max] (ms)
_MEMORY: dict = {}          # device -> [count, min, max, sum] of live bytes (kB)
_LIVE = {}                  # device -> live bytes of arrays made while profiling memory
_TLS = threading.local()
profiler_kvstore_handle = None


def now_us():
    """Wall-clock microseconds (the trace's time base)."""
    return time.time_ns() // 1000


def _tid():
    return threading.get_ident()


def _refresh():
    on = _STATE["running"] and not _STATE["paused"]
    every = _CONFIG["profile_all"]
    RUN.symbolic = on and (every or _CONFIG["profile_symbolic"])
    RUN.imperative = on and (every or _CONFIG["profile_imperative"])
    RUN.memory = on and (every or _CONFIG["profile_memory"])


def _recording():
    return _STATE["running"] and not _STATE["paused"]


def _parse_bool(key, value):
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise MXNetError(f"profiler.set_config: {key} must be a boolean, got {value!r}")
    return bool(value)


def set_config(**kwargs):
    """Configure the profiler (keyword arguments only).

    Parameters
    ----------
    filename : str
        Trace file written by :func:`dump` (default 'profile.json').
    profile_all : bool
        Record everything.
    profile_symbolic, profile_imperative : bool
        Record operators run by executors / by ``nd.*`` calls (default True).
    profile_memory : bool
        Track the bytes of arrays operators create (default True).
    profile_api : bool
        Accepted; sparsym has no C API to time.
    continuous_dump : bool
        Accepted: every :func:`dump` writes all events recorded so far.
    dump_period : float
        Accepted (dumps happen when :func:`dump` is called).
    aggregate_stats : bool
        Keep per-name statistics for :func:`dumps`.
    profile_process : {'worker', 'server'}
        Only the worker (this process) can be profiled here.
    """
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise MXNetError(f"profiler.set_config: unknown parameter {key!r}; known: "
                             f"{sorted(_DEFAULTS)}")
        if key in _BOOL_KEYS:
            value = _parse_bool(key, value)
        elif key == "dump_period":
            value = float(value)
        elif key == "profile_process":
            _check_process(value)
        else:
            value = str(value)
        _CONFIG[key] = value
    _refresh()


def _check_process(profile_process):
    if profile_process not in ("worker", "server"):
        raise MXNetError(f"profile_process must be 'worker' or 'server', got "
                         f"{profile_process!r}")
    if profile_process == "server":
        raise MXNetError("profiling kvstore servers (profile_process='server') is not "
                         "supported by sparsym; profile the worker")


def set_state(state="stop", profile_process="worker"):
    """Start ('run') or stop ('stop') recording."""
    _check_process(profile_process)
    if state not in ("run", "stop"):
        raise MXNetError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _STATE["running"] = state == "run"
    if state == "run":
        _STATE["paused"] = False
    _refresh()


def state():
    """'run' or 'stop'."""
    return "run" if _STATE["running"] else "stop"


def pause(profile_process="worker"):
    """Stop recording until :func:`resume` (the state stays 'run')."""
    _check_process(profile_process)
    _STATE["paused"] = True
    _refresh()


def resume(profile_process="worker"):
    """Resume recording after :func:`pause`."""
    _check_process(profile_process)
    _STATE["paused"] = False
    _refresh()


def set_kvstore_handle(handle):
    """Remember the kvstore whose servers would be profiled (servers are not profiled here)."""
    global profiler_kvstore_handle
    profiler_kvstore_handle = handle


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated form of :func:`set_config` (``profile_<mode>=True``)."""
    warnings.warn("profiler.profiler_set_config() is deprecated. Please use "
                  "profiler.set_config() instead", stacklevel=2)
    set_config(**{"profile_" + mode: True, "filename": filename})


def profiler_set_state(state="stop"):
    """Deprecated form of :func:`set_state`."""
    warnings.warn("profiler.profiler_set_state() is deprecated. Please use "
                  "profiler.set_state() instead", stacklevel=2)
    set_state(state)


def dump_profile():
    """Deprecated form of :func:`dump`."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead",
                  stacklevel=2)
    dump(True)


# ---------------------------------------------------------------------------- recording
def _stat(domain, name, ms):
    if not _CONFIG["aggregate_stats"]:
        return
    with _LOCK:
        row = _STATS.setdefault(domain, {}).get(name)
        if row is None:
            _STATS[domain][name] = [1, ms, ms, ms]
        else:
            row[0] += 1
            row[1] += ms
            row[2] = min(row[2], ms)
            row[3] = max(row[3], ms)


def _span(domain, name, t0, t1, pid, begin="B", end="E", extra=None):
    """Record a finished span [t0, t1] (microseconds) as two trace events and a statistic."""
    tid = _tid()
    b = {"name": name, "cat": domain, "ph": begin, "ts": t0, "pid": pid, "tid": tid}
    e = {"name": name, "cat": domain, "ph": end, "ts": t1, "pid": pid, "tid": tid}
    if extra:
        b.update(extra)
        e.update(extra)
    with _LOCK:
        _EVENTS.append(b)
        _EVENTS.append(e)
    _stat(domain, name, (t1 - t0) / 1000.0)


def custom_scope():
    """The custom operator whose Python code is running in this thread, or None."""
    return getattr(_TLS, "custom", None)


def record_op(op_name, t0, t1, device_id=0):
    """Record one operator run (executor step or nd.* call) from t0 to t1 (microseconds).

    Operators called from a custom operator's Python code go to the 'Custom Operator'
    domain as ``<op_type>::<op>``, as MXNet reports them.
    """
    named = getattr(_TLS, "scope", "")
    extra = {"args": {"scope": named}} if named else None
    custom = custom_scope()
    if custom is not None:
        _span("Custom Operator", f"{custom}::{op_name}", t0, t1, device_id, extra=extra)
    else:
        _span("operator", op_name, t0, t1, device_id, extra=extra)


@contextlib.contextmanager
def custom_op_scope(name):
    """Time a custom operator's Python code (``<name>::pure_python``) and attribute the
    operators it calls to it."""
    if not (RUN.symbolic or RUN.imperative):
        yield
        return
    old = custom_scope()
    _TLS.custom = name
    t0 = now_us()
    try:
        yield
    finally:
        _TLS.custom = old
        _span("Custom Operator", f"{name}::pure_python", t0, now_us(), 0)


def track_memory(raws, device_id=0):
    """Count the bytes of new operator outputs as live on ``device_id`` until freed."""
    for raw in raws:
        arr = getattr(raw, "data", raw) if not hasattr(raw, "__array_interface__") else raw
        nbytes = int(getattr(arr, "nbytes", 0))
        if nbytes == 0:
            continue
        try:
            weakref.finalize(arr, _memory_change, device_id, -nbytes)
        except TypeError:  # an object without weak references: count it as kept
            pass
        _memory_change(device_id, nbytes)


def _memory_change(device_id, delta):
    with _LOCK:
        live = _LIVE[device_id] = _LIVE.get(device_id, 0) + delta
        if not RUN.memory:
            return
        kb = live / 1000.0
        row = _MEMORY.get(device_id)
        if row is None:
            _MEMORY[device_id] = [1, kb, kb, kb]
        else:
            row[0] += 1
            row[1] = min(row[1], kb)
            row[2] = max(row[2], kb)
            row[3] += kb
        _EVENTS.append({"name": f"Memory: cpu/{device_id}", "cat": "Device Storage",
                        "ph": "C", "ts": now_us(), "pid": device_id, "tid": _tid(),
                        "args": {f"Memory: cpu/{device_id}": live}})


# ---------------------------------------------------------------------------- output
def _trace_text():
    """The trace file's JSON; events already written by an earlier dump are not re-encoded
    (continuous dumps of long runs stay linear)."""
    with _LOCK:
        events = _EVENTS[len(_SERIAL):]
        _SERIAL.extend(json.dumps(e) for e in events)
        body = list(_SERIAL)
        pids = {e["pid"] for e in _EVENTS if e.get("cat") in
                ("operator", "Device Storage", "Custom Operator")}
    meta = [json.dumps({"ph": "M", "args": {"name": f"cpu/{d}"}, "pid": d,
                        "name": "process_name"}) for d in sorted(pids | {0})]
    return '{"traceEvents": [\n' + ",\n".join(meta + body) + '\n], "displayTimeUnit": "ms"}\n'


def dump(finished=True, profile_process="worker"):
    """Write the events recorded so far to the configured file as Chrome trace JSON
    (chrome://tracing, Perfetto); ``finished`` also clears them."""
    _check_process(profile_process)
    path = _CONFIG["filename"]
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(_trace_text())
    os.replace(tmp, path)
    if finished:
        with _LOCK:
            _EVENTS.clear()
            _SERIAL.clear()


_SORT_KEY = {"total": 1, "avg": None, "min": 2, "max": 3, "count": 0}


def _time_rows(items, sort_by, ascending):
    def key(kv):
        c, total, lo, hi = kv[1]
        return total / c if sort_by == "avg" else kv[1][_SORT_KEY[sort_by]]
    return sorted(items, key=key, reverse=not ascending)


def _memory_rows(items, sort_by, ascending):
    idx = {"count": 0, "min": 1, "max": 2, "avg": None, "total": 3}[sort_by]

    def key(kv):
        c, lo, hi, s = kv[1]
        return s / c if idx is None else kv[1][idx]
    return sorted(items, key=key, reverse=not ascending)


def _g4(v):
    """MXNet's JSON stat values: four significant digits."""
    r = float(f"{v:.4g}")
    return int(r) if r == int(r) and abs(r) < 1e15 else r


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """Aggregate statistics (needs ``aggregate_stats=True``) as MXNet's table or JSON.

    Parameters
    ----------
    reset : bool
        Clear the statistics after reading them.
    format : {'table', 'json'}
    sort_by : {'total', 'avg', 'min', 'max', 'count'}
    ascending : bool
    """
    assert format in ("table", "json"), \
        f"Invalid value provided for format: {format}. Support: 'table', 'json'"
    assert sort_by in _SORT_KEY, \
        f"Invalid value provided for sort_by: {sort_by}. Support: 'total', 'avg', 'min', " \
        "'max', 'count'"
    assert ascending in (False, True), \
        f"Invalid value provided for ascending: {ascending}. Support: False, True"
    assert reset in (False, True), \
        f"Invalid value provided for reset: {reset}. Support: False, True"
    with _LOCK:
        stats = {d: dict(v) for d, v in _STATS.items()}
        memory = dict(_MEMORY)
        if reset:
            _STATS.clear()
            _MEMORY.clear()
    mem_items = [(f"Memory: cpu/{d}", row) for d, row in sorted(memory.items())]
    if format == "json":
        return _json_stats(stats, mem_items, sort_by, ascending)
    return _table_stats(stats, mem_items, sort_by, ascending)


def _json_stats(stats, mem_items, sort_by, ascending):
    out = OrderedDict(Time=OrderedDict(), Memory=OrderedDict(), Unit=OrderedDict(
        Time="ms", Memory="kB"))
    for domain in sorted(stats):
        rows = OrderedDict()
        for name, (c, total, lo, hi) in _time_rows(stats[domain].items(), sort_by, ascending):
            rows[name] = OrderedDict(Count=c, Total=_g4(total), Min=_g4(lo), Max=_g4(hi),
                                     Avg=_g4(total / c))
        out["Time"][domain] = rows
    if mem_items:
        rows = OrderedDict()
        for name, (c, lo, hi, s) in _memory_rows(mem_items, sort_by, ascending):
            rows[name] = OrderedDict(Count=c, Min=_g4(lo), Max=_g4(hi), Avg=_g4(s / c))
        out["Memory"]["Device Storage"] = rows
    return json.dumps(out, indent=4)


def _table_stats(stats, mem_items, sort_by, ascending):
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    if mem_items:
        lines += ["Device Storage", "=================",
                  f"{'Name':<30}{'Total Count':>11}    {'Min Use  (kB)':>13}    "
                  f"{'Max Use  (kB)':>13}    {'Avg Use  (kB)':>13}",
                  f"{'----':<30}{'-----------':>11}    {'-------------':>13}    "
                  f"{'-------------':>13}    {'-------------':>13}"]
        for name, (c, lo, hi, s) in _memory_rows(mem_items, sort_by, ascending):
            lines.append(f"{name:<30}{c:>11}    {lo:>13.4f}    {hi:>13.4f}    {s / c:>13.4f}")
        lines.append("")
    for domain in sorted(stats):
        lines += [domain, "=================",
                  f"{'Name':<30}{'Total Count':>11}    {'Time (ms)':>13}    "
                  f"{'Min Time (ms)':>13}    {'Max Time (ms)':>13}    {'Avg Time (ms)':>13}",
                  f"{'----':<30}{'-----------':>11}    {'---------':>13}    "
                  f"{'-------------':>13}    {'-------------':>13}    {'-------------':>13}"]
        for name, (c, total, lo, hi) in _time_rows(stats[domain].items(), sort_by, ascending):
            lines.append(f"{name:<30}{c:>11}    {total:>13.4f}    {lo:>13.4f}    "
                         f"{hi:>13.4f}    {total / c:>13.4f}")
        lines.append("")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def scope(name="<unk>:", append_mode=True):
    """Tag the operators recorded inside the block with ``args: {"scope": name}`` in the
    trace (MXNet 2's profiler scope; ``append_mode`` appends to an enclosing scope)."""
    old = getattr(_TLS, "scope", "")
    _TLS.scope = (old + name) if append_mode and old else name
    try:
        yield
    finally:
        _TLS.scope = old


# ---------------------------------------------------------------------------- annotations
class Domain:
    """A named group of tasks, frames, counters and markers.

    Parameters
    ----------
    name : str
    """

    def __init__(self, name):
        self.name = str(name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A :class:`Task` in this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A :class:`Frame` in this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A :class:`Counter` in this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A :class:`Marker` in this domain."""
        return Marker(self, name)


class _Span:
    """A user-annotated interval: start() ... stop()."""

    _begin, _end = "B", "E"

    def __init__(self, category, name):
        self.name = str(name)
        self._category = category
        self._t0 = None

    def _extra(self):
        return None

    def start(self):
        """Begin the interval."""
        self._t0 = now_us()

    def stop(self):
        """End the interval and record it (when the profiler is running)."""
        if self._t0 is None:
            raise MXNetError(f"{type(self).__name__} {self.name!r}: stop() before start()")
        t0, self._t0 = self._t0, None
        if _recording():
            _span(self._category, self.name, t0, now_us(), os.getpid(), self._begin,
                  self._end, self._extra())

    def __str__(self):
        return self.name


class Task(_Span):
    """A logical unit of work in a domain (an async slice in the trace).

    Parameters
    ----------
    domain : Domain
    name : str
    """

    _begin, _end = "b", "e"

    def __init__(self, domain, name):
        super().__init__(domain.name, name)
        self.domain = domain

    def _extra(self):
        return {"id": id(self)}


class Frame(_Span):
    """A repeated region (an iteration, say) in a domain."""

    _begin, _end = "(", ")"

    def __init__(self, domain, name):
        super().__init__(f"{domain.name},frame", name)
        self.domain = domain


class Event(_Span):
    """A named interval outside any domain (category 'event')."""

    def __init__(self, name):
        super().__init__("event", name)


class Counter:
    """A named value in a domain whose changes are recorded as counter events.

    Parameters
    ----------
    domain : Domain
    name : str
    value : int, optional
        Initial value.
    """

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = str(name)
        self._value = 0
        if value is not None:
            self.set_value(value)

    def _emit(self):
        if _recording():
            with _LOCK:
                _EVENTS.append({"name": self.name, "cat": self.domain.name, "ph": "C",
                                "ts": now_us(), "pid": os.getpid(), "tid": _tid(),
                                "args": {self.name: self._value}})

    def set_value(self, value):
        """Set the counter."""
        self._value = int(value)
        self._emit()

    def increment(self, delta=1):
        """Add ``delta``."""
        self._value += int(delta)
        self._emit()

    def decrement(self, delta=1):
        """Subtract ``delta``."""
        self._value -= int(delta)
        self._emit()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker:
    """An instant event in a domain.

    Parameters
    ----------
    domain : Domain
    name : str
    """

    _SCOPES = {"process": "p", "global": "g", "thread": "t", "task": "t", "marker": "t"}

    def __init__(self, domain, name):
        self.domain = domain
        self.name = str(name)

    def mark(self, scope="process"):
        """Record the instant; ``scope`` is 'process', 'global', 'thread', 'task' or
        'marker'."""
        if scope not in self._SCOPES:
            raise MXNetError(f"Marker.mark: unknown scope {scope!r}; expected one of "
                             f"{sorted(self._SCOPES)}")
        if _recording():
            with _LOCK:
                _EVENTS.append({"name": self.name, "cat": f"{self.domain.name},instant_marker",
                                "ph": "i", "ts": now_us(), "s": self._SCOPES[scope],
                                "pid": os.getpid(), "tid": _tid()})
