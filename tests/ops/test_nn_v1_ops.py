"""BatchNorm_v1, Convolution_v1, Pooling_v1, BatchNormWithReLU and Pooling's 3-D and 'same'
forms through the public API (values: the registry sweep, tests/ops/sweep_cases_spatial.py;
BatchNorm_v1's against MXNet 1.9.1 here, its nd front end taking no moving statistics)."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")


def test_batchnorm_v1_train_step_matches_mxnet():
    s = mx.sym.BatchNorm_v1(mx.sym.var("x"), fix_gamma=False, output_mean_var=True, name="bn")
    assert s.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    ex = s.simple_bind(mx.cpu(), x=(2, 2, 3, 1))
    ex.arg_dict["x"][:] = np.arange(12).reshape(2, 2, 3, 1) ** 1.5 / 10
    ex.arg_dict["bn_gamma"][:] = [2.0, 0.5]
    ex.arg_dict["bn_beta"][:] = [0.0, 1.0]
    ex.aux_dict["bn_moving_mean"][:] = 0
    ex.aux_dict["bn_moving_var"][:] = 1
    out, mean, var = ex.forward(is_train=True)
    ex.backward([mx.nd.array(np.arange(12).reshape(2, 2, 3, 1) % 5 - 2.0), mx.nd.zeros(2),
                 mx.nd.zeros(2)])
    # printed by MXNet 1.9.1 for the same program: the extra outputs are (mean, variance)
    np.testing.assert_allclose(out.asnumpy()[:, 0, :, 0], [[-2.20757, -1.9856, -1.57975],
                                                           [1.05466, 1.90331, 2.81496]],
                               atol=2e-5)
    np.testing.assert_allclose(mean.asnumpy(), [0.99455, 1.99137], atol=2e-5)
    np.testing.assert_allclose(var.asnumpy(), [0.81087, 1.49445], atol=2e-5)
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy()[0, :, :, 0],
                               [[-1.66326, 0.38886, 2.3022], [0.09438, 0.56316, -1.00435]],
                               atol=2e-5)
    np.testing.assert_allclose(ex.grad_dict["bn_gamma"].asnumpy(), [4.08052, -3.83461],
                               atol=2e-5)
    np.testing.assert_allclose(ex.grad_dict["bn_beta"].asnumpy(), [-3.0, 0.0], atol=2e-5)
    np.testing.assert_allclose(ex.aux_dict["bn_moving_mean"].asnumpy(), [0.09946, 0.19914],
                               atol=2e-5)


def test_batchnorm_with_relu_is_relu_of_batchnorm():
    rng = np.random.RandomState(0)
    x, g, b = (mx.nd.array(v) for v in (rng.randn(3, 2, 4), rng.rand(2) + 0.5, rng.randn(2)))
    y = mx.nd.contrib.BatchNormWithReLU(x, g, b, mx.nd.zeros(2), mx.nd.ones(2), fix_gamma=False)
    z = mx.nd.relu(mx.nd.BatchNorm(x, g, b, mx.nd.zeros(2), mx.nd.ones(2), fix_gamma=False))
    np.testing.assert_allclose(y.asnumpy(), z.asnumpy(), rtol=1e-6)


def test_v1_records_share_the_current_front_ends():
    c = mx.sym.Convolution_v1(mx.sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    assert c.list_arguments() == ["x", "c_weight", "c_bias"]
    assert c.infer_shape(x=(1, 2, 5, 5))[1] == [(1, 4, 3, 3)]
    p = mx.sym.Pooling_v1(mx.sym.var("x"), kernel=(2, 2), stride=(2, 2),
                          pooling_convention="full")
    assert p.infer_shape(x=(1, 2, 5, 5))[1] == [(1, 2, 3, 3)]
    with pytest.raises(mx.MXNetError, match="pool_type"):
        mx.sym.Pooling_v1(mx.sym.var("x"), kernel=(2, 2), pool_type="lp")


def test_3d_pooling_shapes_and_global_pooling():
    x = mx.nd.array(np.random.RandomState(1).rand(1, 2, 4, 5, 6))
    y = mx.nd.Pooling(x, kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="max")
    assert y.shape == (1, 2, 2, 2, 3)
    np.testing.assert_allclose(y.asnumpy()[0, 1, 1, 0, 2], x.asnumpy()[0, 1, 2:4, 0:2, 4:6].max())
    g = mx.nd.Pooling(x, global_pool=True, pool_type="avg", kernel=(1, 1, 1))
    np.testing.assert_allclose(g.asnumpy().ravel(), x.asnumpy().mean(axis=(2, 3, 4)).ravel(),
                               rtol=1e-6)


def test_same_pooling_covers_the_input_with_ceil_windows():
    x = mx.nd.array(np.arange(10, dtype=np.float32).reshape(1, 1, 10))
    y = mx.nd.Pooling(x, kernel=5, stride=3, pad=(0, 0, 0), pool_type="avg",
                      pooling_convention="same")
    # windows [0, 5), [3, 8), [6, 10), [9, 10): clipped at the end, averaged over what is left
    np.testing.assert_allclose(y.asnumpy().ravel(), [2.0, 5.0, 7.5, 9.0])
    with pytest.raises(mx.MXNetError, match="disables the use of pad"):
        mx.nd.Pooling(x, kernel=2, stride=2, pad=2, pooling_convention="same")


def test_sync_batchnorm_reports_mean_and_variance_as_mxnet():
    x = mx.nd.array(np.arange(12).reshape(2, 2, 3, 1) ** 1.5 / 10)
    with mx.autograd.record():
        _, mean, var = mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones(2), mx.nd.zeros(2),
                                                   mx.nd.zeros(2), mx.nd.ones(2), key="k",
                                                   output_mean_var=True, fix_gamma=False)
    # MXNet 1.9.1's values: the third output is the (biased) batch variance
    np.testing.assert_allclose(mean.asnumpy(), [0.99455, 1.99137], atol=2e-5)
    np.testing.assert_allclose(var.asnumpy(), [0.81087, 1.49445], atol=2e-5)
