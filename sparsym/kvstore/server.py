"""Ray actors of the distributed KVStore: the scheduler and the server shards.

One job (one namespace) has one ``scheduler`` actor and ``num_servers`` ``server-<i>``
actors; workers find them by name in the job's namespace.

- The **scheduler** holds the job's configuration, the workers' registrations and
  heartbeats, barriers, the optimizer sent by ``set_optimizer`` and each server's latest
  **snapshot**. It is not restarted (its snapshots die with it): when it is gone, the servers
  notice at their next snapshot or liveness check, every later pull raises, and the
  launcher (which pings the scheduler) ends the job.
- A **server** holds row ranges of some keys (its *shard*) and the updater's states for
  them. Sync mode: pushes of round ``r`` are accumulated until every worker pushed round
  ``r``, then the updater runs once. Async mode: every push is applied on arrival.

Fault tolerance. Every ``snapshot_interval`` updates (and after every init, set_optimizer
and load of states) a server sends its shard and updater states to the scheduler, encoded
without pickle (a JSON header plus MXNet's NDArray list format plus the optimizer-state
container). Ray restarts a killed server (``max_restarts``); the new incarnation restores
the last snapshot, so the updates after it are lost and training goes on. Pushes that had
reached the dead incarnation for an unfinished round are lost too: a worker's pull carries
the references of its pending pushes, so a restarted server that misses the worker's
contribution to a round waits for those pushes to finish; a contribution still missing then
can only have been lost, and it is counted as empty.

A pull or barrier waiting for other workers fails with a clear error when one of them is
dead (marked by the launcher when its process exits, or silent for ``worker_timeout``
seconds) or when ``sync_timeout`` (if > 0) has passed.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import struct
import time
import warnings

import numpy as np

from .. import storage as st
from ..base import FormatError, MXNetError
from .compression import decode_payload
from .gradsum import sum_raw

logger = logging.getLogger("sparsym")

__all__ = ["SchedulerImpl", "ServerImpl", "actor_classes", "encode_snapshot",
           "decode_snapshot"]

_SNAP_MAGIC = b"SPSYMKVS1"
_POLL = 0.25  # seconds between liveness checks while waiting for other workers


# ----------------------------------------------------------------------------- snapshots
def encode_snapshot(header: dict, arrays: dict, states: bytes) -> bytes:
    """Bytes of a shard snapshot: JSON header, NDArray-list body, optimizer-state blob."""
    from ..ndarray.serialization import dumps_raw
    head = json.dumps(header).encode()
    body = dumps_raw(arrays) if arrays else b""
    return (_SNAP_MAGIC + struct.pack("<QQ", len(head), len(body)) + head + body
            + (states or b""))


def decode_snapshot(blob: bytes):
    """Inverse of :func:`encode_snapshot`: (header, arrays, states bytes)."""
    from ..ndarray.serialization import load_raw
    if not isinstance(blob, (bytes, bytearray)) or not blob.startswith(_SNAP_MAGIC):
        raise FormatError("kvstore snapshot: bad magic")
    off = len(_SNAP_MAGIC)
    if len(blob) < off + 16:
        raise FormatError("kvstore snapshot: truncated header")
    nh, nb = struct.unpack_from("<QQ", blob, off)
    off += 16
    if len(blob) < off + nh + nb:
        raise FormatError("kvstore snapshot: truncated body")
    header = json.loads(bytes(blob[off:off + nh]).decode())
    arrays = load_raw(bytes(blob[off + nh:off + nh + nb])) if nb else {}
    if isinstance(arrays, list):
        arrays = {}
    return header, arrays, bytes(blob[off + nh + nb:])


def _dead_message(kind, culprits, mode="sync"):
    parts = [f"worker {r} ({why})" for r, why in sorted(culprits.items())]
    need = ("a barrier needs every worker, in dist_async too" if mode == "async"
            else "dist_sync needs every worker")
    return (f"{kind}: {', '.join(parts)} will never arrive; a worker died or left, so this "
            f"step cannot complete ({need})")


# ----------------------------------------------------------------------------- scheduler
class SchedulerImpl:
    """Job state shared by the workers and servers of one namespace (a Ray async actor)."""

    def __init__(self, config: dict):
        self.cfg = dict(config)
        self.mode = self.cfg.get("mode", "sync")
        self.heartbeats: dict = {}
        self.dead: dict = {}
        self.done: set = set()
        self.barriers: dict = {}
        self.snapshots: dict = {}
        self.optimizer = None
        self._changed = asyncio.Event()

    def _notify(self):
        self._changed.set()
        self._changed = asyncio.Event()

    async def get_config(self):
        return dict(self.cfg, mode=self.mode)

    async def set_mode(self, mode):
        self.mode = mode

    async def register(self, rank=None):
        """Register a worker; ``rank=None`` takes the lowest free rank."""
        n = self.cfg["num_workers"]
        if rank is None:
            free = [r for r in range(n) if r not in self.heartbeats]
            if not free:
                raise MXNetError(f"kvstore: all {n} worker ranks are taken (DMLC_NUM_WORKER={n})")
            rank = free[0]
        if not 0 <= rank < n:
            raise MXNetError(f"kvstore: worker rank {rank} out of range for "
                             f"DMLC_NUM_WORKER={n} (expected 0..{n - 1})")
        if rank in self.heartbeats and rank not in self.dead:
            raise MXNetError(f"kvstore: worker rank {rank} is already registered "
                             "(two workers with the same DMLC_TASK_ID?)")
        self.heartbeats[rank] = time.monotonic()
        self.dead.pop(rank, None)
        return rank

    async def heartbeat(self, rank):
        self.heartbeats[rank] = time.monotonic()

    async def mark_dead(self, rank, reason):
        """Record that worker ``rank`` is gone (launcher: its process exited)."""
        self.dead.setdefault(int(rank), str(reason))
        self._notify()

    async def worker_done(self, rank):
        """A worker closed its store; returns True when every worker has."""
        self.done.add(rank)
        self.dead.setdefault(rank, "closed its kvstore")
        self._notify()
        return len(self.done) >= self.cfg["num_workers"]

    async def dead_workers(self):
        """{rank: reason} of dead workers (marked, or silent longer than worker_timeout)."""
        out = dict(self.dead)
        limit = float(self.cfg.get("worker_timeout", 0) or 0)
        if limit > 0:
            now = time.monotonic()
            for r, t in self.heartbeats.items():
                if r not in out and now - t > limit:
                    out[r] = f"no heartbeat for {now - t:.1f}s, worker_timeout={limit:g}s"
        return out

    async def barrier(self, rank, gen):
        """Block until every worker reached barrier ``gen``."""
        n = self.cfg["num_workers"]
        arrived = self.barriers.setdefault(gen, set())
        arrived.add(rank)
        if len(arrived) >= n:
            self._notify()
        start = time.monotonic()
        limit = float(self.cfg.get("sync_timeout", 0) or 0)
        while len(arrived) < n:
            try:
                await asyncio.wait_for(self._changed.wait(), _POLL)
            except asyncio.TimeoutError:
                pass
            if len(arrived) >= n:
                break
            missing = set(range(n)) - arrived
            dead = await self.dead_workers()
            culprits = {r: dead[r] for r in missing if r in dead}
            if culprits:
                raise MXNetError(_dead_message(f"kvstore barrier {gen}", culprits, self.mode))
            if limit > 0 and time.monotonic() - start > limit:
                raise MXNetError(f"kvstore barrier {gen}: timed out after {limit:g}s "
                                 f"(sync_timeout) waiting for workers {sorted(missing)}")
        for old in [g for g in self.barriers if g < gen - 2]:
            del self.barriers[old]
        return True

    async def put_snapshot(self, server_id, blob):
        self.snapshots[server_id] = blob

    async def get_snapshot(self, server_id):
        return self.snapshots.get(server_id)

    async def set_optimizer(self, optimizer):
        self.optimizer = optimizer

    async def get_optimizer(self):
        return self.optimizer

    async def info(self):
        return {"mode": self.mode, "registered": sorted(self.heartbeats),
                "dead": dict(self.dead), "snapshots": sorted(self.snapshots)}


# ----------------------------------------------------------------------------- server
class _Key:
    """One key's rows held by this server."""

    __slots__ = ("stype", "value", "applied", "rounds")

    def __init__(self, stype, value):
        self.stype = stype
        self.value = value          # np.ndarray, or RSP holding every local row
        self.applied = 0            # last sync round applied
        self.rounds: dict = {}      # round -> {rank: raw or None (lost)}


