"""Loss heads (SoftmaxOutput parameters, MakeLoss, regression outputs, BlockGrad) against
values recorded from MXNet 1.9.1; loss heads ignore head gradients, so the recorded backward
is their gradient check."""
import json
import os

import numpy as np
import pytest
from nn_loss_cases import SOFTMAX_CASES, other_cases, softmax_cases

import sparsym as mx
from sparsym.test_utils import assert_almost_equal

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_nn_loss.json")) as _f:
    FIXTURE = json.load(_f)


@pytest.fixture(scope="module")
def softmax_results():
    return softmax_cases(mx)


@pytest.mark.parametrize("i", range(len(SOFTMAX_CASES)), ids=[str(c) for c in SOFTMAX_CASES])
def test_softmax_output_matches_mxnet(i, softmax_results):
    for got, want in zip(softmax_results[i], FIXTURE["softmax"][i]):
        assert_almost_equal(np.array(got), np.array(want), rtol=1e-4, atol=1e-5)


def test_makeloss_regression_blockgrad_match_mxnet():
    for got, want in zip(other_cases(mx), FIXTURE["other"]):
        for g, w in zip(got, want):
            assert_almost_equal(np.array(g), np.array(w), rtol=1e-4, atol=1e-5)


def test_softmax_output_label_shape_inference():
    s = mx.sym.SoftmaxOutput(mx.sym.var("data"), name="sm")
    assert s.infer_shape(data=(4, 5))[0][1] == (4,)
    m = mx.sym.SoftmaxOutput(mx.sym.var("data"), name="sm", multi_output=True)
    assert m.infer_shape(data=(2, 3, 4, 5))[0][1] == (2, 4, 5)


def test_softmax_output_with_probability_labels():
    # a label of the data's shape holds target probabilities: grad = softmax(x) - label
    x = np.random.rand(3, 4).astype(np.float32)
    label = np.random.rand(3, 4).astype(np.float32)
    label /= label.sum(1, keepdims=True)
    grad = mx.nd.zeros((3, 4))
    s = mx.sym.SoftmaxOutput(mx.sym.var("x"), mx.sym.var("l"))
    exe = s.bind(mx.cpu(), args={"x": mx.nd.array(x), "l": mx.nd.array(label)},
                 args_grad={"x": grad})
    p = exe.forward(is_train=True)[0].asnumpy()
    exe.backward()
    np.testing.assert_allclose(grad.asnumpy(), p - label, rtol=1e-5, atol=1e-6)


def test_fully_connected_accepts_a_column_bias():
    # MXNet's FullyConnectedShape accepts a (num_hidden, 1) bias too
    x, w, b = np.random.rand(5, 10), np.random.rand(8, 10), np.random.rand(8, 1)
    out = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=8)
    np.testing.assert_allclose(out.asnumpy(), x @ w.T + b.T, rtol=1e-5)
