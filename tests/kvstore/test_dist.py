"""dist_sync / dist_async on a real local Ray cluster (in-process workers, one per thread)."""
from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError
from sparsym.kvstore import compression as comp

DENSE, BIG, RSP = (3, 4), (40, 3), (50, 2)


def _rsp(dense):
    return mx.nd.array(dense).tostype("row_sparse")


def _grads(rank, step, rng_seed=7):
    """Worker ``rank``'s gradients at ``step``: dense, big dense (split), row_sparse rows."""
    rng = np.random.default_rng(rng_seed + 100 * rank + step)
    g_rsp = np.zeros(RSP, np.float32)
    rows = rng.choice(RSP[0], 6, replace=False)
    g_rsp[rows] = rng.standard_normal((6, RSP[1]))
    return (rng.standard_normal(DENSE).astype(np.float32),
            rng.standard_normal(BIG).astype(np.float32), g_rsp)


def _init_values():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in (DENSE, BIG, RSP)]


def _sgd():
    return mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)


def test_sync_without_optimizer_replaces_and_sums(run, sync_pair):
    """No updater: a round's summed push replaces the value (row_sparse: other rows -> 0)."""
    _, kvs = sync_pair

    def work(kv):
        kv.init(1, mx.nd.ones((2, 2)))
        kv.init(2, _rsp(np.ones((5, 2), np.float32)))
        kv.push(1, mx.nd.ones((2, 2)) * (kv.rank + 1))
        kv.push(2, mx.nd.sparse.row_sparse_array((np.full((1, 2), kv.rank + 1.0), [kv.rank]),
                                                 shape=(5, 2)))
        out = mx.nd.zeros((2, 2))
        kv.pull(1, out=out)
        dense_e = mx.nd.zeros((5, 2))
        kv.pull(2, out=dense_e)     # a row_sparse key pulled into a dense array: all rows
        return out.asnumpy(), dense_e.asnumpy()

    for w, e in run(work, kvs):
        np.testing.assert_array_equal(w, 3)
        np.testing.assert_array_equal(e, [[1, 1], [2, 2], [0, 0], [0, 0], [0, 0]])
    assert kvs[0].rank == 0 and kvs[1].rank == 1 and kvs[0].num_workers == 2
    assert kvs[0].type == "dist_sync" and kvs[0].num_servers == 2


def test_row_sparse_pull_random_ids(run, sync_pair):
    """Random 2-D float ids with repeats: deduplicated and sorted, over a split key."""
    rng = np.random.default_rng(3)
    value = rng.standard_normal((30, 4)).astype(np.float32)
    _, kvs = sync_pair

    def work(kv):
        kv.init(3, _rsp(value))
        outs = []
        for trial in range(3):
            ids = np.random.default_rng(trial + 10 * kv.rank).integers(0, 30, size=(2, 7))
            out = mx.nd.sparse.zeros("row_sparse", (30, 4))
            kv.row_sparse_pull(3, out=out, row_ids=mx.nd.array(ids.astype(np.float32)))
            outs.append((ids, out))
        empty = mx.nd.sparse.zeros("row_sparse", (30, 4))
        kv.row_sparse_pull(3, out=empty, row_ids=mx.nd.array([], dtype="int64"))
        two = [mx.nd.sparse.zeros("row_sparse", (30, 4)) for _ in range(2)]
        kv.row_sparse_pull(3, out=two, row_ids=[mx.nd.array([29, 0]), mx.nd.array([5])])
        return outs, empty, two

    for outs, empty, two in run(work, kvs):
        for ids, out in outs:
            want = np.unique(ids)
            np.testing.assert_array_equal(out.indices.asnumpy(), want)
            np.testing.assert_array_equal(out.data.asnumpy(), value[want])
        assert empty.indices.shape == (0,) and empty.asnumpy().sum() == 0
        np.testing.assert_array_equal(two[0].indices.asnumpy(), [0, 29])
        np.testing.assert_array_equal(two[1].data.asnumpy(), value[[5]])


