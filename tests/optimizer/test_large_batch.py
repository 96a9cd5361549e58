"""LAMB, LARS, DCASGD, schedules, multi-tensor and multi-precision updates against MXNet.

The reference numbers come from MXNet 1.9.1 (tests/fixtures/make_mxnet_fixtures.py,
``--only optimizers_extra``): 3 steps on a (4, 3) weight and a (3,) bias.
"""
import json
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")
REF = np.load(os.path.join(FIX, "optimizer_extra.npz"))
with open(os.path.join(FIX, "optimizer_extra.json")) as f:
    SPEC = json.load(f)


def _make(name, params):
    params = dict(params)
    sched = params.pop("sched", None)
    if sched is not None:
        params["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=sched[0], factor=sched[1])
    if "param_idx2name" in params:
        params["param_idx2name"] = {int(k): v for k, v in params["param_idx2name"].items()}
    return mx.optimizer.create(name, **params)


CASES = [(key, name, params, mode) for key, name, params in SPEC["extra"]
         for mode in ("single", "multi") if f"{key}_{mode}_w" in REF.files]


@pytest.mark.parametrize("key,name,params,mode", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_matches_mxnet(key, name, params, mode):
    opt = _make(name, params)
    w, b = mx.nd.array(REF["w0"]), mx.nd.array(REF["b0"])
    states = [opt.create_state_multi_precision(0, w), opt.create_state_multi_precision(1, b)]
    for t in (1, 2, 3):
        g = REF[f"grad{t}"]
        gw, gb = mx.nd.array(g), mx.nd.array(g[0])
        if mode == "single":
            opt.update_multi_precision(0, w, gw, states[0])
            opt.update_multi_precision(1, b, gb, states[1])
        else:
            opt.update_multi_precision([0, 1], [w, b], [gw, gb], states)
    np.testing.assert_allclose(w.asnumpy(), REF[f"{key}_{mode}_w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), REF[f"{key}_{mode}_b"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("key,name,params,steps", SPEC["mp"], ids=[c[0] for c in SPEC["mp"]])
def test_multi_precision_matches_mxnet(key, name, params, steps):
    opt = mx.optimizer.create(name, multi_precision=True, **params)
    w = mx.nd.array(REF["w0"], dtype="float16")
    state = opt.create_state_multi_precision(0, w)
    for t in range(1, steps + 1):
        opt.update_multi_precision(0, w, mx.nd.array(REF[f"grad{t}"], dtype="float16"), state)
    assert w.dtype == np.float16
    np.testing.assert_allclose(w.asnumpy().astype(np.float32), REF[f"{key}_w"], rtol=2e-3,
                               atol=2e-3)


def test_lamb_master_copy_accumulates():
    """MXNet's multi-precision LAMB never writes its float32 master (every step restarts
    from the initial weight); here the master is updated, so steps accumulate."""
    opt = mx.optimizer.LAMB(learning_rate=0.1, multi_precision=True)
    w = mx.nd.ones((4,), dtype="float16")
    state = opt.create_state_multi_precision(0, w)
    master = state[0]
    for _ in range(3):
        opt.update_multi_precision(0, w, mx.nd.ones((4,), dtype="float16"), state)
    # r = m/sqrt(v) = 1 and the trust ratio |w|/|r| = w: each step scales w by 1 - lr
    np.testing.assert_allclose(master.asnumpy(), 0.9 ** 3, rtol=1e-5)
    np.testing.assert_allclose(w.asnumpy().astype(np.float32), 0.9 ** 3, rtol=1e-3)


def test_state_layouts():
    w16 = mx.nd.ones((2, 2), dtype="float16")
    mom, master = mx.optimizer.LARS(momentum=0.9, multi_precision=True) \
        .create_state_multi_precision(0, w16)
    assert mom.dtype == np.float32 and master.dtype == np.float32
    master, (mean, var) = mx.optimizer.LAMB(multi_precision=True) \
        .create_state_multi_precision(0, w16)
    assert master.dtype == mean.dtype == var.dtype == np.float32
    assert mx.optimizer.LAMB().aggregate_num == 45 and mx.optimizer.LARS().aggregate_num == 4


def test_lars_skips_bias_and_wd_mult():
    opt = mx.optimizer.LARS(param_idx2name={0: "a_weight", 1: "a_bias", 2: "bn_gamma"})
    assert opt.wd_mult == {"a_bias": 0.0, "bn_gamma": 0.0}
    b = mx.nd.ones((3,))
    opt.update(1, b, mx.nd.ones((3,)) * 4, None)  # no trust ratio on a bias: plain SGD
    np.testing.assert_allclose(b.asnumpy(), 1 - 0.01 * 4)


def test_row_sparse_gradients():
    for opt in (mx.optimizer.LAMB(learning_rate=0.1), mx.optimizer.LARS(momentum=0.9)):
        w = mx.nd.ones((4, 2))
        g = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [2]), shape=(4, 2))
        dense = mx.nd.ones((4, 2))
        opt2 = type(opt)(**{k: getattr(opt, k) for k in ("momentum",) if hasattr(opt, k)},
                         learning_rate=opt.lr)
        opt.update(0, w, g, opt.create_state(0, w))
        opt2.update(0, dense, g.tostype("default"), opt2.create_state(0, dense))
        np.testing.assert_allclose(w.asnumpy(), dense.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("kw", [dict(learning_rate=float("nan")), dict(learning_rate="abc"),
                                dict(learning_rate=float("inf")), dict(wd="x"),
                                dict(rescale_grad=None), dict(clip_gradient=float("nan")),
                                dict(momentum="x"), dict(beta1="x")])
def test_bad_hyper_parameters(kw):
    name = "lamb" if "beta1" in kw else "sgd"
    key = next(iter(kw))
    with pytest.raises(ParamError, match=f"'{key}'"):
        mx.optimizer.create(name, **kw)
    with pytest.raises(ParamError, match="learning_rate"):
        mx.optimizer.SGD().set_learning_rate(float("nan"))
