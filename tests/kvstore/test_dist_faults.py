"""Faults on a real local Ray cluster: a killed server restores its snapshot; a dead worker
makes the others fail (never hang)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError


def _train(kv, keys, steps, start):
    for step in range(start, start + steps):
        kv.push(keys[0], mx.nd.ones((6, 2)) * (kv.rank + 1) * (step + 1))
        kv.push(keys[1], mx.nd.sparse.row_sparse_array(
            (np.full((2, 2), kv.rank + 1.0, np.float32), [step % 6, 10 + kv.rank]), shape=(12, 2)))
        out = mx.nd.zeros((6, 2))
        kv.pull(keys[0], out=out)
    w = mx.nd.sparse.zeros("row_sparse", (12, 2))
    kv.row_sparse_pull(keys[1], out=w, row_ids=mx.nd.arange(0, 12))
    return out.asnumpy(), w.asnumpy()


def _reference(steps):
    """The same pushes through a local store (sum of both workers' values)."""
    kv = mx.kv.create("local")
    kv.init([0, 1], [mx.nd.zeros((6, 2)), mx.nd.zeros((12, 2)).tostype("row_sparse")])
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.5))
    for step in range(steps):
        kv.push(0, [mx.nd.ones((6, 2)) * (r + 1) * (step + 1) for r in range(2)])
        kv.push(1, [mx.nd.sparse.row_sparse_array((np.full((2, 2), r + 1.0, np.float32),
                                                   [step % 6, 10 + r]), shape=(12, 2))
                    for r in range(2)])
    a, b = mx.nd.zeros((6, 2)), mx.nd.zeros((12, 2))
    kv.pull([0, 1], out=[a, b])
    return a.asnumpy(), b.asnumpy()


def test_killed_server_restores_its_snapshot_and_training_finishes(jobs, run):
    """Server 1 (holding a split key's rows) is killed between steps; Ray restarts it, it
    restores its snapshot (taken after every update here) and the result is unchanged."""
    import ray
    group, kvs = jobs.make(2, 2, snapshot_interval=1, bigarray_bound=10)
    keys = [0, 1]

    def work(kv):
        kv.init(keys, [mx.nd.zeros((6, 2)), mx.nd.zeros((12, 2)).tostype("row_sparse")])
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.5))
        _train(kv, keys, 3, 0)
        kv._barrier()
        if kv.rank == 0:
            pid = ray.get(group.servers[1].info.remote())["pid"]
            ray.kill(group.servers[1], no_restart=False)
            kv._killed_pid = pid
            # ray.kill is asynchronous: wait for the new incarnation, so that no push of the
            # next steps reaches the dying one (that case is the mid-round test below)
            while ray.get(group.servers[1].info.remote())["pid"] == pid:
                time.sleep(0.05)
        kv._barrier()
        return _train(kv, keys, 3, 3)

    got = run(work, kvs)
    info = ray.get(group.servers[1].info.remote())
    assert info["restored"] and info["pid"] != kvs[0]._killed_pid
    want = _reference(6)
    for dense, rows in got:
        np.testing.assert_allclose(dense, want[0], rtol=1e-5)
        np.testing.assert_allclose(rows, want[1], rtol=1e-5)

    # a kill while pushes are in flight (key 5 lives on server 0, snapshot every update):
    # the job still finishes and the workers agree; at most the unfinished round is lost
    def mid_round(kv):
        kv.init(5, mx.nd.zeros((4,)))
        out = mx.nd.zeros((4,))
        for step in range(8):
            if step == 4 and kv.rank == 1:
                ray.kill(group.servers[0], no_restart=False)
            kv.push(5, mx.nd.ones((4,)))
            kv.pull(5, out=out)
        kv._barrier()
        kv.pull(5, out=out)
        return out.asnumpy()

    a, b = run(mid_round, kvs)
    np.testing.assert_array_equal(a, b)
    # lr 0.1, momentum 0.5, grad 2 per round: 8 full rounds reach w8; a lost round only
    # shrinks the travelled distance
    w, m = 0.0, 0.0
    for _ in range(8):
        m = 0.5 * m - 0.1 * 2
        w += m
    assert w - 1e-5 <= a[0] < 0
    assert ray.get(group.servers[0].info.remote())["restored"]


def test_dead_worker_fails_the_others_within_the_timeout(jobs, run):
    """Worker 1 goes silent (no heartbeat, no push): worker 0's sync pull raises a clear
    error naming it after ~worker_timeout instead of waiting forever."""
    group, kvs = jobs.make(2, 1, worker_timeout=3.0)

    def work(kv):
        kv.init(0, mx.nd.zeros((3,)))
        if kv.rank == 1:
            kv._stop_heartbeat()          # as if its process had been killed
            return None
        kv.push(0, mx.nd.ones((3,)))
        t0 = time.monotonic()
        with pytest.raises(MXNetError, match=r"worker 1 \(no heartbeat for") as info:
            kv.pull(0, out=mx.nd.zeros((3,)))
        return time.monotonic() - t0, str(info.value)

    (waited, msg), _ = run(work, kvs, timeout=60)
    assert "dist_sync needs every worker" in msg
    with pytest.raises(MXNetError, match=r"kvstore barrier .*worker 1 \(no heartbeat"):
        kvs[0]._barrier()
    group.mark_dead(1, "its process was killed by signal 9")   # what the launcher reports
    with pytest.raises(MXNetError, match=r"worker 1 \(its process was killed by signal 9\)"):
        kvs[0]._barrier()


def test_dead_worker_in_dist_async_names_the_barrier_not_dist_sync(jobs, run):
    """In dist_async only barriers wait for every worker; the error says so."""
    group, kvs = jobs.make(2, 1, kv_type="dist_async", worker_timeout=3.0)

    def work(kv):
        kv.init(0, mx.nd.zeros((3,)))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))   # async needs an updater
        if kv.rank == 1:
            kv._stop_heartbeat()
            return None
        kv.push(0, mx.nd.ones((3,)))          # async: no wait for worker 1
        kv.pull(0, out=mx.nd.zeros((3,)))
        with pytest.raises(MXNetError, match=r"kvstore barrier .*worker 1") as info:
            kv._barrier()
        return str(info.value)

    msg, _ = run(work, kvs, timeout=60)
    assert "dist_sync" not in msg and "in dist_async too" in msg
