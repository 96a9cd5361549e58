"""Optimizers through mx.optimizer: MXNet 1.9.1's recorded trajectories, NumPy restatements
of the formulas (dense, lazy row_sparse and standard row_sparse), multipliers, states."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import sparsym as mx

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")
REF = np.load(os.path.join(FIX, "optimizer_reference.npz"))

VARIANTS = {
    "sgd_mom0_lazy": ("sgd", dict(momentum=0, lazy_update=True)),
    "sgd_mom0_nolazy": ("sgd", dict(momentum=0, lazy_update=False)),
    "sgd_mom0.9_lazy": ("sgd", dict(momentum=0.9, lazy_update=True)),
    "sgd_mom0.9_nolazy": ("sgd", dict(momentum=0.9, lazy_update=False)),
    "adam_lazy": ("adam", dict(lazy_update=True)),
    "adam_nolazy": ("adam", dict(lazy_update=False)),
    "adagrad": ("adagrad", {}),
    "adagrad_wd0": ("adagrad", dict(wd=0)),
    "ftrl": ("ftrl", {}),
    "rmsprop_centered0": ("rmsprop", dict(centered=False)),
    "rmsprop_centered1": ("rmsprop", dict(centered=True)),
    "adadelta": ("adadelta", {}),
    "nag": ("nag", dict(momentum=0.9)),
    "signum": ("signum", dict(momentum=0.9)),
    "ftml": ("ftml", {}),
    "adamax": ("adamax", {}),
    "nadam": ("nadam", {}),
}
CASES = [(v, k) for v in VARIANTS for k in ("dns", "rsp") if f"{v}_{k}_w1" in REF.files]


def _flat(state):
    if state is None:
        return []
    if isinstance(state, (list, tuple)):
        return [x for s in state for x in _flat(s)]
    return [state]


def _grad(g, kind, rows=(1, 4)):
    if kind == "dns":
        return mx.nd.array(g)
    rows = list(rows)
    return mx.nd.sparse.row_sparse_array((g[rows], rows), shape=g.shape)


@pytest.mark.parametrize("variant,kind", CASES)
def test_matches_mxnet_trajectory(variant, kind):
    name, extra = VARIANTS[variant]
    kw = dict(learning_rate=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=5.0) | extra
    opt = mx.optimizer.create(name, **kw)
    w = mx.nd.array(REF["w0"])
    state = opt.create_state_multi_precision(0, w)
    for t in (1, 2, 3):
        opt.update_multi_precision(0, w, _grad(REF[f"grad{t}"], kind), state)
        np.testing.assert_allclose(w.asnumpy(), REF[f"{variant}_{kind}_w{t}"], rtol=1e-5,
                                   atol=1e-5)
    for j, s in enumerate(_flat(state)):
        np.testing.assert_allclose(s.asnumpy(), REF[f"{variant}_{kind}_state{j}"], rtol=1e-5,
                                   atol=1e-5)


def test_mxnet_rejected_sparse_adagrad_with_wd_is_supported():
    # MXNet: "Operator not implemented: _sparse_adagrad_update" for wd != 0
    opt = mx.optimizer.create("adagrad", learning_rate=0.1, wd=0.01, eps=1e-7)
    w0 = REF["w0"].astype(np.float64)
    w = mx.nd.array(REF["w0"])
    h = opt.create_state(0, w)
    g = REF["grad1"].astype(np.float64)
    opt.update(0, w, _grad(REF["grad1"], "rsp"), h)
    exp = w0.copy()
    hh = np.zeros_like(w0)
    for r in (1, 4):
        hh[r] = g[r] ** 2
        exp[r] = w0[r] - 0.1 * (g[r] / np.sqrt(hh[r] + 1e-7) + 0.01 * w0[r])
    np.testing.assert_allclose(w.asnumpy(), exp, rtol=1e-5)
    np.testing.assert_allclose(h.asnumpy(), hh, rtol=1e-5)


# --------------------------------------------------------------------------- numpy refs
def clip(x, c):
    return x if c is None else np.clip(x, -c, c)


def ref_step(name, kw, w, g, s, t):
    """One update in float64; ``s`` is a list of state arrays (modified and returned)."""
    lr, wd, rs, cg = kw["learning_rate"], kw["wd"], kw["rescale_grad"], kw["clip_gradient"]
    if name == "sgd":
        mu = kw.get("momentum", 0.0)
        G = clip(rs * g, cg)
        if mu == 0:
            return (1 - lr * wd) * w - lr * G, s
        m = mu * s[0] - lr * wd * w - lr * G
        return w + m, [m]
    if name == "adam":
        b1, b2, eps = 0.9, 0.999, 1e-8
        G = clip(rs * g + wd * w, cg)
        m = b1 * s[0] + (1 - b1) * G
        v = b2 * s[1] + (1 - b2) * G * G
        lrt = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lrt * m / (np.sqrt(v) + eps), [m, v]
    if name == "adagrad":
        G = clip(rs * g, cg)
        h = s[0] + G * G
        return w - lr * (G / np.sqrt(h + 1e-7) + wd * w), [h]
    if name == "ftrl":
        G = clip(rs * g, cg)
        z, n = s
        z = z + G - (np.sqrt(n + G * G) - np.sqrt(n)) * w / lr
        n = n + G * G
        w = (np.sign(z) * 0.01 - z) / ((1 + np.sqrt(n)) / lr + wd) * (np.abs(z) > 0.01)
        return w, [z, n]
    if name == "rmsprop":
        G = clip(rs * g + wd * w, cg)
        n = 0.9 * s[0] + 0.1 * G * G
        return w - lr * G / np.sqrt(n + 1e-8), [n]
    if name == "adamax":
        G = clip(rs * g + wd * w, cg)
        m = 0.9 * s[0] + 0.1 * G
        u = np.maximum(0.999 * s[1], np.abs(G))
        return w - lr / (1 - 0.9 ** t) * m / u, [m, u]
    if name == "signum":
        m = 0.9 * s[0] - 0.1 * (wd * w + clip(rs * g, cg))
        return w + lr * np.sign(m), [m]
    raise AssertionError(name)


KW = dict(learning_rate=0.05, wd=0.02, rescale_grad=0.7, clip_gradient=1.5)
LAZY_CASES = [("sgd", dict(momentum=0.0)), ("sgd", dict(momentum=0.8)), ("adam", {}),
              ("adagrad", {}), ("ftrl", {}), ("rmsprop", dict(lazy_update=True)),
              ("adamax", dict(lazy_update=True)), ("signum", dict(lazy_update=True))]


def _num_states(name, extra):
    return {"sgd": 1 if extra.get("momentum") else 0, "adam": 2, "adagrad": 1, "ftrl": 2,
            "rmsprop": 1, "adamax": 2, "signum": 1}[name]


@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
@pytest.mark.parametrize("name,extra", LAZY_CASES)
def test_lazy_row_sparse_update_touches_only_grad_rows(name, extra, w_stype):
    rng = np.random.RandomState(3)
    shape = (7, 3)
    w_np = rng.randn(*shape)
    weight = mx.nd.array(w_np.astype(np.float32)).tostype(w_stype)
    opt = mx.optimizer.create(name, **KW, **extra)
    state = opt.create_state(0, weight)
    ref_w = w_np.copy()
    ref_s = [np.zeros(shape) for _ in range(_num_states(name, extra))]
    lazy = not (name == "ftrl" and w_stype == "default")
    for t, rows in enumerate(([0, 3], [3, 5, 6], [1]), start=1):
        g = rng.randn(*shape) * 3
        grad = mx.nd.sparse.row_sparse_array((g[rows].astype(np.float32), rows), shape=shape)
        opt.update(0, weight, grad, state)
        if lazy:
            nw, ns = ref_step(name, KW | extra, ref_w[rows], g[rows],
                              [x[rows] for x in ref_s], t)
            ref_w[rows] = nw
            for x, v in zip(ref_s, ns):
                x[rows] = v
        else:
            gd = np.zeros(shape)
            gd[rows] = g[rows]
            ref_w, ref_s = ref_step(name, KW | extra, ref_w, gd, ref_s, t)
        np.testing.assert_allclose(weight.asnumpy(), ref_w, rtol=2e-5, atol=2e-6)
        assert weight.stype == w_stype
    for s, r in zip(_flat(state), ref_s):
        np.testing.assert_allclose(s.asnumpy(), r, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name,extra", [("sgd", dict(momentum=0.8, lazy_update=False)),
                                        ("adam", dict(lazy_update=False)),
                                        ("rmsprop", {}), ("adamax", {}), ("signum", {})])
def test_standard_update_with_row_sparse_grad_updates_every_row(name, extra):
    rng = np.random.RandomState(5)
    shape = (6, 2)
    w_np = rng.randn(*shape)
    weight = mx.nd.array(w_np.astype(np.float32)).tostype("row_sparse")
    opt = mx.optimizer.create(name, **KW, **extra)
    state = opt.create_state(0, weight)
    ref_w, ref_s = w_np.copy(), [np.zeros(shape) for _ in range(_num_states(name, extra))]
    for t in (1, 2):
        g = np.zeros(shape)
        g[[2, 4]] = rng.randn(2, 2)
        grad = mx.nd.sparse.row_sparse_array((g[[2, 4]].astype(np.float32), [2, 4]),
                                             shape=shape)
        opt.update(0, weight, grad, state)
        ref_w, ref_s = ref_step(name, KW | extra, ref_w, g, ref_s, t)
        np.testing.assert_allclose(weight.asnumpy(), ref_w, rtol=2e-5, atol=2e-6)
    # rows 0, 1, 3, 5 had no gradient and still moved (weight decay / momentum)
    assert not np.allclose(weight.asnumpy()[0], w_np[0])


@pytest.mark.parametrize("name,extra", [("sgd", dict(momentum=0.9)), ("adam", {}),
                                        ("adagrad", {}), ("rmsprop", dict(centered=True)),
                                        ("adadelta", {}), ("ftrl", {}), ("adamax", {}),
                                        ("nadam", {}), ("nag", dict(momentum=0.9)),
                                        ("signum", {}), ("ftml", {})])
def test_dense_matches_float64_replay(name, extra):
    """float32 and float64 weights follow the same trajectory (no dtype-dependent paths)."""
    rng = np.random.RandomState(1)
    w0 = rng.randn(5, 4)
    out = []
    for dt in (np.float32, np.float64):
        opt = mx.optimizer.create(name, **KW, **extra)
        w = mx.nd.array(w0, dtype=dt)
        st = opt.create_state(0, w)
        r = np.random.RandomState(2)
        for _ in range(4):
            opt.update(0, w, mx.nd.array(r.randn(5, 4), dtype=dt), st)
        out.append(w.asnumpy().astype(np.float64))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-4, atol=1e-5)


def test_rescale_grad_and_clip():
    opt = mx.optimizer.create("sgd", learning_rate=1.0, rescale_grad=0.5, clip_gradient=1.0)
    w = mx.nd.zeros((1, 3))
    opt.update(0, w, mx.nd.array([[1.0, 4.0, -10.0]]), None)
    np.testing.assert_allclose(w.asnumpy(), [[-0.5, -1.0, 1.0]])


def test_nadam_schedule_is_shared_across_parameters():
    opt = mx.optimizer.create("nadam", learning_rate=0.01)
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,))
    sa, sb = opt.create_state(0, a), opt.create_state(1, b)
    opt.update(0, a, mx.nd.ones((2,)), sa)
    m1 = opt.m_schedule
    opt.update(1, b, mx.nd.ones((2,)), sb)
    assert opt.m_schedule == pytest.approx(m1 * m1 / 1.0)  # both at t=1: schedule squared


def test_sgld_is_seeded_and_unbiased():
    mx.random.seed(7)
    opt = mx.optimizer.create("sgld", learning_rate=0.01)
    w = mx.nd.zeros((20000,))
    opt.update(0, w, mx.nd.zeros((20000,)), None)
    a = w.asnumpy()
    assert abs(a.mean()) < 0.005 and abs(a.std() - 0.1) < 0.005
    mx.random.seed(7)
    w2 = mx.nd.zeros((20000,))
    mx.optimizer.create("sgld", learning_rate=0.01).update(0, w2, mx.nd.zeros((20000,)), None)
    np.testing.assert_array_equal(a, w2.asnumpy())


def test_dcasgd_formula():
    opt = mx.optimizer.create("dcasgd", learning_rate=0.1, momentum=0.5, lamda=0.04, wd=0.01,
                              param_idx2name={0: "fc_weight"})
    w0 = np.array([1.0, -2.0, 0.5])
    w = mx.nd.array(w0)
    st = opt.create_state(0, w)
    ref_w, prev, mom = w0.copy(), w0.copy(), np.zeros(3)
    for g in ([0.3, 0.1, -0.2], [1.0, -1.0, 2.0]):
        g = np.array(g)
        opt.update(0, w, mx.nd.array(g), st)
        mom = 0.5 * mom - 0.1 * (g + 0.01 * ref_w + 0.04 * g * g * (ref_w - prev))
        prev = ref_w.copy()
        ref_w = ref_w + mom
        np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-5)


def test_lbsgd_accumulates_batch_scale_steps():
    opt = mx.optimizer.create("lbsgd", learning_rate=0.1, batch_scale=2, warmup_epochs=0)
    w = mx.nd.ones((2,))
    opt.update(0, w, mx.nd.array([1.0, 1.0]), None)
    np.testing.assert_allclose(w.asnumpy(), [1.0, 1.0])  # first of two accumulated steps
    opt.update(0, w, mx.nd.array([3.0, -1.0]), None)
    # mean grad [2, 0], lr scaled by batch_scale after warmup: 0.1 * 2
    np.testing.assert_allclose(w.asnumpy(), [1 - 0.2 * 2.0, 1.0], rtol=1e-6)


def test_multi_precision_float16_keeps_a_float32_master():
    opt = mx.optimizer.create("sgd", learning_rate=0.1, multi_precision=True)
    w = mx.nd.array(np.ones(4), dtype=np.float16)
    st = opt.create_state_multi_precision(0, w)
    inner, master = st  # MXNet's SGD keeps (momentum, master); other optimizers the reverse
    assert master.dtype == np.float32 and inner is None
    for _ in range(10):
        opt.update_multi_precision(0, w, mx.nd.array(np.full(4, 1e-3), dtype=np.float16), st)
    np.testing.assert_allclose(master.asnumpy(), 1 - 10 * 1e-4, rtol=1e-6)
    assert w.dtype == np.float16


def test_create_by_name_and_errors():
    assert type(mx.optimizer.create("Adam")).__name__ == "Adam"
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("ccsgd"), mx.optimizer.SGD)
    with pytest.raises(ValueError, match="Cannot find optimizer nope"):
        mx.optimizer.create("nope")

    @mx.optimizer.Optimizer.register
    class MyOpt(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = 7.0

    w = mx.nd.zeros((2,))
    mx.optimizer.create("myopt").update(0, w, w, None)
    assert w.asnumpy().tolist() == [7.0, 7.0]
    del mx.optimizer.Optimizer.opt_registry["myopt"]


def test_learning_rate_overriding_scheduler_notice_on_stdout(capsys):
    # MXNet prints (not logs) this notice, so it shows in a script's stdout
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(learning_rate=0.1, lr_scheduler=sched)
    assert "has been overwritten by ``learning_rate``" in capsys.readouterr().out
    assert opt.lr_scheduler.base_lr == 0.1
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already"):
        opt.set_learning_rate(0.5)


def test_plain_callable_as_lr_scheduler():
    # MXNet's custom-schedule tutorial passes a plain class (no base_lr) to the Trainer
    class Halving:
        def __call__(self, num_update):
            return 1.0 / 2 ** num_update

    net = mx.gluon.nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"lr_scheduler": Halving()})
    for _ in range(2):
        with mx.autograd.record():
            loss = net(mx.nd.ones((1, 1))).sum()
        loss.backward()
        trainer.step(1)
    # steps at update counts 1 and 2: w = 1 - 0.5 - 0.25
    assert net.weight.data().asscalar() == pytest.approx(0.25)
    assert trainer.learning_rate == pytest.approx(0.25)
