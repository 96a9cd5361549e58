"""NDArray pickled state as MXNet's: ``{'handle': bytearray}`` in MXNet's raw array format."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import DTypeError, FormatError
from ..context import Context, current_context
from .ndarray import install_methods
from .serialization import dumps_array, loads_array

_CPU_TYPE = 1


def getstate(arr):
    """The state of ``arr``; dtypes MXNet's format lacks go as numpy parts under 'value'."""
    dev = (_CPU_TYPE, arr._ctx.device_id if arr._ctx.device_type == "cpu" else 0)
    try:
        return {"handle": bytearray(dumps_array(arr._raw, dev))}
    except DTypeError:
        raw = arr._raw
        if isinstance(raw, st.CSR):
            parts = ("csr", (raw.data, raw.indices, raw.indptr))
        elif isinstance(raw, st.RSP):
            parts = ("row_sparse", (raw.data, raw.indices))
        else:
            parts = ("default", (raw,))
        return {"handle": None, "value": parts + (tuple(raw.shape), dev[1])}


def raw_of_state(state):
    """``(raw value, context)`` of a state; arrays saved on a GPU load on the current
    context."""
    if not isinstance(state, dict) or "handle" not in state:
        raise FormatError(f"NDArray.__setstate__: expected a dict with a 'handle', got "
                          f"{type(state).__name__}")
    handle = state["handle"]
    if handle is None and "value" in state:
        kind, parts, shape, dev_id = state["value"]
        raw = {"csr": lambda: st.CSR(*parts, shape), "row_sparse": lambda: st.RSP(*parts, shape),
               "default": lambda: np.asarray(parts[0])}[kind]()
        ctx = Context("cpu", dev_id)
    elif handle is None:
        raw, ctx = np.zeros((0,), np.float32), current_context()
    else:
        raw, (dev_type, dev_id) = loads_array(bytes(handle))
        if raw is None:
            raw = np.zeros((0,), np.float32)
        ctx = Context("cpu", dev_id) if dev_type == _CPU_TYPE else current_context()
    return raw, ctx


def setstate(arr, state):
    """Fill ``arr`` from a state (see :func:`raw_of_state`)."""
    raw, ctx = raw_of_state(state)
    cls = type(arr)
    want = {st.CSR: "CSRNDArray", st.RSP: "RowSparseNDArray"}.get(type(raw), "NDArray")
    if cls.__name__ != want:
        raise FormatError(f"NDArray.__setstate__: the state holds a "
                          f"{st.stype_of(raw)} array, which a {cls.__name__} cannot take")
    arr._raw = raw
    arr._ctx = ctx
    arr._ag = None
    arr.writable = True


install_methods(getstate=getstate, setstate=setstate)
