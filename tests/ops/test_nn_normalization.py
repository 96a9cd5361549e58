"""Normalisation layers and loss heads through the public API (values against NumPy; the
registry sweeps check the forward references and the numeric gradients)."""
import numpy as np
import pytest

import sparsym as mx


def test_layer_and_group_norm_mean_std_outputs():
    x = np.random.RandomState(0).randn(2, 4, 3).astype(np.float32)
    out, mean, std = mx.nd.LayerNorm(mx.nd.array(x), mx.nd.ones(3), mx.nd.zeros(3),
                                     output_mean_var=True)
    assert mean.shape == std.shape == (2, 4, 1)
    np.testing.assert_allclose(std.asnumpy(), np.sqrt(x.var(-1, keepdims=True) + 1e-5),
                               rtol=1e-5)
    sym = mx.sym.GroupNorm(mx.sym.var("x"), num_groups=2, output_mean_var=True, name="gn")
    assert sym.list_outputs() == ["gn_output", "gn_mean", "gn_std"]
    _, outs, _ = sym.infer_shape(x=(5, 4, 3))
    assert outs == [(5, 4, 3), (5, 2), (5, 2)]
    assert sym.infer_shape(x=(5, 4, 3))[0][1:] == [(2,), (2,)]


def test_norm_shape_errors():
    with pytest.raises(mx.MXNetError, match="num_groups"):
        mx.sym.GroupNorm(mx.sym.var("x"), num_groups=3).infer_shape(x=(2, 4, 3))
    with pytest.raises(mx.MXNetError, match="3 dims"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode="channel")
    with pytest.raises(mx.MXNetError, match="nsize"):
        mx.sym.LRN(mx.sym.var("x"))


@pytest.mark.parametrize("linear", [True, False])
def test_svm_output_gradient(linear):
    rng = np.random.RandomState(1)
    x, lab = rng.rand(6, 5), rng.randint(0, 5, 6)
    sym = mx.sym.SVMOutput(mx.sym.var("x"), mx.sym.var("l"), use_linear=linear, margin=0.8,
                           regularization_coefficient=0.5)
    grad = mx.nd.zeros((6, 5))
    ex = sym.bind(mx.cpu(), args=[mx.nd.array(x), mx.nd.array(lab)], args_grad={"x": grad})
    np.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), x, rtol=1e-6)
    ex.backward()
    sign = np.where(np.arange(5) == lab[:, None], 1.0, -1.0)
    slack = 0.8 - sign * x
    want = -sign * (slack > 0) if linear else -2 * sign * np.maximum(slack, 0)
    np.testing.assert_allclose(grad.asnumpy(), 0.5 * want, rtol=1e-5, atol=1e-6)


def test_kl_sparse_reg_moving_average_and_gradient():
    x = np.random.RandomState(2).rand(4, 3)
    sym = mx.sym.IdentityAttachKLSparseReg(mx.sym.var("x"), name="kl", penalty=0.01)
    assert sym.list_auxiliary_states() == ["kl_moving_avg"]
    ex = sym.simple_bind(mx.cpu(), x=(4, 3))
    ex.arg_dict["x"][:] = x
    np.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), x, rtol=1e-6)
    ex.backward(mx.nd.ones((4, 3)))
    m = 0.1 * x.mean(0)
    np.testing.assert_allclose(ex.aux_dict["kl_moving_avg"].asnumpy(), m, rtol=1e-5)
    want = 1 + 0.01 * (-0.1 / m + 0.9 / (1 - m))
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), np.broadcast_to(want, (4, 3)),
                               rtol=1e-5)
    ex.forward(is_train=False)
    np.testing.assert_allclose(ex.aux_dict["kl_moving_avg"].asnumpy(), m, rtol=1e-5)


def test_softmax_cross_entropy_label_range():
    with pytest.raises(mx.MXNetError, match="labels"):
        mx.nd.softmax_cross_entropy(mx.nd.zeros((2, 3)), mx.nd.array([0, 3]))


def test_layernorm_parameter_gradients_accumulate_over_many_rows_accurately():
    """dgamma/dbeta sum over thousands of float32 rows: accumulated in float64 (MXNet's
    test_layer_norm compares them with a float64 reference at 1e-4)."""
    rng = np.random.RandomState(0)
    x, g = rng.normal(0, 1, (8192, 8)), rng.normal(0, 1, (8192, 8))
    sym = mx.sym.LayerNorm(mx.sym.var("data"), mx.sym.var("gamma"), mx.sym.var("beta"))
    exe = sym.simple_bind(mx.cpu(), data=x.shape)
    exe.arg_dict["data"][:] = x
    exe.arg_dict["gamma"][:] = 1
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(g)])
    x32 = x.astype(np.float32).astype(np.float64)
    xhat = (x32 - x32.mean(1, keepdims=True)) / np.sqrt(x32.var(1, keepdims=True) + 1e-5)
    g32 = g.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(exe.grad_dict["beta"].asnumpy(), g32.sum(0), rtol=0, atol=2e-5)
    np.testing.assert_allclose(exe.grad_dict["gamma"].asnumpy(), (g32 * xhat).sum(0), rtol=0,
                               atol=5e-5)
