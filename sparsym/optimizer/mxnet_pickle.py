"""Optimizer states pickled by MXNet 1.x, read without running code from the file.

MXNet's ``Updater.get_states`` pickles ``{index: state}`` (``Module.save_optimizer_states``,
``KVStore.save_optimizer_states``) or ``(states, optimizer)`` (``Trainer.save_states``). A
state is None, an NDArray, or a tuple/list of them; an NDArray pickles as
``NDArray(None)`` built with ``{'handle': bytearray}`` (MXNet's raw array bytes), an
optimizer or learning-rate scheduler as its class built with its ``__dict__``. The reader
below admits exactly those globals, as inert stand-ins, and refuses every other one.
"""
from __future__ import annotations

import io
import numbers
import pickle

import numpy as np

from ..base import FormatError

_OPTIMIZER_MODULES = ("mxnet.optimizer.optimizer", "mxnet.optimizer.contrib", "mxnet.optimizer")
_SCHEDULER_MODULES = ("mxnet.lr_scheduler",)
_SCALAR_MODULES = ("numpy.core.multiarray", "numpy._core.multiarray")
_PLAIN = (bool, int, float, str, type(None))


def is_pickle(blob) -> bool:
    """Whether ``blob`` starts like a pickle of protocol 2 or later (what MXNet writes)."""
    return isinstance(blob, (bytes, bytearray)) and len(blob) > 2 and blob[:1] == b"\x80"


class _PickledArray:
    """An MXNet NDArray as pickled: its state, turned into an NDArray after loading."""

    def __init__(self, state=None):
        self.state = state

    def __setstate__(self, state):
        if not isinstance(state, dict) or set(state) != {"handle"} or \
                not isinstance(state["handle"], (bytes, bytearray, type(None))):
            raise FormatError("MXNet optimizer states: an NDArray's pickled state must be "
                              "{'handle': bytes}")
        self.state = state


class _PickledObject:
    """An MXNet optimizer or scheduler as pickled: its class name and attribute dict."""

    kind = name = ""

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise FormatError(f"MXNet optimizer states: {self.name}'s pickled state must be a "
                              f"dict, got {type(state).__name__}")
        self.state = state


def _ndarray(handle=None):
    """What MXNet's ``NDArray.__reduce__`` calls (``NDArray(None)``), then BUILD fills it."""
    if handle is not None:
        raise FormatError("MXNet optimizer states: NDArray(...) with an argument")
    return _PickledArray()


def _bytearray(data=b""):
    if not isinstance(data, (bytes, bytearray)):
        raise FormatError("MXNet optimizer states: bytearray() of something other than bytes")
    return bytearray(data)


def _np_scalar(dtype, data=None):
    """``numpy.core.multiarray.scalar`` for plain dtypes only (an object dtype would read
    the bytes as object pointers)."""
    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes) \
            or len(data) != dtype.itemsize:
        raise FormatError("MXNet optimizer states: a NumPy scalar that is not a plain number")
    return np.frombuffer(data, dtype)[0]


def _scheduler_names():
    from .. import lr_scheduler
    return {n for n in dir(lr_scheduler) if n.endswith("Scheduler")}


class _Reader(pickle.Unpickler):
    """Resolves only the globals of MXNet's optimizer-state layout; ``optimizer_names`` are
    the optimizer classes admitted (the caller's registry)."""

    def __init__(self, stream, optimizer_names):
        super().__init__(stream)
        self._names = {"optimizer": set(optimizer_names), "scheduler": _scheduler_names()}

    def find_class(self, module, name):
        if (module, name) == ("mxnet.ndarray.ndarray", "NDArray"):
            return _ndarray
        if (module, name) == ("builtins", "bytearray"):
            return _bytearray
        if module in _SCALAR_MODULES and name == "scalar":
            return _np_scalar
        if (module, name) == ("numpy", "dtype"):
            return np.dtype
        for kind, modules in (("optimizer", _OPTIMIZER_MODULES),
                              ("scheduler", _SCHEDULER_MODULES)):
            if module in modules and name in self._names[kind]:
                return type(name, (_PickledObject,), {"kind": kind, "name": name})
        raise FormatError(f"MXNet optimizer states: the pickle refers to {module}.{name}, "
                          f"which is not part of MXNet's optimizer-state layout (nothing from "
                          f"the file was run)")

    def persistent_load(self, pid):
        raise FormatError("MXNet optimizer states: persistent ids are not part of the layout")


