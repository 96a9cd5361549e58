"""The 'local' and 'device' key-value stores (MXNet 1.9 semantics for row_sparse values)."""
from __future__ import annotations

import logging

import numpy as np

from .. import storage as st
from ..base import MXNetError, ShapeError
from ..ndarray.ndarray import NDArray, wrap
from ..ops.core.registry import run_raw
from ..ops.sparse.sparse import row_ids
from .base import KVStoreBase, SingleWorker, _as_list, install_store
from .gradsum import sum_raw

logger = logging.getLogger("sparsym")

__all__ = ["KVStore"]


def _key_list(key, value=None):
    """Normalise (key, value) into parallel lists; a list of values per key stays grouped."""
    if isinstance(key, (list, tuple)):
        keys = list(key)
        vals = list(value) if value is not None else [None] * len(keys)
        if len(vals) != len(keys):
            raise MXNetError(f"number of keys ({len(keys)}) and values ({len(vals)}) differ")
    else:
        keys, vals = [key], [value]
    types = {type(k) for k in keys}
    if len(types) > 1 or not types <= {int, str}:
        if len(types) > 1:
            raise MXNetError("Mixed key types are not allowed")
        raise MXNetError(f"keys must be int or str, got {types}")
    return keys, vals


def _unique_ids(r, n, key):
    """Row ids as sorted unique int64 (a byte map of the store's rows: several times faster
    than sorting a batch's tens of thousands of column ids); MXNetError when one is not a
    row of the stored value."""
    ids = r.asnumpy() if isinstance(r, NDArray) else np.asarray(r)
    try:
        return row_ids(ids, n, strict=True)
    except ValueError:
        raise MXNetError(f"row_sparse_pull: row id out of range [0, {n}) for key {key}") \
            from None


def _check_shape(k, stored, dst, what):
    if tuple(stored.shape) != tuple(dst.shape):
        raise ShapeError(f"kvstore {what}: key {k} holds shape {tuple(stored.shape)}, the "
                         f"output has shape {tuple(dst.shape)}")


def _sum(values):
    """Sum pushed values (per-device copies), keeping row_sparse when all are."""
    return sum_raw([v._raw for v in values])


