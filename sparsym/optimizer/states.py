"""Optimizer-state files without pickle: a JSON header plus an MXNet NDArray-list body."""
from __future__ import annotations

import json
import struct

import numpy as np

from ..base import FormatError
from ..ndarray.ndarray import NDArray, wrap

_MAGIC = b"SPSYMOPT1"
_SCALARS = (int, float, bool, str, type(None))


def _encode(state, arrays):
    if state is None:
        return None
    if isinstance(state, NDArray):
        arrays[str(len(arrays))] = state._raw
        return {"nd": len(arrays) - 1}
    if isinstance(state, (list, tuple)):
        return {"seq": [_encode(s, arrays) for s in state], "tuple": isinstance(state, tuple)}
    if isinstance(state, (int, float, np.floating, np.integer)):
        return {"num": float(state)}
    raise TypeError(f"cannot serialize optimizer state of type {type(state).__name__}")


def _decode(obj, arrays):
    if obj is None:
        return None
    if "nd" in obj:
        return wrap(arrays[str(obj["nd"])])
    if "seq" in obj:
        seq = [_decode(s, arrays) for s in obj["seq"]]
        return tuple(seq) if obj.get("tuple") else seq
    if "num" in obj:
        return obj["num"]
    raise FormatError(f"optimizer states: unknown state record {obj!r}")


def dumps_states(states: dict, optimizer=None) -> bytes:
    """Serialize ``{index: state}`` (and the optimizer's scalar settings) to bytes."""
    from ..ndarray.serialization import dumps_raw
    arrays: dict = {}
    header = {"states": [[k, _encode(v, arrays)] for k, v in states.items()]}
    if optimizer is not None:
        header["optimizer"] = {"class": type(optimizer).__name__,
                               "attrs": {k: v for k, v in optimizer.__dict__.items()
                                         if isinstance(v, _SCALARS)}}
    head = json.dumps(header).encode()
    return _MAGIC + struct.pack("<Q", len(head)) + head + dumps_raw(arrays)


def loads_states(blob: bytes):
    """Inverse of :func:`dumps_states`: returns (states, optimizer attrs or None)."""
    from ..ndarray.serialization import load_raw
    if not isinstance(blob, (bytes, bytearray)) or not blob.startswith(_MAGIC):
        raise FormatError("optimizer states: not a sparsym optimizer-state blob (bad magic)")
    off = len(_MAGIC)
    if len(blob) < off + 8:
        raise FormatError("optimizer states: truncated header")
    (n,) = struct.unpack_from("<Q", blob, off)
    off += 8
    if len(blob) < off + n:
        raise FormatError(f"optimizer states: header needs {n} bytes, got {len(blob) - off}")
    try:
        header = json.loads(blob[off:off + n].decode())
    except ValueError as err:
        raise FormatError(f"optimizer states: corrupt header ({err})") from None
    arrays = load_raw(bytes(blob[off + n:]))
    if isinstance(arrays, list):
        arrays = {}
    states = {}
    for k, v in header["states"]:
        states[k] = _decode(v, arrays)
    opt = header.get("optimizer", {}).get("attrs") if "optimizer" in header else None
    return states, opt
