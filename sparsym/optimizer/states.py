"""Optimizer-state files without pickle: a JSON header plus an MXNet NDArray-list body (and
the reader of the pickles MXNet writes, ``mxnet_pickle``)."""
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


def _pairs(d):
    return [[k, v] for k, v in d.items() if isinstance(k, (int, str)) and isinstance(v, _SCALARS)]


def _progress_header(opt):
    """Update counts (and schedule values such as Nadam's m_schedule): what a resumed run
    needs to continue the same trajectory (bias corrections, schedulers)."""
    return {"class": type(opt).__name__,
            "num_update": getattr(opt, "num_update", 0),
            "progress": {k: getattr(opt, k) for k in getattr(opt, "_progress_attrs", ())},
            "counts": [[dev, _pairs(c)] for dev, c in
                       getattr(opt, "_all_index_update_counts", {}).items()]}


def _optimizer_header(opt):
    """The optimizer's scalar settings, multipliers, update counts and scheduler scalars."""
    head = _progress_header(opt)
    head.update({"attrs": {k: v for k, v in opt.__dict__.items() if isinstance(v, _SCALARS)},
                 "lr_mult": _pairs(getattr(opt, "lr_mult", {})),
                 "wd_mult": _pairs(getattr(opt, "wd_mult", {}))})
    sched = getattr(opt, "lr_scheduler", None)
    if sched is not None:
        head["lr_scheduler"] = {k: v for k, v in sched.__dict__.items()
                                if isinstance(v, _SCALARS) or
                                (isinstance(v, list) and all(isinstance(x, _SCALARS) for x in v))}
    return head


def restore_optimizer(opt, head):
    """Apply a header written by :func:`_optimizer_header` to ``opt`` (same class)."""
    same_class = head.get("class", type(opt).__name__) == type(opt).__name__
    if not same_class and "attrs" in head:
        raise FormatError(f"optimizer states: saved for {head['class']}, loading into "
                          f"{type(opt).__name__}")
    # states saved without the optimizer load into another optimizer class too, as MXNet's
    # (a checkpoint of an SVRGModule reloaded by Module.load): only the counts carry over
    opt.__dict__.update(head.get("attrs", {}))
    if same_class:
        opt.__dict__.update(head.get("progress", {}))
    if "num_update" in head:
        opt.num_update = head["num_update"]
    if "lr_mult" in head:
        opt.lr_mult = {k: v for k, v in head["lr_mult"]}
        opt.wd_mult = {k: v for k, v in head["wd_mult"]}
    if "counts" in head:
        opt._all_index_update_counts = {dev: {k: v for k, v in c} for dev, c in head["counts"]}
        opt._all_index_update_counts.setdefault(0, {})
        opt._index_update_count = opt._all_index_update_counts[0]
    if "lr_scheduler" in head and getattr(opt, "lr_scheduler", None) is not None:
        opt.lr_scheduler.__dict__.update(head["lr_scheduler"])


def dumps_states(states: dict, optimizer=None, progress=None) -> bytes:
    """Serialize ``{index: state}`` to bytes, with ``optimizer``'s settings (everything
    scalar, multipliers, counts) or only ``progress``'s update counts."""
    from ..ndarray.serialization import dumps_raw
    arrays: dict = {}
    header = {"states": [[k, _encode(v, arrays)] for k, v in states.items()]}
    if optimizer is not None:
        header["optimizer"] = _optimizer_header(optimizer)
    elif progress is not None:
        header["optimizer"] = _progress_header(progress)
    head = json.dumps(header).encode()
    return _MAGIC + struct.pack("<Q", len(head)) + head + dumps_raw(arrays)


def loads_states(blob: bytes, optimizer_names=()):
    """Inverse of :func:`dumps_states`: returns (states, optimizer header or None). States
    MXNet pickled are read by a restricted reader (``mxnet_pickle``) admitting the optimizer
    classes ``optimizer_names``."""
    from ..ndarray.serialization import load_raw
    from .mxnet_pickle import is_pickle, loads_mxnet_states
    if is_pickle(blob):
        return loads_mxnet_states(blob, optimizer_names)
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
    return states, header.get("optimizer")