def test_two_bit_compressed_push(run, sync_pair):
    """2 workers push compressed dense grads; the servers sum the dequantized values."""
    t = 0.5
    _, kvs = sync_pair
    grads = [np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2) * (r + 1) for r in range(2)]

    def work(kv):
        kv.set_gradient_compression({"type": "2bit", "threshold": t})
        kv.init(4, mx.nd.zeros((8, 2)))
        outs = []
        for _ in range(2):
            kv.push(4, mx.nd.array(grads[kv.rank]))
            out = mx.nd.zeros((8, 2))
            kv.pull(4, out=out)
            outs.append(out.asnumpy())
        kv.set_gradient_compression({"type": "none"})
        return outs

    got = run(work, kvs)
    want = []
    residuals = [np.zeros((8, 2), np.float32) for _ in range(2)]
    for _ in range(2):
        total = sum(comp.dequantize_2bit(comp.quantize_2bit(grads[r], residuals[r], t), 16, t)
                    for r in range(2))
        want.append(total.reshape(8, 2))   # no updater: the round's sum replaces the value
    for outs in got:
        for a, b in zip(outs, want):
            np.testing.assert_allclose(a, b)
    assert not np.allclose(want[0], want[1])   # the residual changed the second push


def test_errors_and_sparse_pull_rules(run, sync_pair, caplog):
    _, kvs = sync_pair

    def work(kv):
        kv.init([5, 6], [mx.nd.ones((4, 2)), _rsp(np.ones((4, 2), np.float32))])
        with pytest.raises(MXNetError, match="duplicate init of key 5"):
            kv.init(5, mx.nd.ones((4, 2)))
        with pytest.raises(MXNetError, match="key 99 has not been inited"):
            kv.push(99, mx.nd.ones((4, 2)))
        with pytest.raises(MXNetError, match="Mixed key types are not allowed"):
            kv.init("a", mx.nd.ones((1,)))
        with pytest.raises(MXNetError, match="PullRowSparse expects row_sparse src NDArray"):
            kv.row_sparse_pull(5, out=mx.nd.sparse.zeros("row_sparse", (4, 2)), row_ids=[0])
        with pytest.raises(MXNetError, match="Expected row_sparse storage type"):
            kv.row_sparse_pull(6, out=mx.nd.zeros((4, 2)), row_ids=[0])
        with pytest.raises(MXNetError, match="ignore_sparse=False"):
            kv.pull(5, out=mx.nd.zeros((4, 2)), ignore_sparse=False)
        with pytest.raises(MXNetError, match="value shape"):
            kv.push(5, mx.nd.ones((3, 2)))
        with pytest.raises(MXNetError, match="dense values only"):
            kv.pushpull(6, _rsp(np.ones((4, 2), np.float32)))
        out = mx.nd.sparse.zeros("row_sparse", (4, 2))
        kv.pull(6, out=out)     # skipped, with MXNet's warning
        dst = mx.nd.zeros((4, 2))
        kv.broadcast(7, mx.nd.ones((4, 2)) * (7 + kv.rank), out=dst)   # rank 0's value wins
        return out.indices.shape, dst.asnumpy()

    with caplog.at_level(logging.WARNING, logger="sparsym"):
        got = run(work, kvs)
    assert "non-default weights detected during kvstore pull" in caplog.text
    for shape, dst in got:
        assert shape == (0,)
        np.testing.assert_array_equal(dst, 7)