def _to_sparsym(value, where):
    """Replace pickled NDArrays by sparsym NDArrays in a state (None, array, tuple/list)."""
    if value is None:
        return None
    if isinstance(value, _PickledArray):
        from ..ndarray.ndarray import wrap
        from ..ndarray.pickling import raw_of_state
        raw, ctx = raw_of_state(value.state)
        return wrap(raw, ctx)
    if isinstance(value, (tuple, list)):
        out = [_to_sparsym(v, where) for v in value]
        return tuple(out) if isinstance(value, tuple) else out
    raise FormatError(f"MXNet optimizer states: {where} holds a {type(value).__name__}, not "
                      f"an NDArray, None or a tuple of them")


def _plain(value):
    """A Python scalar of a pickled attribute (NumPy scalars unwrapped), or None."""
    if isinstance(value, np.generic):
        return value.item()
    return value if isinstance(value, _PLAIN) else None


def _pairs(d):
    if not isinstance(d, dict):
        return []
    return [[k, _plain(v)] for k, v in d.items()
            if isinstance(k, (numbers.Integral, str)) and _plain(v) is not None]


def _optimizer_header(opt):
    """The header ``states.restore_optimizer`` applies, from a pickled MXNet optimizer."""
    d = opt.state
    head = {"class": opt.name, "num_update": int(_plain(d.get("num_update")) or 0),
            "attrs": {k: _plain(v) for k, v in d.items()
                      if isinstance(k, str) and (v is None or _plain(v) is not None)},
            "lr_mult": _pairs(d.get("lr_mult", {})), "wd_mult": _pairs(d.get("wd_mult", {}))}
    counts = d.get("_all_index_update_counts")
    if not isinstance(counts, dict):
        counts = {0: d.get("_index_update_count", {})}
    head["counts"] = [[dev, _pairs(c)] for dev, c in counts.items()]
    sched = d.get("lr_scheduler")
    if isinstance(sched, _PickledObject):
        head["attrs"].pop("lr_scheduler", None)
        head["lr_scheduler"] = {k: _plain(v) for k, v in sched.state.items()
                                if isinstance(k, str) and _plain(v) is not None}
    return head


def loads_mxnet_states(blob, optimizer_names=()):
    """``(states, optimizer header or None)`` of a pickle MXNet's Updater wrote; a pickled
    optimizer must be one of the classes ``optimizer_names``.

    Raises
    ------
    FormatError
        When the pickle refers to anything outside MXNet's optimizer-state layout, or is
        not one.
    """
    try:
        obj = _Reader(io.BytesIO(bytes(blob)), optimizer_names).load()
    except FormatError:
        raise
    except Exception as err:  # noqa: BLE001 - any unpickling failure is a format error
        raise FormatError(f"MXNet optimizer states: not a readable pickle ({err})") from None
    opt = None
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], dict):
        obj, opt = obj
        if not (isinstance(opt, _PickledObject) and opt.kind == "optimizer"):
            raise FormatError("MXNet optimizer states: the second item is not an optimizer")
    if not isinstance(obj, dict):
        raise FormatError(f"MXNet optimizer states: expected a dict of states, got "
                          f"{type(obj).__name__}")
    states = {}
    for k, v in obj.items():
        if not isinstance(k, (numbers.Integral, str)):
            raise FormatError(f"MXNet optimizer states: state key {k!r} is not an index")
        states[k] = _to_sparsym(v, f"state {k!r}")
    return states, (_optimizer_header(opt) if opt is not None else None)