class KVStore(SingleWorker, KVStoreBase):
    """A single-process store: push sums values (per key), pull broadcasts them.

    Parameters
    ----------
    kv_type : str
        'local' or 'device' (same behaviour on CPU).
    """

    def __init__(self, kv_type="local"):
        self._type = kv_type
        self._store: dict = {}
        self._updater = None
        self._str_keys = None
        self._compression = None

    @property
    def type(self):
        return self._type

    def is_capable(self, capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"Unknown capability: {capability}")

    def _check_key_type(self, keys):
        is_str = isinstance(keys[0], str)
        if self._str_keys is None:
            self._str_keys = is_str
        elif self._str_keys != is_str:
            raise MXNetError("Mixed key types are not allowed")

    def init(self, key, value):
        """Initialise keys once (a second init of a key is an error)."""
        keys, vals = _key_list(key, value)
        self._check_key_type(keys)
        for k, v in zip(keys, vals):
            if k in self._store:
                raise MXNetError(f"duplicate init of key {k}. Please double check if you called "
                                 "kv.init or kv.broadcast with this key multiple times")
            v = _as_list(v)[0]
            self._store[k] = wrap(v._raw.copy(), v.context)

    def _stored(self, k):
        if k not in self._store:
            raise MXNetError(f"key {k} has not been inited")
        return self._store[k]

    def push(self, key, value, priority=0):
        """Push values; a list per key is summed. With an updater, apply it to the stored
        value; without, the merged value replaces it (row_sparse: unpushed rows become 0)."""
        keys, vals = _key_list(key, value)
        self._check_key_type(keys)
        for k, v in zip(keys, vals):
            stored = self._stored(k)
            for x in _as_list(v):
                _check_shape(k, stored, x, "push")
            merged = wrap(_sum(self._compressed(k, _as_list(v))), stored.context)
            if self._updater is not None:
                self._updater(self._updater_key(k), merged, stored)
            else:
                raw = st.cast_raw(merged._raw, stored.stype) \
                    if merged.stype != stored.stype else merged._raw
                # the key keeps its dtype, as in MXNet (a float64 push into a float32 key
                # is cast, not adopted: the next pull would change the output's dtype)
                stored._raw = st.astype_raw(raw, stored.dtype)

    def _updater_key(self, k):
        return k

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy stored values into ``out`` (one array or a list per key).

        With ``ignore_sparse`` (default) a pull into a row_sparse output is skipped, as in
        MXNet, but with a warning (MXNet is silent): use :meth:`row_sparse_pull` or
        ``Module.prepare``. ``ignore_sparse=False`` pulls every row.
        """
        if out is None:
            raise MXNetError("pull requires out")
        keys, outs = _key_list(key, out)
        self._check_key_type(keys)
        for k, o in zip(keys, outs):
            stored = self._stored(k)
            for dst in _as_list(o):
                if dst.stype == "row_sparse" and ignore_sparse:
                    logger.warning("Warning: non-default weights detected during kvstore pull. "
                                   "This call has been ignored. Please make sure to use "
                                   "kv.row_sparse_pull() or module.prepare() with row_ids.")
                    continue
                _check_shape(k, stored, dst, "pull")
                dst._assign(stored._raw)

    def pushpull(self, key, value, out=None, priority=0):
        """Push then pull (into ``out``, or back into ``value``)."""
        self.push(key, value, priority)
        self.pull(key, out if out is not None else value, priority)

    def broadcast(self, key, value, out, priority=0):
        """Init ``key`` with ``value`` then pull it into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` of row_sparse values into row_sparse ``out``.

        ``row_ids`` (NDArray or list, one per output) may be unsorted, repeated, 2-D or
        float: they are made unique and sorted. One ``row_ids`` for several outputs pulls
        into the first and copies it to the rest (MXNet). Empty ids give empty rows.
        """
        if out is None or row_ids is None:
            raise MXNetError("row_sparse_pull requires out and row_ids")
        if not isinstance(row_ids, (list, tuple)):
            row_ids = [row_ids]
        single = len(row_ids) == 1 and isinstance(out, (list, tuple))
        first = [out[0]] if single else out
        keys, outs = _key_list(key, first)
        _, rids = _key_list(key, row_ids if len(keys) > 1 or not single else row_ids[0])
        self._check_key_type(keys)
        pairs = []
        for k, o, r in zip(keys, outs, rids):
            dsts = _as_list(o)
            rs = _as_list(r) if isinstance(r, (list, tuple)) else [r] * len(dsts)
            if len(rs) != len(dsts):
                raise MXNetError("the number of row_ids doesn't match the number of values")
            pairs += [(k, d, x) for d, x in zip(dsts, rs)]
        for k, dst, r in pairs:
            stored = self._stored(k)
            if stored.stype != "row_sparse":
                raise MXNetError("PullRowSparse expects row_sparse src NDArray")
            if dst.stype != "row_sparse":
                raise MXNetError("Expected row_sparse storage type for row_sparse_pull values, "
                                 f"but detected storage type {dst.stype}")
            _check_shape(k, stored, dst, "row_sparse_pull")
            ids = _unique_ids(r, stored.shape[0], k)
            src = stored._raw
            if len(src.indices) == src.shape[0]:
                # every row stored (the usual weight): rows are positions, no lookup needed
                res = st.RSP(src.data[ids], ids, src.shape)
            else:
                res = run_raw("_sparse_retain", [src, ids])[0]
            dst._raw = st.astype_raw(res, dst.dtype)  # the output keeps its dtype
        if single:
            for dst in out[1:]:
                dst._raw = out[0]._raw.copy()

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the store at every push."""
        from ..optimizer import get_updater
        self._updater = get_updater(optimizer)

    def _set_updater(self, updater):
        self._updater = updater

    def set_gradient_compression(self, compression_params):
        """2-bit compression of each device's pushed gradient, with a residual per key and
        device, as MXNet's 'device' kvstore (the 'local' one refuses it)."""
        if "device" not in self._type and "dist" not in self._type:
            raise Exception("Gradient compression is not supported for this type of kvstore")
        from .compression import create_compressor
        self._compression = create_compressor(compression_params)

    def _compressed(self, k, values):
        """``values`` as the devices send them under compression: each dense value quantized
        to -threshold/0/+threshold, what is left kept for its next push."""
        if self._compression is None:
            return values
        from .compression import decode_payload
        out = []
        for i, v in enumerate(values):
            if v.stype != "default":  # MXNet compresses dense gradients only
                out.append(v)
                continue
            payload = self._compression.compress((k, i), v._raw)
            out.append(wrap(decode_payload(payload), v.context))
        return out

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states (no pickle) atomically."""
        if self._updater is None:
            raise MXNetError("Cannot save states for distributed training")
        from ..utils import atomic_write
        atomic_write(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname, resume_update_counts=False):
        """Load :meth:`save_optimizer_states` states (``Updater.set_states`` explains
        ``resume_update_counts``)."""
        if self._updater is None:
            raise MXNetError("Cannot load states for distributed training")
        from ..utils import read_saved
        self._updater.set_states(read_saved(fname), resume_update_counts=resume_update_counts)

    def _barrier(self):
        """Single process: nothing to wait for."""

    def _send_command_to_servers(self, head, body):
        """No servers in a local store."""


install_store("local", KVStore)
