"""Monitor: statistics of node outputs, weights and gradients while training (mx.monitor)."""
from __future__ import annotations

import logging
import re

import numpy as np

from . import ndarray  # noqa: F401  (mx.monitor exposes it, as MXNet's)
from . import storage as st
from .base import py_str  # noqa: F401
from .ndarray.ndarray import NDArray, wrap

__all__ = ["Monitor"]


def _default_stat(x):
    """norm(x) / sqrt(size(x)), MXNet's default statistic."""
    a = st.todense(x._raw) if isinstance(x, NDArray) else np.asarray(x)
    size = max(1, int(np.prod(x.shape)))
    return wrap(np.array([np.linalg.norm(a.ravel()) / np.sqrt(size)], dtype=np.float32))


class Monitor:
    """Collect a statistic of every tensor whose name matches ``pattern`` every ``interval``
    batches (MXNet's ``mx.monitor.Monitor``).

    Parameters
    ----------
    interval : int
        Batches between collections.
    stat_func : callable, optional
        ``NDArray -> NDArray`` (or a number); default ``norm(x)/sqrt(x.size)``.
    pattern : str
        Regular expression matched against names (``fc1_output``, ``fc1_weight``...).
    sort : bool
        Sort the results by name.
    monitor_all : bool
        Also monitor node inputs (where the executor reports them).

    Examples
    --------
    >>> import sparsym as mx
    >>> mon = mx.monitor.Monitor(1, pattern='.*weight')
    >>> mon.interval, mon.step
    (1, 0)
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        self.stat_func = stat_func if stat_func is not None else _default_stat
        self.interval = int(interval)
        if self.interval < 1:
            raise ValueError(f"Monitor: interval must be >= 1, got {interval}")
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            if not self.activated or not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Install the callback on an executor (several executors may share a monitor)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start collecting for the current batch (call before forward)."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Stop collecting; return ``[(step, name, value_str)]`` including the arguments and
        auxiliary states of the installed executors."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, arr in zip([n.name for n in exe.graph.arg_nodes], exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(arr)))
            for name, arr in zip([n.name for n in exe.graph.aux_nodes], exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(arr)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, values in self.queue:
            if not isinstance(values, list):
                values = [values]
            s = ""
            for v in values:
                a = v.asnumpy() if isinstance(v, NDArray) else np.asarray(v)
                s += (str(a.reshape(-1)[0]) if a.size == 1 else str(a)) + "\t"
            res.append((n, k, s))
        self.queue = []
        return res

    def toc_print(self):
        """Stop collecting and log the results (``Batch: step name value``)."""
        for n, k, v in self.toc():
            logging.getLogger("sparsym").info("Batch: %7d %-30s %s", n, k, v)
