"""Activation, LeakyReLU, softmax family and Dropout: forward vs NumPy and gradients."""
import math

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError
from sparsym.test_utils import (
    assert_almost_equal,
    check_numeric_gradient,
    check_symbolic_forward,
)

rng = np.random.RandomState(5)
X = rng.randn(3, 4)
X[np.abs(X) < 0.05] = 0.3          # keep clear of kinks for numeric differences


def _sig(x):
    return 1 / (1 + np.exp(-x))


ACTS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": _sig,
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
}


@pytest.mark.parametrize("act", sorted(ACTS))
def test_activation(act):
    s = mx.sym.Activation(mx.sym.var("x"), act_type=act)
    check_symbolic_forward(s, {"x": X}, [ACTS[act](X)], rtol=1e-4, atol=1e-6)
    check_numeric_gradient(s, {"x": X}, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_activation_bad_type():
    with pytest.raises(ParamError, match="act_type"):
        mx.sym.Activation(mx.sym.var("x"), act_type="swish")
    with pytest.raises(ParamError, match="required"):
        mx.sym.Activation(mx.sym.var("x"))


_erf = np.vectorize(math.erf)
SELU_A, SELU_L = 1.6732632423543772, 1.0507009873554805
LRELU = {
    "leaky": lambda x: np.where(x > 0, x, 0.2 * x),
    "elu": lambda x: np.where(x > 0, x, 0.2 * np.expm1(x)),
    "selu": lambda x: SELU_L * np.where(x > 0, x, SELU_A * np.expm1(x)),
    "gelu": lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
}


@pytest.mark.parametrize("act", sorted(LRELU))
def test_leaky_relu(act):
    s = mx.sym.LeakyReLU(mx.sym.var("x"), act_type=act, slope=0.2)
    check_symbolic_forward(s, {"x": X}, [LRELU[act](X)], rtol=1e-4, atol=1e-6)
    check_numeric_gradient(s, {"x": X}, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_prelu_gamma_shape_and_gradient():
    x = rng.randn(2, 3, 2)
    x[np.abs(x) < 0.05] = 0.5
    s = mx.sym.LeakyReLU(mx.sym.var("x"), act_type="prelu", name="p")
    assert s.list_arguments() == ["x", "p_gamma"]
    assert s.infer_shape(x=(2, 3, 2))[0][1] == (3,)
    g = np.array([0.1, 0.5, 2.0])
    want = np.where(x > 0, x, g.reshape(1, 3, 1) * x)
    check_symbolic_forward(s, {"x": x, "p_gamma": g}, [want])
    check_numeric_gradient(s, {"x": x, "p_gamma": g}, rtol=1e-5, atol=1e-7, dtype=np.float64)
    assert mx.sym.LeakyReLU(mx.sym.var("x")).list_arguments() == ["x"]


def test_rrelu_train_and_inference():
    s = mx.sym.LeakyReLU(mx.sym.var("x"), act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    check_symbolic_forward(s, {"x": X}, [np.where(X > 0, X, 0.2 * X)])
    exe = s.simple_bind(mx.cpu(), x=X.shape)
    exe.arg_dict["x"][:] = X
    y = exe.forward(is_train=True)[0].asnumpy()
    slope = y[X < 0] / X[X < 0]
    assert np.all((slope >= 0.1 - 1e-6) & (slope <= 0.3 + 1e-6)) and slope.std() > 0
    exe.backward(mx.nd.ones(X.shape))
    g = exe.grad_dict["x"].asnumpy()
    assert_almost_equal(g[X < 0], slope, rtol=1e-4)
    assert_almost_equal(g[X > 0], np.ones((X > 0).sum()))


def _np_softmax(x, axis, t=1.0):
    z = x / t
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("temperature", [None, 2.5])
def test_softmax_family(axis, temperature):
    x = rng.randn(2, 3, 4)
    t = 1.0 if temperature is None else temperature
    p = _np_softmax(x, axis, t)
    for op, want in (("softmax", p), ("log_softmax", np.log(p)),
                     ("softmin", _np_softmax(-x, axis, t))):
        s = getattr(mx.sym, op)(mx.sym.var("x"), axis=axis, temperature=temperature)
        check_symbolic_forward(s, {"x": x}, [want], rtol=1e-4, atol=1e-6)
        check_numeric_gradient(s, {"x": x}, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_softmax_use_length_and_dtype():
    x = rng.randn(2, 4)
    length = mx.nd.array([2, 4], dtype="int32")   # MXNet refuses float lengths
    s = mx.sym.softmax(mx.sym.var("x"), mx.sym.var("length"), use_length=True)
    want = np.zeros_like(x)
    want[0, :2] = _np_softmax(x[0, :2], 0)
    want[1] = _np_softmax(x[1], 0)
    check_symbolic_forward(s, {"x": x, "length": length}, [want], rtol=1e-4, atol=1e-6)
    check_numeric_gradient(s, {"x": x, "length": length}, grad_nodes=["x"], rtol=1e-5,
                           atol=1e-7, dtype=np.float64)
    y = mx.nd.softmax(mx.nd.array(x), dtype="float64")
    assert y.dtype == np.float64
    with pytest.raises(ParamError):
        mx.sym.softmax(mx.sym.var("x"), temperature=0.0)


def test_softmax_float_length_binds_and_fails_when_run():
    # MXNet 1.9.1 binds a length variable of unknown dtype as float32 (its monitor test
    # binds one) and refuses the float lengths only when the op runs
    data = mx.sym.Variable("data", shape=(2, 3, 4))
    length = mx.sym.Variable("length", shape=(2, 4))
    ex = mx.sym.softmax(data, length, axis=1, use_length=True).simple_bind(mx.cpu(),
                                                                          grad_req="null")
    assert ex.arg_dict["length"].dtype == np.float32
    with pytest.raises(mx.base.MXNetError, match="only support integer types"):
        ex.forward()


def test_dropout_train_inference_and_always():
    x = np.ones((200, 50))
    s = mx.sym.Dropout(mx.sym.var("x"), p=0.3)
    assert s.list_outputs() == [s.name + "_output"]
    check_symbolic_forward(s, {"x": x}, [x])           # inference: identity
    # p=0 keeps every element: the training gradient is the identity's
    check_numeric_gradient(mx.sym.Dropout(mx.sym.var("x"), p=0.0), {"x": rng.randn(2, 3)},
                           dtype=np.float64)
    exe = s.simple_bind(mx.cpu(), x=x.shape)
    exe.arg_dict["x"][:] = x
    y = exe.forward(is_train=True)[0].asnumpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.03
    assert_almost_equal(y[kept], np.full(kept.sum(), 1 / 0.7), rtol=1e-5)
    og = rng.randn(*x.shape)
    exe.backward(mx.nd.array(og))
    assert_almost_equal(exe.grad_dict["x"], og * y, rtol=1e-4, atol=1e-5)
    # mode='always' drops at inference too; axes share the mask
    a = mx.nd.Dropout(mx.nd.array(x), p=0.5, mode="always", axes=(1,)).asnumpy()
    assert np.all((a == 0).all(axis=1) | (a == 2).all(axis=1))
    assert 0 < (a[:, 0] == 0).sum() < 200
    with pytest.raises(ParamError):
        mx.sym.Dropout(mx.sym.var("x"), p=-0.1)


def test_dropout_zero_input_gradient_uses_mask():
    x = np.zeros((50, 40))
    s = mx.sym.Dropout(mx.sym.var("x"), p=0.5)
    exe = s.simple_bind(mx.cpu(), x=x.shape)
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(x.shape))
    g = exe.grad_dict["x"].asnumpy()
    assert set(np.unique(g).tolist()) == {0.0, 2.0}


def test_prelu_gamma_broadcasts_onto_leading_axes():
    """MXNet aligns gamma's axes from the right with data's axes 0 and 1."""
    x = mx.nd.array(np.arange(-12, 12).reshape(2, 3, 4) / 4.)
    g = mx.nd.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    x.attach_grad()
    g.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, g, act_type="prelu")
    y.backward()
    # values and gamma gradient recorded from MXNet 1.9.1
    assert_almost_equal(y.asnumpy()[0, :, 0], np.array([-0.3, -0.4, -0.3]))
    assert_almost_equal(g.grad.asnumpy(), np.array([[-10.5, -6.5, -2.5], [0, 0, 0]]))
    with pytest.raises(mx.base.ShapeError, match="cannot broadcast gamma"):
        mx.nd.LeakyReLU(x, mx.nd.ones((4,)), act_type="prelu")


def test_dropout_p_one_is_nan_in_training_like_mxnet():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=1.0)
    y.backward()
    assert np.isnan(y.asnumpy()).all() and np.isnan(x.grad.asnumpy()).all()
    assert (mx.nd.Dropout(x, p=1.0).asnumpy() == 1).all()   # inference: identity
    with pytest.raises(ParamError, match="exceed bound"):
        mx.nd.Dropout(x, p=1.5)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,axis", [((64, 1000), -1), ((6, 50, 7), 1), ((9, 5), 0)])
@pytest.mark.parametrize("par", [False, True])
def test_softmax_float32_gradient_from_the_output(monkeypatch, op, shape, axis, par):
    """The gradient kernel (kernels/softmax.py; serial and parallel rows) against the
    float64 formula on the float32 output."""
    from sparsym.kernels import _twins
    if par:
        monkeypatch.setattr(_twins, "PAR_MIN_WORK", 0)
    x = mx.nd.array(rng.randn(*shape).astype(np.float32) * 3)
    g = rng.randn(*shape)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(x, axis=axis)
    y.backward(mx.nd.array(g))
    yv = y.asnumpy().astype(np.float64)
    if op == "softmax":
        want = yv * (g - (g * yv).sum(axis, keepdims=True))
    else:
        want = g - np.exp(yv) * g.sum(axis, keepdims=True)
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-4, atol=1e-5)
