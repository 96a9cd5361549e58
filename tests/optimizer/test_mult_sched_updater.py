"""lr/wd multipliers, learning-rate schedulers and Updater states (no pickle)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError


def _sym():
    x = mx.sym.Variable("data")
    w = mx.sym.Variable("fc_weight", lr_mult=2.0, wd_mult=0.5)
    b = mx.sym.Variable("fc_bias")
    emb = mx.sym.Variable("emb", wd_mult=3.0)
    return mx.sym.broadcast_add(mx.sym.dot(x, w) + mx.sym.dot(x, emb), b)


def test_multipliers_from_symbol_attrs_and_names():
    idx2name = {0: "fc_weight", 1: "fc_bias", 2: "emb", 3: "other_gamma", 4: "plain"}
    opt = mx.optimizer.create("sgd", learning_rate=0.1, wd=0.01, sym=_sym(),
                              param_idx2name=idx2name)
    assert opt._get_lr(0) == pytest.approx(0.2)
    assert opt._get_lr(1) == pytest.approx(0.1)
    assert opt._get_wd(0) == pytest.approx(0.005)
    assert opt._get_wd(1) == 0.0  # MXNet: not *_weight / *_gamma -> wd_mult 0
    assert opt._get_wd(2) == pytest.approx(0.03)  # explicit __wd_mult__ wins
    assert opt._get_wd(3) == pytest.approx(0.01)
    assert opt._get_wd(4) == 0.0
    opt.set_lr_mult({"fc_bias": 5.0})
    opt.set_wd_mult({"plain": 1.0})
    assert opt._get_lr(1) == pytest.approx(0.5)
    assert opt._get_lr(0) == pytest.approx(0.2)  # symbol attribute kept
    assert opt._get_wd(4) == pytest.approx(0.01)
    # by index (MXNet's backward-compatible form)
    opt.set_lr_mult({7: 0.0})
    assert opt._get_lr(7) == 0.0


def test_multipliers_reach_the_update():
    opt = mx.optimizer.create("sgd", learning_rate=1.0, wd=0.5, param_idx2name={0: "a_weight",
                                                                                  1: "a_bias"})
    opt.set_lr_mult({"a_weight": 0.1})
    w, b = mx.nd.ones((2,)), mx.nd.ones((2,))
    opt.update(0, w, mx.nd.zeros((2,)), None)
    opt.update(1, b, mx.nd.zeros((2,)), None)
    np.testing.assert_allclose(w.asnumpy(), 1 - 0.1 * 0.5)
    np.testing.assert_allclose(b.asnumpy(), 1.0)  # bias: no weight decay


# --------------------------------------------------------------------------- schedulers
def test_factor_scheduler():
    s = mx.lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=1.0, stop_factor_lr=0.1)
    got = [s(n) for n in range(1, 16)]
    exp = [1.0 * 0.5 ** max(0, (n - 1) // 3) for n in range(1, 16)]
    np.testing.assert_allclose(got, np.maximum(exp, 0.1))


def test_multifactor_scheduler():
    s = mx.lr_scheduler.MultiFactorScheduler(step=[2, 5], factor=0.1, base_lr=1.0)
    np.testing.assert_allclose([s(n) for n in (1, 2, 3, 5, 6, 9)],
                               [1, 1, 0.1, 0.1, 0.01, 0.01])
    with pytest.raises(ValueError, match="increasing"):
        mx.lr_scheduler.MultiFactorScheduler(step=[3, 2])


def test_poly_and_cosine_schedulers_with_warmup():
    p = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1,
                                      warmup_steps=2, warmup_begin_lr=0.5)
    assert p(0) == pytest.approx(0.5) and p(1) == pytest.approx(0.75)
    for n in (2, 5, 10):
        assert p(n) == pytest.approx(0.1 + 0.9 * (1 - (n - 2) / 8) ** 2)
    assert p(20) == pytest.approx(0.1)
    c = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=2.0, final_lr=0.0)
    for n in (0, 3, 10):
        assert c(n) == pytest.approx(2.0 * (1 + math.cos(math.pi * n / 10)) / 2)


def test_scheduler_drives_optimizer_lr():
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.create("sgd", lr_scheduler=sched)
    w = mx.nd.zeros((1,))
    for _ in range(3):
        opt.update(0, w, mx.nd.ones((1,)), None)
    # updates 1, 2, 3 use lr 1, 0.5, 0.25
    np.testing.assert_allclose(w.asnumpy(), [-1.75])
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.1)


# --------------------------------------------------------------------------- updater
@pytest.mark.parametrize("name,extra", [("adam", {}), ("sgd", dict(momentum=0.9)),
                                        ("rmsprop", dict(centered=True)), ("ftrl", {})])
def test_updater_states_round_trip(name, extra):
    def run(upd, w, steps):
        r = np.random.RandomState(9)
        for _ in range(steps):
            g = r.randn(6, 2).astype(np.float32)
            upd(0, mx.nd.sparse.row_sparse_array((g[[1, 3]], [1, 3]), shape=(6, 2)), w)
            upd(1, mx.nd.array(g[0]), wb)

    w = mx.nd.ones((6, 2)).tostype("row_sparse")
    wb = mx.nd.ones((2,))
    upd = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **extra))
    run(upd, w, 3)
    blob = upd.get_states(dump_optimizer=True)
    assert isinstance(blob, bytes) and not blob.startswith(b"\x80")  # not a pickle
    upd2 = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **extra))
    upd2.set_states(blob)
    assert upd2.optimizer._index_update_count == upd.optimizer._index_update_count
    w2, wb_saved = w.copy(), wb.copy()
    run(upd, w, 2)
    wb, wb_a = wb_saved, wb
    run(upd2, w2, 2)
    np.testing.assert_allclose(w2.asnumpy(), w.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(wb.asnumpy(), wb_a.asnumpy(), rtol=1e-6)


def test_updater_set_states_rejects_garbage():
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    with pytest.raises(FormatError, match="bad magic"):
        upd.set_states(b"garbage")
    with pytest.raises(FormatError, match="not a readable pickle"):
        upd.set_states(b"\x80\x04garbage")


def test_updater_counts_per_device():
    opt = mx.optimizer.create("adam")
    upd = mx.optimizer.get_updater(opt)
    a0 = mx.nd.ones((2,), ctx=mx.cpu(0))
    a1 = mx.nd.ones((2,), ctx=mx.cpu(1))
    upd(0, mx.nd.ones((2,)), a0)
    upd(0, mx.nd.ones((2,), ctx=mx.cpu(1)), a1)
    assert opt._all_index_update_counts[0][0] == 1
    assert opt._all_index_update_counts[1][0] == 1


def test_updater_groups_tensors_as_mxnet_does(monkeypatch):
    """MXNet's Updater hands an optimizer with aggregate_num > 0 (SGD: 4) its tensors in
    groups of that many per dtype, one multi-tensor call each; others one by one. The
    results equal one call per tensor."""
    rng = np.random.RandomState(0)
    dtypes = [np.float32] * 5 + [np.float64] * 2
    ws = [rng.rand(3, 2).astype(dt) for dt in dtypes]
    gs = [rng.rand(3, 2).astype(dt) for dt in dtypes]

    def run(aggregate):
        opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01)
        upd = mx.optimizer.get_updater(opt)
        assert upd.aggregate_updates
        upd.aggregate_updates = aggregate
        calls = []
        real = opt.update_multi_precision
        monkeypatch.setattr(opt, "update_multi_precision",
                            lambda i, *a: calls.append(i) or real(i, *a))
        weights = [mx.nd.array(w, dtype=w.dtype) for w in ws]
        for _ in range(2):
            upd(list(range(len(ws))), [mx.nd.array(g, dtype=g.dtype) for g in gs], weights)
        return calls, [w.asnumpy() for w in weights]

    calls, grouped = run(True)
    assert calls[:3] == [[0, 1, 2, 3], [4], [5, 6]]
    calls, single = run(False)
    assert calls[:7] == list(range(7))
    for a, b in zip(grouped, single):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert not mx.optimizer.get_updater(mx.optimizer.Adam()).aggregate_updates