def test_sync_reproduces_local_store(run, sync_pair):
    """dense / split dense / split row_sparse keys, SGD + momentum + wd, 2 workers: the
    result equals a local store fed with the sum of both workers' gradients."""
    steps = 4
    init = _init_values()
    _, kvs = sync_pair
    keys = [30, 31, 32]

    def work(kv):
        kv.init(keys, [mx.nd.array(init[0]), mx.nd.array(init[1]), _rsp(init[2])])
        kv.set_optimizer(_sgd())
        for step in range(steps):
            g = _grads(kv.rank, step)
            kv.push(keys[:2], [mx.nd.array(g[0]), mx.nd.array(g[1])])
            kv.push(keys[2], _rsp(g[2]))
            outs = [mx.nd.zeros(DENSE), mx.nd.zeros(BIG)]
            kv.pull(keys[:2], out=outs)
        w = mx.nd.sparse.zeros("row_sparse", RSP)
        kv.row_sparse_pull(keys[2], out=w, row_ids=mx.nd.arange(0, RSP[0]))
        return [o.asnumpy() for o in outs] + [w.asnumpy()]

    got = run(work, kvs)

    ref = mx.kv.create("local")
    ref.init(keys, [mx.nd.array(init[0]), mx.nd.array(init[1]), _rsp(init[2])])
    ref.set_optimizer(_sgd())
    for step in range(steps):
        g0, g1 = _grads(0, step), _grads(1, step)
        ref.push(keys[:2], [[mx.nd.array(g0[0]), mx.nd.array(g1[0])],
                            [mx.nd.array(g0[1]), mx.nd.array(g1[1])]])
        ref.push(keys[2], [_rsp(g0[2]), _rsp(g1[2])])
    want = [mx.nd.zeros(DENSE), mx.nd.zeros(BIG), mx.nd.zeros(RSP)]
    ref.pull(keys, out=want)
    for rank in range(2):
        for a, b in zip(got[rank], want):
            np.testing.assert_allclose(a, b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_save_load_optimizer_states_across_split_keys(run, sync_pair, tmp_path):
    """States of keys split over 2 servers are gathered into one file and restored."""
    init = np.arange(24, dtype=np.float32).reshape(12, 2)
    _, kvs = sync_pair
    fname = str(tmp_path / "kv.states")
    ones = np.ones((12, 2), np.float32)

    def work(kv):
        kv.init([40, 41], [mx.nd.array(init), _rsp(init)])
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        for _ in range(2):
            kv.push([40, 41], [mx.nd.array(ones), _rsp(ones)])
        kv._barrier()
        if kv.rank == 0:
            kv.save_optimizer_states(fname, dump_optimizer=True)
        kv._barrier()
        kv.push([40, 41], [mx.nd.array(ones), _rsp(ones)])
        kv._barrier()    # a quiescent point (as Module's init): no round in flight
        kv.load_optimizer_states(fname)            # rank 0 sends: back to the saved m
        kv.push(40, mx.nd.zeros((12, 2)))          # w += 0.9 * m
        a, b = mx.nd.zeros((12, 2)), mx.nd.zeros((12, 2))
        kv.pull(40, out=a)
        kv.push(40, mx.nd.zeros((12, 2)))
        kv.pull(40, out=b)
        return b.asnumpy() - a.asnumpy()

    got = run(work, kvs)
    from sparsym.optimizer.states import loads_states
    with open(fname, "rb") as f:
        states, opt = loads_states(f.read())
    # both workers push ones: g = 2; m = 0.9*(-0.2) - 0.2 = -0.38 on every row
    idx = {k: kvs[0]._layout(k).idx for k in (40, 41)}
    np.testing.assert_allclose(states[idx[40]].asnumpy(), -0.38, rtol=1e-5)
    np.testing.assert_allclose(states[idx[41]].asnumpy(), -0.38, rtol=1e-5)
    assert opt is not None      # dump_optimizer=True keeps the settings
    for diff in got:
        np.testing.assert_allclose(diff, 0.9 * 0.9 * -0.38, rtol=1e-4)


def _logreg_data(n=600, dim=200, nnz=8, seed=0):
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(dim)
    cols = np.stack([rng.choice(dim, nnz, replace=False) for _ in range(n)])
    vals = rng.standard_normal((n, nnz))
    logits = (vals * w_true[cols]).sum(1)
    y = (logits > 0).astype(np.float64)
    return cols, vals, y


def _logloss(w, cols, vals, y):
    p = 1 / (1 + np.exp(-(vals * w[cols]).sum(1)))
    return float(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))


