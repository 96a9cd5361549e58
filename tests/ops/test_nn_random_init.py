"""Samplers (nd.random / sym.random / mx.random) and creation symbols (zeros/ones/full/arange)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError, ShapeError
from sparsym.test_utils import assert_almost_equal


def test_nd_random_uniform_normal_statistics_and_seed():
    mx.random.seed(42)
    u = mx.nd.random.uniform(-2, 3, shape=(20000,))
    assert u.dtype == np.float32 and u.shape == (20000,)
    un = u.asnumpy()
    assert un.min() >= -2 and un.max() < 3 and abs(un.mean() - 0.5) < 0.05
    n = mx.nd.random.normal(1.0, 2.0, shape=(100, 200), dtype="float64")
    assert n.dtype == np.float64
    assert abs(n.asnumpy().mean() - 1) < 0.05 and abs(n.asnumpy().std() - 2) < 0.05
    mx.random.seed(7)
    a = mx.random.uniform(shape=(5,)).asnumpy()
    mx.random.seed(7)
    b = mx.nd.random_uniform(shape=(5,)).asnumpy()
    assert np.array_equal(a, b)
    assert mx.nd.random.randn(2, 3).shape == (2, 3)
    assert mx.nd.random.uniform_like(mx.nd.zeros((2, 2), dtype="float64")).dtype == np.float64


def test_nd_random_with_array_parameters():
    low = mx.nd.array([0., 10.])
    high = mx.nd.array([1., 11.])
    s = mx.nd.random.uniform(low, high, shape=(500,))
    assert s.shape == (2, 500)
    v = s.asnumpy()
    assert v[0].min() >= 0 and v[0].max() < 1 and v[1].min() >= 10 and v[1].max() < 11
    g = mx.nd.sample_normal(mx.nd.array([0., 5.]), mx.nd.array([1., 0.1]), shape=(400,))
    assert abs(g.asnumpy()[1].mean() - 5) < 0.05
    with pytest.raises(ValueError):
        mx.nd.random.uniform(low, 1.0)
    with pytest.raises(ParamError):
        mx.nd.random_uniform(low=2, high=1, shape=(2,))


def test_sym_random_with_inferred_shape():
    x = mx.sym.var("x")
    noisy = x + mx.sym.random.normal(0, 1, shape=(0, 3))
    assert noisy.infer_shape(x=(4, 3))[1] == [(4, 3)]
    exe = noisy.simple_bind(mx.cpu(), x=(4, 3))
    out = exe.forward()[0].asnumpy()
    assert out.shape == (4, 3) and out.std() > 0
    u = mx.sym.random.uniform(low=mx.sym.var("lo"), high=mx.sym.var("hi"), shape=(3,))
    assert u.infer_shape(lo=(2,), hi=(2,))[1] == [(2, 3)]
    assert mx.sym.uniform(shape=(2, 2)).infer_shape()[1] == [(2, 2)]
    # no gradient flows into a sampler; the data gradient is unaffected
    exe = noisy.simple_bind(mx.cpu(), x=(4, 3))
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((4, 3)))
    assert_almost_equal(exe.grad_dict["x"], np.ones((4, 3)))


def test_creation_symbols():
    z = mx.sym.zeros(shape=(0, 4), name="z")
    y = z + mx.sym.var("x")
    assert y.list_arguments() == ["x"]
    exe = y.simple_bind(mx.cpu(), x=(3, 4))
    exe.arg_dict["x"][:] = np.ones((3, 4))
    assert_almost_equal(exe.forward()[0], np.ones((3, 4)))
    o = mx.sym.ones((2, 2), dtype="float64")
    assert o.infer_type()[1] == [np.float64]
    assert_almost_equal(o.eval()[0], np.ones((2, 2)))
    assert_almost_equal(mx.sym.full((2,), 3.5).eval()[0], [3.5, 3.5])
    assert_almost_equal(mx.sym.arange(2, 8, step=2, repeat=2).eval()[0], [2, 2, 4, 4, 6, 6])
    assert_almost_equal(mx.sym.arange(3).eval()[0], [0, 1, 2])
    assert mx.nd._zeros(shape=(2, 3)).shape == (2, 3)
    with pytest.raises(ShapeError):
        mx.nd._zeros(shape=(0, 3))
    with pytest.raises(ParamError):
        mx.sym.arange(0, 3, step=0)


def test_creation_symbols_json_round_trip():
    z = mx.sym.zeros(shape=(0, 4), name="z") + mx.sym.var("x")
    back = mx.sym.load_json(z.tojson())
    assert back.infer_shape(x=(2, 4))[1] == [(2, 4)]


def test_nd_arange_runs_the_operator_with_mxnet_integer_semantics():
    # MXNet casts start and step to the integer type first (C truncation)
    assert mx.nd.arange(0.5, 5, 0.7, dtype="int32").asnumpy().tolist() == [0] * 7
    assert mx.nd.arange(1.3, 6.6, 1.3, dtype="int32").asnumpy().tolist() == [1, 2, 3, 4, 5]
    assert mx.nd.arange(4, 0, -2, dtype="uint8").asnumpy().tolist() == [4, 2]
    assert mx.nd.arange(2, 4, repeat=2).asnumpy().tolist() == [2, 2, 3, 3]
    with pytest.warns(DeprecationWarning):
        assert mx.nd.arange(3, infer_range=True).asnumpy().tolist() == [0, 1, 2]


def test_symbol_inputs_given_as_none_are_left_out():
    d = mx.sym.var("d")
    s = mx.sym.SequenceReverse(data=d, sequence_length=None, use_sequence_length=False)
    assert s.list_arguments() == ["d"]
