"""How busy the machine was while a benchmark ran, apart from the benchmark itself.

The 1-minute load average counts the benchmark's own threads: a run that keeps both cores
of a 2-core machine busy pushes it towards 2 on an otherwise idle machine, so it cannot
tell a quiet machine from a busy one.  ``Watch`` records the load average before and after
a run and, from ``/proc/stat``, how many cores *other* processes kept busy meanwhile: the
machine's busy CPU time minus the CPU time of this process and of the children it waited
for (the fresh benchmark processes).  A figure is a quiet-machine figure when that share
stays under ``QUIET_OTHER_CORES``.
"""
import os
import time

QUIET_OTHER_CORES = 0.3
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _busy_seconds():
    """CPU seconds the whole machine spent busy since boot (None where /proc is absent)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal: steal is time another tenant of the
    # host took from this machine, as good as another process for the benchmark's purpose
    vals = [int(v) for v in fields[:8]]
    return (sum(vals) - vals[3] - vals[4]) / _TICK


def _own_seconds():
    """CPU seconds of this process and of the children it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Watch:
    """The load around one run: start it before the run, call ``done()`` after."""

    def __init__(self):
        self.load_before = os.getloadavg()[0]
        self.wall = time.perf_counter()
        self.busy = _busy_seconds()
        self.own = _own_seconds()

    def done(self):
        """``{"load": [before, after], "other_cores": mean cores other processes used}``."""
        wall = max(time.perf_counter() - self.wall, 1e-9)
        rec = {"load": [round(self.load_before, 2), round(os.getloadavg()[0], 2)]}
        busy = _busy_seconds()
        if busy is not None and self.busy is not None:
            other = (busy - self.busy) - (_own_seconds() - self.own)
            rec["other_cores"] = round(max(other, 0.0) / wall, 2)
        return rec


def under_load(records):
    """Whether any of the runs behind a figure shared the machine with other work."""
    return any(r.get("other_cores", 0.0) > QUIET_OTHER_CORES for r in records)


def summary(records):
    """The load fields of a summary line: the highest load average and other-core share."""
    loads = [x for r in records for x in r.get("load", [])]
    others = [r["other_cores"] for r in records if "other_cores" in r]
    return {"load_max": round(max(loads), 2) if loads else None,
            "other_cores_max": round(max(others), 2) if others else None,
            "under_load": under_load(records)}