def test_async_converges_on_sparse_logistic_regression(jobs):
    cols, vals, y = _logreg_data()
    dim, batch = 200, 20
    _, kvs = jobs.make(2, 2, kv_type="dist_async", bigarray_bound=100)

    def work(kv):
        kv.init(["probe", "w"], [mx.nd.ones((2,)), mx.nd.sparse.zeros("row_sparse", (dim, 1))])
        if kv.rank == 0:
            kv.push("probe", mx.nd.ones((2,)))
            with pytest.raises(MXNetError, match="Updater needs to be set for async mode"):
                kv.pull("probe", out=mx.nd.zeros((2,)))
        kv._barrier()
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=4.0, rescale_grad=1.0 / batch))
        kv._barrier()
        mine = np.arange(kv.rank, len(y), 2)
        for _ in range(2):
            for start in range(0, len(mine), batch):
                rows = mine[start:start + batch]
                c, v, t = cols[rows], vals[rows], y[rows]
                need = np.unique(c)
                w = mx.nd.sparse.zeros("row_sparse", (dim, 1))
                kv.row_sparse_pull("w", out=w, row_ids=mx.nd.array(need, dtype="int64"))
                dense = np.zeros(dim)
                dense[need] = w.data.asnumpy()[:, 0]
                err = 1 / (1 + np.exp(-(v * dense[c]).sum(1))) - t
                grad = np.zeros(dim)
                np.add.at(grad, c.ravel(), (v * err[:, None]).ravel())
                kv.push("w", mx.nd.sparse.row_sparse_array(
                    (grad[need][:, None].astype(np.float32), need), shape=(dim, 1)))
        kv._barrier()
        full = mx.nd.sparse.zeros("row_sparse", (dim, 1))
        kv.row_sparse_pull("w", out=full, row_ids=mx.nd.arange(0, dim))
        return full.asnumpy()[:, 0]

    w0, w1 = jobs.run_workers(work, kvs)
    np.testing.assert_array_equal(w0, w1)
    assert _logloss(np.zeros(dim), cols, vals, y) == pytest.approx(np.log(2))
    assert _logloss(w0, cols, vals, y) < 0.35
    assert kvs[0].type == "dist_async"


def test_two_bit_quantization_with_residual():
    """quantize_2bit: +t / -t / 0 codes; what is not sent stays in the residual."""
    t = 0.5
    g = np.array([0.6, -0.7, 0.2, 0.0, 1.4, -0.5, 0.49], np.float32)
    res = np.zeros_like(g)
    packed = comp.quantize_2bit(g, res, t)
    assert packed.dtype == np.uint8 and packed.size == 2
    sent = comp.dequantize_2bit(packed, g.size, t)
    np.testing.assert_allclose(sent, [0.5, -0.5, 0, 0, 0.5, -0.5, 0])
    np.testing.assert_allclose(res, g - sent, atol=1e-7)
    sent2 = comp.dequantize_2bit(comp.quantize_2bit(g, res, t), g.size, t)
    np.testing.assert_allclose(sent2, [0.5, -0.5, 0, 0, 0.5, -0.5, 0.5])
    with pytest.raises(MXNetError, match="Unknown type for gradient compression"):
        comp.create_compressor({"type": "1bit"})
    with pytest.raises(MXNetError, match="threshold must be > 0"):
        comp.create_compressor({"type": "2bit", "threshold": 0})


def test_ray_missing_says_how_to_install(monkeypatch):
    from sparsym.kvstore import dist
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MXNetError, match=r"pip install sparsym\[dist\]"):
        dist.import_ray()


def test_dmlc_role_server_exits_and_bad_role(monkeypatch):
    monkeypatch.setenv("DMLC_ROLE", "server")
    with pytest.raises(SystemExit) as info:
        mx.kv.create("dist_sync")
    assert info.value.code == 0
    monkeypatch.setenv("DMLC_ROLE", "boss")
    with pytest.raises(MXNetError, match="DMLC_ROLE='boss'"):
        mx.kv.create("dist_sync")


def test_standalone_worker_starts_its_own_job(ray_address, monkeypatch):
    """No launcher: kv.create('dist_device_sync') makes a one-worker job in this process."""
    from sparsym.kvstore import dist
    for var in ("SPARSYM_KVSTORE_NAMESPACE", "DMLC_NUM_WORKER", "DMLC_TASK_ID", "DMLC_ROLE"):
        monkeypatch.delenv(var, raising=False)
    kv = mx.kv.create("dist_device_sync")
    try:
        assert (kv.type, kv.rank, kv.num_workers) == ("dist_device_sync", 0, 1)
        kv.init("x", mx.nd.ones((3,)))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
        kv.push("x", mx.nd.ones((3,)))
        out = mx.nd.zeros((3,))
        kv.pull("x", out=out)
        np.testing.assert_allclose(out.asnumpy(), 0.5)
        monkeypatch.setenv("DMLC_NUM_WORKER", "2")
        with pytest.raises(MXNetError, match="DMLC_NUM_WORKER=2 but no job namespace"):
            mx.kv.create("dist_sync")
    finally:
        kv._detach()
        dist._OWN_GROUP.pop().shutdown()