def _merge(raws):
    """Sum the pushed values of one round (row_sparse stays row_sparse)."""
    raws = [r for r in raws if r is not None]
    return sum_raw(raws, copy=False) if raws else None


class ServerImpl:
    """A parameter-server shard (a Ray async actor; restarted by Ray when killed)."""

    def __init__(self, server_id: int, namespace: str, config: dict):
        self.sid = server_id
        self.ns = namespace
        self.cfg = dict(config)
        self.nw = int(self.cfg["num_workers"])
        self.keys: dict = {}
        self.updater = None
        self.mode = self.cfg.get("mode", "sync")
        self.n_updates = 0
        self.lost = 0
        self.restored = False
        self.lost_scheduler = None   # why the job cannot go on, once the scheduler is gone
        self._ready = False
        self._sched = None
        self._lock = asyncio.Lock()
        self._changed = asyncio.Event()

    # ------------------------------------------------------------------ lifecycle
    async def _ensure(self):
        """Connect to the scheduler and restore the last snapshot (after a restart)."""
        if self._ready:
            return
        async with self._lock:
            if self._ready:
                return
            import ray
            self._sched = ray.get_actor("scheduler", namespace=self.ns)
            self.mode = await self._sched.get_config.remote()
            self.mode = self.mode["mode"]
            blob = await self._sched.get_snapshot.remote(self.sid)
            with warnings.catch_warnings():   # Ray warns about its own internals here
                warnings.simplefilter("ignore")
                reconstructed = ray.get_runtime_context().was_current_actor_reconstructed
            if blob is not None:
                opt = await self._sched.get_optimizer.remote()
                self._restore(blob, opt)
            self.restored = bool(blob is not None or reconstructed)
            if self.restored:
                logger.warning("kvstore server %d restarted (pid %d); restored %s", self.sid,
                               os.getpid(), "its snapshot" if blob is not None else "nothing")
            self._ready = True

    def _restore(self, blob, optimizer):
        header, arrays, states = decode_snapshot(blob)
        self.n_updates = header["n_updates"]
        self.keys = {}
        for rec in header["keys"]:
            k = rec["key"]
            data = arrays[str(k)]
            if rec["stype"] == "row_sparse":
                data = st.RSP(data, np.arange(data.shape[0], dtype=np.int64), data.shape)
            e = _Key(rec["stype"], data)
            e.applied = rec["applied"]
            self.keys[k] = e
        if optimizer is not None:
            from ..optimizer import get_updater
            self.updater = get_updater(optimizer)
            if states:
                self.updater.set_states(states)   # states, optimizer scalars, update counts

    async def _snapshot(self):
        header = {"server": self.sid, "n_updates": self.n_updates,
                  "keys": [{"key": k, "stype": e.stype, "applied": e.applied}
                           for k, e in self.keys.items()]}
        arrays = {str(k): (e.value.data if isinstance(e.value, st.RSP) else e.value)
                  for k, e in self.keys.items()}
        states = b""
        if self.updater is not None:
            states = self.updater.get_states(dump_optimizer=True)
        try:
            await self._ask(self._sched.put_snapshot.remote(
                self.sid, encode_snapshot(header, arrays, states)))
        except MXNetError:
            pass   # said once by _ask; the workers' next pull raises it

    async def _ask(self, ref):
        """Await a scheduler call; the scheduler's death becomes one clear error, logged once
        and raised by this call and every later pull."""
        from ray.exceptions import RayActorError
        if self.lost_scheduler is None:
            try:
                return await ref
            except RayActorError:
                self.lost_scheduler = (
                    f"kvstore server {self.sid}: the job's scheduler died, so snapshots (fault "
                    "tolerance) and worker liveness are gone; the job cannot continue")
                logger.error("%s", self.lost_scheduler)
        raise MXNetError(self.lost_scheduler)

    def _notify(self):
        self._changed.set()
        self._changed = asyncio.Event()

    # ------------------------------------------------------------------ commands
    async def set_mode(self, mode):
        await self._ensure()
        self.mode = mode

    async def set_optimizer(self, optimizer):
        """Install an updater running ``optimizer`` (sent in-process by Ray, never a file)."""
        await self._ensure()
        from ..optimizer import get_updater
        self.updater = get_updater(optimizer)
        await self._snapshot()

    async def get_states(self):
        """The updater's states as sparsym's pickle-free container (None without updater)."""
        await self._ensure()
        if self.updater is None:
            return None
        return self.updater.get_states(dump_optimizer=True)

    async def set_states(self, blob):
        await self._ensure()
        if self.updater is None:
            raise MXNetError("load_optimizer_states: call set_optimizer first (the servers "
                             "have no updater)")
        self.updater.set_states(blob)
        await self._snapshot()

    async def info(self):
        await self._ensure()
        return {"pid": os.getpid(), "restored": self.restored, "n_updates": self.n_updates,
                "lost": self.lost, "mode": self.mode,
                "applied": {k: e.applied for k, e in self.keys.items()}}

    # ------------------------------------------------------------------ data
    async def init(self, items):
        """Set initial values: ``items`` is a list of (key, stype, raw dense rows)."""
        await self._ensure()
        for k, stype, data in items:
            data = np.array(data, copy=True)
            if stype == "row_sparse":
                data = st.RSP(data, np.arange(data.shape[0], dtype=np.int64), data.shape)
            self.keys[k] = _Key(stype, data)
        await self._snapshot()

    def _entry(self, k):
        e = self.keys.get(k)
        if e is None:
            raise MXNetError(f"key {k} has not been inited")
        return e

    def _decode(self, e, payload):
        kind = payload[0]
        shape = e.value.shape
        if kind == "dense":
            raw = np.asarray(payload[1])
        elif kind == "2bit":
            raw = decode_payload(payload)
        elif kind == "rsp":
            data, idx = np.asarray(payload[1]), np.asarray(payload[2], dtype=np.int64)
            if data.shape[1:] != tuple(shape[1:]) or (len(idx) and idx[-1] >= shape[0]):
                raise MXNetError(f"kvstore push: row_sparse value with rows {data.shape} does "
                                 f"not fit the stored shard of shape {shape}")
            return st.RSP(data, idx, shape)
        else:
            raise MXNetError(f"kvstore push: unknown payload kind {kind!r}")
        if raw.shape != tuple(shape):
            raise MXNetError(f"kvstore push: value of shape {raw.shape} does not match the "
                             f"stored shape {tuple(shape)}")
        return raw

    def _apply(self, k, e, merged):
        """Run the updater (or replace the value, without one) with a merged push."""
        from ..ndarray.ndarray import wrap
        if self.updater is None:
            if e.stype == "row_sparse":
                data = np.zeros(e.value.shape, dtype=e.value.data.dtype)
                if isinstance(merged, st.RSP):
                    data[merged.indices] = merged.data
                else:
                    data[...] = merged
                e.value = st.RSP(data, e.value.indices, e.value.shape)
            else:
                e.value[...] = st.todense(merged)
        else:
            w = wrap(e.value)
            self.updater(k, wrap(merged), w)
            e.value = w._raw
        self.n_updates += 1

    async def push(self, k, rank, rnd, payload):
        """Add one worker's push; returns once it is accumulated (sync) or applied (async)."""
        await self._ensure()
        e = self._entry(k)
        raw = self._decode(e, payload)
        before = self.n_updates
        if self.mode == "async":
            if self.updater is None:
                raise MXNetError("Updater needs to be set for async mode")
            self._apply(k, e, raw)
        else:
            if rnd <= e.applied:
                return False   # a retried push of a round already applied (or snapshotted)
            contrib = e.rounds.setdefault(rnd, {})
            if rank in contrib:
                return False
            contrib[rank] = raw
            self._apply_ready(k, e)
        await self._after_updates(before)
        return True

    def _apply_ready(self, k, e):
        applied = False
        while len(e.rounds.get(e.applied + 1, ())) >= self.nw:
            contrib = e.rounds.pop(e.applied + 1)
            merged = _merge([contrib[r] for r in sorted(contrib)])
            if merged is not None:
                self._apply(k, e, merged)
            e.applied += 1
            applied = True
        if applied:
            self._notify()

    async def _after_updates(self, before):
        every = int(self.cfg.get("snapshot_interval", 0) or 0)
        if every > 0 and self.n_updates // every != before // every:
            await self._snapshot()

    async def _wait(self, k, e, rank, need, deps):
        """Wait until this worker's pushes ``deps`` count: sync mode, until round ``need`` of
        key ``k`` is applied; async mode, until they are applied (read your own writes)."""
        if self.lost_scheduler is not None:
            raise MXNetError(self.lost_scheduler)
        if self.mode != "sync":
            await _settle(deps)
            return
        if e.applied >= need:
            return
        if self.restored and any(rank not in e.rounds.get(q, ())
                                 for q in range(e.applied + 1, need + 1)):
            # once the caller's pushes have completed, a contribution still missing reached
            # a dead incarnation and was lost with it: count it as empty
            await _settle(deps)
            before = self.n_updates
            for q in range(e.applied + 1, need + 1):
                contrib = e.rounds.setdefault(q, {})
                if rank not in contrib:
                    contrib[rank] = None
                    self.lost += 1
            self._apply_ready(k, e)
            await self._after_updates(before)
        start = time.monotonic()
        limit = float(self.cfg.get("sync_timeout", 0) or 0)
        settle = None
        while e.applied < need:
            try:
                await asyncio.wait_for(self._changed.wait(), _POLL)
            except asyncio.TimeoutError:
                pass
            if e.applied >= need:
                break
            if settle is None:
                settle = asyncio.ensure_future(_settle(deps))
            elif settle.done() and settle.exception() is not None:
                raise settle.exception()     # this worker's own push failed
            missing = set(range(self.nw)) - set(e.rounds.get(e.applied + 1, ()))
            dead = await self._ask(self._sched.dead_workers.remote())
            culprits = {r: dead[r] for r in missing if r in dead}
            if culprits:
                raise MXNetError(_dead_message(f"dist_sync pull of key {k} (round "
                                               f"{e.applied + 1}) on server {self.sid}",
                                               culprits))
            if limit > 0 and time.monotonic() - start > limit:
                raise MXNetError(f"dist_sync pull of key {k} on server {self.sid}: timed out "
                                 f"after {limit:g}s (sync_timeout) waiting for the pushes of "
                                 f"workers {sorted(missing)}")

    async def pull(self, k, rank, need, deps=()):
        """Dense copy of the stored rows once this worker's pushes count (see _wait).

        ``deps`` are the caller's pending push results (object refs, not awaited by Ray).
        """
        await self._ensure()
        e = self._entry(k)
        await self._wait(k, e, rank, need, deps)
        return np.array(st.todense(e.value), copy=True)

    async def row_sparse_pull(self, k, rank, need, ids, deps=()):
        """Rows ``ids`` (local, sorted, unique) of a row_sparse key."""
        await self._ensure()
        e = self._entry(k)
        if e.stype != "row_sparse":
            raise MXNetError("PullRowSparse expects row_sparse src NDArray")
        await self._wait(k, e, rank, need, deps)
        ids = np.asarray(ids, dtype=np.int64)
        return e.value.data[ids]


def unwrap_error(err):
    """The original exception inside (nested) Ray task errors."""
    from ray.exceptions import RayTaskError
    while isinstance(err, RayTaskError) and getattr(err, "cause", None) is not None:
        err = err.cause
    if isinstance(err, MXNetError) and type(err).__module__.startswith("ray"):
        base = next(c for c in type(err).__mro__ if issubclass(c, MXNetError)
                    and not c.__module__.startswith("ray"))
        err = base(str(err))
    return err


async def _settle(deps):
    """Wait for push results; a failed push raises its own error."""
    if not deps:
        return
    try:
        await asyncio.gather(*deps)
    except Exception as err:
        raise unwrap_error(err) from None


_ACTORS: dict = {}


def actor_classes():
    """The Ray actor classes (built on first use so importing this module needs no Ray)."""
    if not _ACTORS:
        import ray
        _ACTORS["scheduler"] = ray.remote(num_cpus=0)(SchedulerImpl)
        _ACTORS["server"] = ray.remote(num_cpus=0)(ServerImpl)
    return _ACTORS
