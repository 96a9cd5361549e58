"""Post-op fusion (passes/fuse.py): in plans without gradients a convolution applies the
activation that reads its output as a post-op; the results and names are the unfused ones."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.passes import fuse

pytestmark = pytest.mark.usefixtures("dnn_path")


def _net():
    x = mx.sym.var("data")
    c1 = mx.sym.Convolution(x, kernel=(3, 3), num_filter=8, name="c1")
    r1 = mx.sym.Activation(c1, act_type="relu", name="r1")
    c2 = mx.sym.Convolution(r1, kernel=(3, 3), num_filter=4, no_bias=True, name="c2")
    t = mx.sym.Activation(c2, act_type="tanh", name="t")
    c3 = mx.sym.Convolution(x, kernel=(1, 1), num_filter=4, name="c3")  # read twice: kept
    s = mx.sym.Activation(c3, act_type="sigmoid", name="s")
    return mx.sym.Group([t, s, c3])


def _forward(sym, monkeypatch, on, grad_req="null"):
    monkeypatch.setenv("SPARSYM_FUSE", "1" if on else "0")
    ex = sym.simple_bind(mx.cpu(), data=(2, 3, 9, 9), grad_req=grad_req)
    rng = np.random.default_rng(0)
    for arr in ex.arg_dict.values():
        arr[:] = rng.standard_normal(arr.shape).astype(np.float32)
    return ex, [o.asnumpy() for o in ex.forward()]


def test_inference_plan_fuses_activations_into_convolutions(monkeypatch):
    sym = _net()
    ex_on, on = _forward(sym, monkeypatch, True)
    ex_off, off = _forward(sym, monkeypatch, False)
    ops_on = [s.op_name for s in ex_on._plan.forward_steps]
    assert ops_on.count("Activation") == 1  # relu and tanh fused; c3 is read twice
    assert [s.op_name for s in ex_off._plan.forward_steps].count("Activation") == 3
    assert ex_on.output_names == ex_off.output_names == ["t_output", "s_output", "c3_output"]
    for a, b in zip(on, off):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_training_plan_is_not_fused(monkeypatch):
    ex, _ = _forward(_net(), monkeypatch, True, grad_req="write")
    assert [s.op_name for s in ex._plan.forward_steps].count("Activation") == 3


def test_pass_leaves_heads_and_unfusable_graphs_alone():
    x = mx.sym.var("x")
    c = mx.sym.Convolution(x, kernel=(1, 1), num_filter=2, name="c")
    r = mx.sym.Activation(c, act_type="softrelu", name="r")  # not a post-op
    heads, n = fuse.fuse_post_ops(r._outputs)
    assert n == 0 and heads == list(r._outputs)
    g = mx.sym.Group([c, mx.sym.Activation(c, act_type="relu")])  # c is a head itself
    assert fuse.fuse_post_ops(g._outputs)[1] == 0


@pytest.mark.parametrize("is_train", [False, True])
def test_batchnorm_relu_fused_in_inference_plans(monkeypatch, is_train):
    x = mx.sym.var("data")
    c = mx.sym.Convolution(x, kernel=(3, 3), num_filter=16, pad=(1, 1), no_bias=True, name="c")
    b = mx.sym.BatchNorm(c, fix_gamma=False, name="bn")
    r = mx.sym.Activation(b, act_type="relu", name="r")
    b2 = mx.sym.BatchNorm(r, name="bn2")
    sym = mx.sym.Activation(b2, act_type="tanh", name="t")  # BN + tanh: NumPy post-op
    outs = {}
    for on in (True, False):
        monkeypatch.setenv("SPARSYM_FUSE", "1" if on else "0")
        ex = sym.simple_bind(mx.cpu(), data=(4, 3, 8, 8), grad_req="null")
        rng = np.random.RandomState(0)
        for k, v in list(ex.arg_dict.items()) + list(ex.aux_dict.items()):
            v[:] = (rng.rand(*v.shape) + 0.5) if ("var" in k or "gamma" in k) else \
                (rng.rand(*v.shape) - 0.5) * 0.2
        outs[on] = (ex.forward(is_train=is_train)[0].asnumpy(),
                    [s.op_name for s in ex._plan.forward_steps],
                    {k: v.asnumpy() for k, v in ex.aux_dict.items()})
    # conv + BN + relu in one step (the BN folded when it runs on its moving statistics)
    assert outs[True][1] == ["_fused_conv_bn", "BatchNorm"]
    np.testing.assert_allclose(outs[True][0], outs[False][0], rtol=1e-5, atol=1e-6)
    for k in outs[False][2]:  # the moving statistics update as unfused
        np.testing.assert_allclose(outs[True][2][k], outs[False][2][k], rtol=1e-6)
