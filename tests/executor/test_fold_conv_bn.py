"""Inference plans fold a BatchNorm into the convolution it reads (passes/fuse.py,
ops/nn/conv_bn.py): outputs equal the unfused graph's on both paths, the folded weight
follows writes to the weight and to the BatchNorm's parameters and statistics, and a
training-mode forward still normalises with the batch statistics."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import gluon, nd
from sparsym.executor import plan as P


def _block(act=True):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, use_bias=False), gluon.nn.BatchNorm())
    if act:
        net.add(gluon.nn.Activation("relu"))
    net.add(gluon.nn.Conv2D(4, 1), gluon.nn.BatchNorm(scale=False))
    return net


def _randomize(net, rng):
    for p in net.collect_params().values():
        lo, hi = (0.5, 2.0) if "var" in p.name or "gamma" in p.name else (-1.0, 1.0)
        p.set_data(nd.array(rng.uniform(lo, hi, p.shape).astype(np.float32)))


def _steps(net):
    plan = list(P._CACHE.values())[-1]
    return [s.op_name for s in plan.forward_steps]


@pytest.mark.parametrize("act", [True, False])
def test_folded_inference_equals_unfused(dnn_path, act):
    rng = np.random.default_rng(0)
    net = _block(act)
    net.initialize()
    x = nd.array(rng.standard_normal((2, 3, 7, 7)).astype(np.float32))
    net(x)
    _randomize(net, rng)
    ref = net(x).asnumpy()  # imperative: op by op, nothing fused
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-5)
    assert _steps(net).count("_fused_conv_bn") == 2 and "BatchNorm" not in _steps(net)
    # the folded weight follows the BatchNorm's statistics and the conv weight
    params = list(net.collect_params().values())
    for p in params[:5]:
        p.set_data(p.data() * 0.5 + 0.25)
        net.hybridize(active=False)
        ref = net(x).asnumpy()
        net.hybridize()
        np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-5)


def test_training_forward_of_an_inference_plan_uses_batch_statistics():
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=6, pad=(1, 1), name="c")
    y = mx.sym.Activation(mx.sym.BatchNorm(c, fix_gamma=False, name="bn"), act_type="relu")
    outs = {}
    for fuse in ("1", "0"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SPARSYM_FUSE", fuse)
            ex = y.simple_bind(mx.cpu(), data=(4, 3, 5, 5), grad_req="null")
            r = np.random.default_rng(1)
            for a in list(ex.arg_dict.values()) + list(ex.aux_dict.values()):
                a[:] = r.uniform(0.5, 1.5, a.shape).astype(np.float32)
            ex.forward(is_train=True)
            train = ex.outputs[0].asnumpy()
            mean = ex.aux_dict["bn_moving_mean"].asnumpy()
            ex.forward(is_train=False)
            outs[fuse] = (train, mean, ex.outputs[0].asnumpy(),
                          [s.op_name for s in ex._plan.forward_steps])
    assert "_fused_conv_bn" in outs["1"][3] and "_fused_conv_bn" not in outs["0"][3]
    for a, b in zip(outs["1"][:3], outs["0"][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("downsample", [False, True])
def test_residual_add_fused_as_sum_post_op(dnn_path, downsample):
    from sparsym.gluon.model_zoo.vision.resnet import BasicBlockV1
    rng = np.random.default_rng(2)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1), gluon.nn.BatchNorm(),
            BasicBlockV1(8, 2 if downsample else 1, downsample=downsample, in_channels=8))
    net.initialize()
    x = nd.array(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    net(x)
    _randomize(net, rng)
    ref = net(x).asnumpy()
    tol = 1e-5 * np.abs(ref).max()  # float32 rounding at the outputs' scale
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=tol)
    steps = _steps(net)
    assert "elemwise_add" not in steps and "Activation" not in steps, steps
    # training mode (batch statistics) through the same fused steps
    with mx.autograd.train_mode():
        y = net(x).asnumpy()
    net.hybridize(active=False)
    with mx.autograd.train_mode():
        np.testing.assert_allclose(y, net(x).asnumpy(), rtol=1e-4, atol=tol)
