"""The distributed KVStore ('dist_sync', 'dist_async', ...) on Ray.

A job is a Ray namespace holding one scheduler actor and ``num_servers`` server actors
(:mod:`sparsym.kvstore.server`). Keys are hashed to servers; arrays with at least
``MXNET_KVSTORE_BIGARRAY_BOUND`` elements are split by row ranges across all servers.
Workers are ordinary processes (started by ``sparsym-launch``) or, for tests, several
:class:`DistKVStore` objects in one process, each with its own rank.

Environment (read by :func:`create_dist`):

- ``DMLC_ROLE`` (``worker``; ``server``/``scheduler`` processes have nothing to do on Ray
  and exit at ``kv.create`` as MXNet's server processes do), ``DMLC_NUM_WORKER``,
  ``DMLC_NUM_SERVER``, ``DMLC_TASK_ID`` (the worker's rank; without it the scheduler
  assigns the lowest free rank);
- ``SPARSYM_RAY_ADDRESS`` (else ``RAY_ADDRESS``): the cluster to join; none starts a
  local Ray on 127.0.0.1 for a single worker;
- ``SPARSYM_KVSTORE_NAMESPACE``: the job; set by the launcher;
- ``MXNET_KVSTORE_BIGARRAY_BOUND`` (1000000), ``SPARSYM_KVSTORE_SNAPSHOT_INTERVAL`` (100
  updates per server; 0 disables periodic snapshots), ``SPARSYM_KVSTORE_MAX_RESTARTS`` (3),
  ``SPARSYM_KVSTORE_WORKER_TIMEOUT`` (60 s without a heartbeat = dead worker),
  ``SPARSYM_KVSTORE_SYNC_TIMEOUT`` (0 = wait for live workers without limit).
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref

import numpy as np

from .. import storage as st
from ..base import MXNetError
from ..ndarray.ndarray import NDArray, wrap
from .base import KVStoreBase, _as_list, install_store
from .cluster import (  # noqa: F401
    RAY_MISSING,
    DistConfig,
    ServerGroup,
    _call,
    _env_num,
    connect_ray,
    import_ray,
    start_servers,
)
from .compression import create_compressor
from .local import _key_list, _sum

logger = logging.getLogger("sparsym")

__all__ = ["DistKVStore", "DistConfig", "ServerGroup", "create_dist", "start_servers",
           "connect_ray", "RAY_MISSING"]

# ----------------------------------------------------------------------------- worker
def _server_of(idx, num_servers):
    return (idx * 9973) % num_servers   # MXNet's EncodeDefaultKey


class _Layout:
    """Where a key's rows live: [(server, row_begin, row_end)], and its metadata."""

    __slots__ = ("idx", "shape", "dtype", "stype", "parts")

    def __init__(self, idx, shape, dtype, stype, num_servers, bound):
        self.idx, self.shape, self.dtype, self.stype = idx, tuple(shape), dtype, stype
        rows = shape[0] if len(shape) else 1
        size = int(np.prod(shape)) if len(shape) else 1
        if size < bound or num_servers == 1 or rows < num_servers:
            self.parts = [(_server_of(idx, num_servers), 0, rows)]
        else:
            cuts = [rows * i // num_servers for i in range(num_servers + 1)]
            self.parts = [(s, cuts[s], cuts[s + 1]) for s in range(num_servers)]

    @property
    def whole(self):
        return len(self.parts) == 1


class DistKVStore(KVStoreBase):
    """A worker's handle on a distributed KVStore (MXNet's ``KVStoreDist`` API).

    Parameters
    ----------
    kv_type : str
        'dist_sync', 'dist_async', 'dist_sync_device', 'dist_device_sync' or 'dist'
        (sync unless the name contains '_async', as in MXNet).
    rank : int, optional
        This worker's rank (default ``DMLC_TASK_ID``, else assigned by the scheduler).
    namespace : str, optional
        The job (default ``SPARSYM_KVSTORE_NAMESPACE``).

    Examples
    --------
    Two in-process workers of a 2-server job (each would normally be its own process):

    >>> from sparsym.kvstore.dist import start_servers, DistConfig
    >>> group = start_servers(config=DistConfig(num_workers=2, num_servers=2))  # doctest: +SKIP
    >>> kv0, kv1 = group.worker("dist_sync", 0), group.worker("dist_sync", 1)  # doctest: +SKIP
    """

    def __init__(self, kv_type="dist_sync", rank=None, namespace=None):
        namespace = namespace or os.environ.get("SPARSYM_KVSTORE_NAMESPACE")
        if not namespace:
            raise MXNetError("DistKVStore needs the job's namespace (SPARSYM_KVSTORE_NAMESPACE; "
                             "set by sparsym-launch)")
        import ray
        self._ray = ray
        self._type = kv_type
        self._ns = namespace
        try:
            self._sched = ray.get_actor("scheduler", namespace=namespace)
        except ValueError:
            raise MXNetError(f"no kvstore job {namespace!r} in the Ray cluster (its scheduler "
                             "actor is missing); start workers with sparsym-launch") from None
        cfg = _call(ray, self._sched.get_config.remote(), "kvstore: reading the job config")
        self._cfg = DistConfig(**{k: v for k, v in cfg.items() if k != "mode"})
        self._servers = [ray.get_actor(f"server-{i}", namespace=namespace)
                         for i in range(self._cfg.num_servers)]
        if rank is None and os.environ.get("DMLC_TASK_ID") not in (None, ""):
            rank = _env_num("DMLC_TASK_ID", 0, int)
        self._rank = _call(ray, self._sched.register.remote(rank), "kvstore: registering")
        self._sync = "_async" not in kv_type
        if self._rank == 0:   # MXNet: rank 0 configures the servers' mode at creation
            mode = "sync" if self._sync else "async"
            _call(ray, [self._sched.set_mode.remote(mode)]
                  + [s.set_mode.remote(mode) for s in self._servers], "kvstore: set mode")
        self._layouts: dict = {}
        self._str_keys = None
        self._str_idx: dict = {}
        self._round: dict = {}
        self._pending: dict = {}
        self._barrier_gen = 0
        self._compressor = None
        self._optimizer = None
        self._closed = False
        self._stop = threading.Event()
        self._hb = threading.Thread(target=_heartbeat, name=f"sparsym-kv-heartbeat-{self._rank}",
                                    args=(self._sched, self._rank, self._cfg.heartbeat_interval,
                                          self._stop), daemon=True)
        self._hb.start()
        if not _LIVE and not _ATEXIT:
            # registered after ray.init's own exit hook, so it runs first (atexit is LIFO)
            atexit.register(_close_all)
            _ATEXIT.append(True)
        _LIVE.add(self)

    # ------------------------------------------------------------------ properties
    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return self._rank

    @property
    def num_workers(self):
        return self._cfg.num_workers

    @property
    def num_servers(self):
        return self._cfg.num_servers

    def is_capable(self, capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"Unknown capability: {capability}")

    # ------------------------------------------------------------------ keys
    def _check_key_type(self, keys):
        is_str = isinstance(keys[0], str)
        if self._str_keys is None:
            self._str_keys = is_str
        elif self._str_keys != is_str:
            raise MXNetError("Mixed key types are not allowed")

    def _layout(self, k):
        lay = self._layouts.get(k)
        if lay is None:
            raise MXNetError(f"key {k} has not been inited")
        return lay

    def _take_pending(self, k, sid):
        return self._pending.pop((k, sid), [])

    def _add_pending(self, k, sid, ref):
        lst = self._pending.setdefault((k, sid), [])
        lst.append(ref)
        if len(lst) > 16:   # keys pushed and never pulled: surface errors, bound memory
            done = lst[:8]
            del lst[:8]
            _call(self._ray, done, f"push of key {k}")

    def _flush(self):
        refs = [r for lst in self._pending.values() for r in lst]
        self._pending.clear()
        if refs:
            _call(self._ray, refs, "kvstore push")

    # ------------------------------------------------------------------ API
    def init(self, key, value):
        """Initialise keys; rank 0's values are stored, then every worker meets at a barrier."""
        keys, vals = _key_list(key, value)
        self._check_key_type(keys)
        per_server: dict = {}
        for k, v in zip(keys, vals):
            if k in self._layouts:
                raise MXNetError(f"duplicate init of key {k}. Please double check if you called "
                                 "kv.init or kv.broadcast with this key multiple times")
            v = _as_list(v)[0]
            if isinstance(k, str):
                idx = self._str_idx.setdefault(k, len(self._str_idx))
            else:
                idx = int(k)
            stype = "row_sparse" if v.stype == "row_sparse" else "default"
            lay = _Layout(idx, v.shape, np.dtype(v.dtype), stype, self._cfg.num_servers,
                          self._cfg.bigarray_bound)
            self._layouts[k] = lay
            self._round[k] = 0
            if self._rank == 0:
                dense = st.todense(v._raw)
                for sid, a, b in lay.parts:
                    rows = dense if lay.whole else dense[a:b]
                    per_server.setdefault(sid, []).append((idx, stype, rows))
        if per_server:
            _call(self._ray, [self._servers[s].init.remote(items)
                              for s, items in per_server.items()], "kvstore init")
        self._barrier()

    def push(self, key, value, priority=0):
        """Push values (a list per key is summed first); row_sparse values send only their
        rows. Sync mode: the servers update once every worker has pushed."""
        keys, vals = _key_list(key, value)
        self._check_key_type(keys)
        for k, v in zip(keys, vals):
            lay = self._layout(k)
            merged = _sum(_as_list(v))
            if isinstance(merged, st.CSR):
                merged = st.todense(merged)
            if tuple(merged.shape) != lay.shape:
                raise MXNetError(f"push of key {k}: value shape {tuple(merged.shape)} does not "
                                 f"match the inited shape {lay.shape}")
            self._round[k] += 1
            rnd = self._round[k]
            for sid, a, b in lay.parts:
                payload = self._payload(k, lay, sid, a, b, merged)
                ref = self._servers[sid].push.remote(lay.idx, self._rank, rnd, payload)
                self._add_pending(k, sid, ref)

    def _payload(self, k, lay, sid, a, b, merged):
        if isinstance(merged, st.RSP):
            idx = merged.indices
            if lay.whole:
                return ("rsp", merged.data, idx)
            lo, hi = np.searchsorted(idx, [a, b])
            return ("rsp", merged.data[lo:hi], idx[lo:hi] - a)
        part = merged if lay.whole else merged[a:b]
        if self._compressor is not None:
            return self._compressor.compress((k, sid), part)
        return ("dense", part)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy stored values into ``out`` (after this worker's pushes are applied, in sync
        mode). Pulling a row_sparse key into row_sparse outputs is skipped with a warning:
        use :meth:`row_sparse_pull`."""
        if out is None:
            raise MXNetError("pull requires out")
        if not ignore_sparse:
            raise MXNetError("dist kvstore pull doesn't support ignore_sparse=False")
        keys, outs = _key_list(key, out)
        self._check_key_type(keys)
        jobs = []
        for k, o in zip(keys, outs):
            lay = self._layout(k)
            dsts = _as_list(o)
            if lay.stype == "row_sparse" and all(d.stype == "row_sparse" for d in dsts):
                logger.warning("Warning: non-default weights detected during kvstore pull. "
                               "This call has been ignored. Please make sure to use "
                               "kv.row_sparse_pull() or module.prepare() with row_ids.")
                continue
            refs = [self._servers[sid].pull.remote(lay.idx, self._rank, self._round[k],
                                                   self._take_pending(k, sid))
                    for sid, _, _ in lay.parts]
            jobs.append((dsts, refs))
        results = _call(self._ray, [r for _, refs in jobs for r in refs], "kvstore pull")
        pos = 0
        for dsts, refs in jobs:
            parts = results[pos:pos + len(refs)]
            pos += len(refs)
            full = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
            for d in dsts:
                d._assign(full)

    def pushpull(self, key, value, out=None, priority=0):
        """Push then pull (dense values only, as MXNet's dist store)."""
        keys, vals = _key_list(key, value)
        if any(x.stype != "default" for v in vals for x in _as_list(v)):
            raise MXNetError("dist kvstore pushpull supports dense values only; use push and "
                             "row_sparse_pull for row_sparse values")
        self.push(key, value, priority)
        self.pull(key, out if out is not None else value, priority)

    def broadcast(self, key, value, out, priority=0):
        """Init ``key`` with (rank 0's) ``value``, then pull it into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull rows ``row_ids`` (deduplicated and sorted) of row_sparse keys into
        row_sparse ``out``; only the requested rows travel."""
        if out is None or row_ids is None:
            raise MXNetError("row_sparse_pull requires out and row_ids")
        keys, outs = _key_list(key, out)
        self._check_key_type(keys)
        if isinstance(row_ids, NDArray) or not isinstance(row_ids, (list, tuple)):
            row_ids = [row_ids] * len(keys)
        elif len(keys) == 1 and not isinstance(key, (list, tuple)):
            row_ids = [row_ids]
        if len(row_ids) != len(keys):
            raise MXNetError(f"row_sparse_pull: {len(keys)} keys but {len(row_ids)} row_ids")
        for k, o, rid in zip(keys, outs, row_ids):
            lay = self._layout(k)
            if lay.stype != "row_sparse":
                raise MXNetError("PullRowSparse expects row_sparse src NDArray")
            dsts = _as_list(o)
            rids = list(rid) if isinstance(rid, (list, tuple)) else [rid] * len(dsts)
            if len(rids) != len(dsts):
                raise MXNetError(f"row_sparse_pull of key {k}: {len(dsts)} outputs but "
                                 f"{len(rids)} row_ids")
            for dst in dsts:
                if dst.stype != "row_sparse":
                    raise MXNetError("Expected row_sparse storage type for row_sparse_pull "
                                     f"values, but got {dst.stype}")
            cache: dict = {}
            used: set = set()
            for dst, r in zip(dsts, rids):
                ids = r.asnumpy() if isinstance(r, NDArray) else np.asarray(r)
                ids = np.unique(ids.astype(np.int64).ravel())
                if len(ids) and (ids[0] < 0 or ids[-1] >= lay.shape[0]):
                    raise MXNetError(f"row_sparse_pull of key {k}: row ids must be in "
                                     f"[0, {lay.shape[0]}), got {ids[0]}..{ids[-1]}")
                sig = ids.tobytes()
                if sig not in cache:
                    cache[sig] = self._pull_rows(k, lay, ids)
                dst._raw = cache[sig].copy() if sig in used else cache[sig]
                used.add(sig)

    def _pull_rows(self, k, lay, ids):
        refs, pieces = [], []
        for sid, a, b in lay.parts:
            lo, hi = np.searchsorted(ids, [a, b])
            if hi == lo:
                continue
            refs.append(self._servers[sid].row_sparse_pull.remote(
                lay.idx, self._rank, self._round[k], ids[lo:hi] - a,
                self._take_pending(k, sid)))
            pieces.append(hi - lo)
        tail = lay.shape[1:]
        if not refs:
            return st.zeros_raw("row_sparse", lay.shape, lay.dtype)
        rows = _call(self._ray, refs, f"row_sparse_pull of key {k}")
        data = rows[0] if len(rows) == 1 else np.concatenate(rows, axis=0)
        return st.RSP(np.ascontiguousarray(data).reshape((len(ids),) + tail), ids, lay.shape)

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the servers (rank 0 sends it; Ray ships it in memory)."""
        from ..optimizer import Optimizer
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"set_optimizer expects an Optimizer, got {type(optimizer).__name__}")
        self._optimizer = optimizer
        if self._rank != 0:
            return
        _call(self._ray, self._sched.set_optimizer.remote(optimizer), "set_optimizer")
        _call(self._ray, [s.set_optimizer.remote(optimizer) for s in self._servers],
              "set_optimizer")

    def _set_updater(self, updater):
        raise MXNetError("dist kvstore runs the updater on the servers; use set_optimizer")

    def set_gradient_compression(self, compression_params):
        """Compress dense pushes, e.g. ``{'type': '2bit', 'threshold': 0.5}``."""
        self._compressor = create_compressor(compression_params)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Gather the servers' updater states into one pickle-free file."""
        from ..optimizer.states import dumps_states, loads_states
        from ..utils import atomic_write
        self._flush()
        blobs = _call(self._ray, [s.get_states.remote() for s in self._servers],
                      "save_optimizer_states")
        if any(b is None for b in blobs) or self._optimizer is None:
            raise MXNetError("save_optimizer_states: the servers have no optimizer; call "
                             "set_optimizer first")
        decoded = [loads_states(b) for b in blobs]
        merged = {}
        for lay in self._layouts.values():
            parts = [decoded[sid][0].get(lay.idx) for sid, _, _ in lay.parts]
            if all(p is None for p in parts):
                continue
            merged[lay.idx] = parts[0] if lay.whole else _concat_states(parts)
        opt = self._server_optimizer([head for _, head in decoded])
        data = dumps_states(merged, opt) if dump_optimizer else dumps_states(merged, progress=opt)
        atomic_write(fname, data)

    def _server_optimizer(self, heads):
        """A copy of the optimizer carrying the servers' update counts (merged)."""
        import copy

        from ..optimizer.states import restore_optimizer
        out = copy.deepcopy(self._optimizer)
        counts: dict = {}
        for head in heads:
            if head is None:
                continue
            one = copy.deepcopy(self._optimizer)
            restore_optimizer(one, head)
            for dev, c in one._all_index_update_counts.items():
                mine = counts.setdefault(dev, {})
                for k, v in c.items():
                    mine[k] = max(mine.get(k, 0), v)
            out.num_update = max(out.num_update, one.num_update)
        if heads and heads[0] is not None:
            restore_optimizer(out, heads[0])
            out.num_update = max([out.num_update] + [h.get("num_update", 0)
                                                     for h in heads if h])
        out._all_index_update_counts = counts or {0: {}}
        out._all_index_update_counts.setdefault(0, {})
        out._index_update_count = out._all_index_update_counts[0]
        return out

    def load_optimizer_states(self, fname, resume_update_counts=False):
        """Load states written by :meth:`save_optimizer_states` (rank 0 sends them); update
        counts restart unless the file holds the optimizer or ``resume_update_counts``."""
        import copy

        from ..optimizer.optimizer import registered_names
        from ..optimizer.states import dumps_states, loads_states, restore_optimizer
        if self._rank != 0:
            return
        if self._optimizer is None:
            raise MXNetError("load_optimizer_states: call set_optimizer first")
        with open(fname, "rb") as f:
            states, head = loads_states(f.read(), registered_names())
        opt = None
        if head is not None and ("attrs" in head or resume_update_counts):
            opt = copy.deepcopy(self._optimizer)
            restore_optimizer(opt, head)
        per_server: dict = {sid: {} for sid in range(self._cfg.num_servers)}
        for lay in self._layouts.values():
            if lay.idx not in states:
                continue
            for sid, a, b in lay.parts:
                per_server[sid][lay.idx] = (states[lay.idx] if lay.whole
                                            else _slice_states(states[lay.idx], a, b))
        _call(self._ray, [self._servers[sid].set_states.remote(dumps_states(s, opt))
                          for sid, s in per_server.items()], "load_optimizer_states")

    def _barrier(self):
        """Wait for every worker (and surface errors of this worker's pending pushes)."""
        self._flush()
        self._barrier_gen += 1
        _call(self._ray, self._sched.barrier.remote(self._rank, self._barrier_gen),
              "kvstore barrier")

    def _send_command_to_servers(self, head, body):
        raise MXNetError("dist kvstore: raw server commands are not supported (MXNet sends a "
                         "pickled optimizer this way); use set_optimizer")

    def close(self):
        """Flush pending pushes and leave the job (the other workers then see this rank as
        gone). Called at interpreter exit."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if not self._ray.is_initialized():   # at exit Ray may be down already; a call would
            _LIVE.discard(self)               # start a new local cluster
            return
        try:
            self._flush()
        finally:
            try:
                self._ray.get(self._sched.worker_done.remote(self._rank), timeout=10)
            except Exception:  # the job may already be torn down
                pass
            _LIVE.discard(self)

    def _stop_heartbeat(self):
        """Stop heartbeats without leaving (tests: a worker that hangs or was killed)."""
        self._stop.set()

    def _detach(self):
        """Forget this handle without telling the job (its actors are being torn down)."""
        self._stop.set()
        self._closed = True
        self._pending.clear()
        _LIVE.discard(self)

    def __repr__(self):
        return (f"<DistKVStore {self._type} rank {self._rank}/{self.num_workers}, "
                f"{self.num_servers} servers, namespace {self._ns}>")


def _concat_states(parts):
    """Join per-server state slices of one key along rows."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, NDArray):
        raws = [p._raw for p in parts]
        if isinstance(raws[0], st.RSP):
            data = np.concatenate([r.data for r in raws], axis=0)
            n = data.shape[0]
            return wrap(st.RSP(data, np.arange(n, dtype=np.int64), (n,) + raws[0].shape[1:]))
        return wrap(np.concatenate(raws, axis=0))
    if isinstance(first, (list, tuple)):
        seq = [_concat_states([p[i] for p in parts]) for i in range(len(first))]
        return tuple(seq) if isinstance(first, tuple) else seq
    return first


def _slice_states(state, a, b):
    """Rows [a, b) of a key's state."""
    if state is None:
        return None
    if isinstance(state, NDArray):
        raw = state._raw
        if isinstance(raw, st.RSP):
            dense = st.todense(raw)[a:b]
            return wrap(st.RSP(np.ascontiguousarray(dense), np.arange(b - a, dtype=np.int64),
                               dense.shape))
        return wrap(np.ascontiguousarray(raw[a:b]))
    if isinstance(state, (list, tuple)):
        seq = [_slice_states(s, a, b) for s in state]
        return tuple(seq) if isinstance(state, tuple) else seq
    return state


def _heartbeat(sched, rank, interval, stop):
    import ray
    while not stop.wait(interval):
        if not ray.is_initialized():
            return
        try:
            sched.heartbeat.remote(rank)
        except Exception:   # Ray shut down
            return


_LIVE: weakref.WeakSet = weakref.WeakSet()
_ATEXIT: list = []


def _close_all():
    for kv in list(_LIVE):
        try:
            kv.close()
        except Exception as err:   # at exit: report, never raise
            logger.warning("kvstore close at exit failed: %s", err)


_OWN_GROUP: list = []


def create_dist(name):
    """``kv.create('dist_*')``: the worker of the job described by the environment.

    Without ``SPARSYM_KVSTORE_NAMESPACE`` (no launcher) a single-worker job is started in
    this process: a local Ray on 127.0.0.1 (or ``SPARSYM_RAY_ADDRESS``) and its servers.
    """
    role = os.environ.get("DMLC_ROLE", "worker")
    if role in ("server", "scheduler"):
        # MXNet's server/scheduler processes run their loop and exit inside mxnet; on Ray the
        # servers are actors, so such a process has nothing to do
        logger.info("DMLC_ROLE=%s: sparsym's servers are Ray actors; exiting", role)
        raise SystemExit(0)
    if role != "worker":
        raise MXNetError(f"DMLC_ROLE={role!r}: expected worker, server or scheduler")
    address = os.environ.get("SPARSYM_RAY_ADDRESS") or os.environ.get("RAY_ADDRESS") or None
    ray = connect_ray(address)
    del ray
    namespace = os.environ.get("SPARSYM_KVSTORE_NAMESPACE")
    if not namespace:
        cfg = DistConfig.from_env()
        if cfg.num_workers > 1:
            raise MXNetError(f"DMLC_NUM_WORKER={cfg.num_workers} but no job namespace: start "
                             "the workers with sparsym-launch, or give every worker the same "
                             "SPARSYM_KVSTORE_NAMESPACE and SPARSYM_RAY_ADDRESS")
        group = start_servers(config=cfg)
        _OWN_GROUP.append(group)
        return DistKVStore(name, rank=0, namespace=group.namespace)
    import ray
    try:
        ray.get_actor("scheduler", namespace=namespace)
    except ValueError:
        # workers organising themselves (no launcher): the first one creates the actors
        start_servers(namespace=namespace, detached=True)
    return DistKVStore(name, namespace=namespace)


install_store("dist", create_dist)
install_store("dist_worker", DistKVStore)
