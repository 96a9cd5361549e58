"""Samplers of the random family through mx.nd.random / mx.sym.random: seeding, moments,
parameter dispatch (numbers -> _random_*, arrays -> _sample_*), shapes and dtypes."""
import numpy as np
import pytest

import sparsym as mx

N = 20000


@pytest.mark.parametrize("fn,params,mean,std", [
    (mx.nd.random.gamma, {"alpha": 9.0, "beta": 0.5}, 4.5, 1.5),
    (mx.nd.random.exponential, {"scale": 0.25}, 0.25, 0.25),
    (mx.nd.random.poisson, {"lam": 4.0}, 4.0, 2.0),
    (mx.nd.random.negative_binomial, {"k": 3, "p": 0.4}, 4.5, np.sqrt(11.25)),
    (mx.nd.random.generalized_negative_binomial, {"mu": 2.0, "alpha": 0.3}, 2.0, np.sqrt(3.2)),
])
def test_scalar_samplers_moments_and_seed(fn, params, mean, std):
    mx.random.seed(7)
    a = fn(shape=(N,), **params).asnumpy()
    mx.random.seed(7)
    b = fn(shape=(N,), **params).asnumpy()
    assert (a == b).all() and a.dtype == np.float32
    assert abs(a.mean() - mean) < 0.1 * std + 0.02
    assert abs(a.std() - std) < 0.1 * std + 0.02


def test_array_parameters_draw_per_element():
    k = mx.nd.array([[3, 4], [5, 6]])
    p = mx.nd.array([[0.4, 0.77], [0.5, 0.84]])
    out = mx.nd.random.negative_binomial(k, p, shape=(N,))
    assert out.shape == (2, 2, N)
    want = k.asnumpy() * (1 - p.asnumpy()) / p.asnumpy()
    np.testing.assert_allclose(out.asnumpy().mean(-1), want, rtol=0.08)
    with pytest.raises(ValueError, match="all be NDArrays"):
        mx.nd.random.gamma(mx.nd.ones((2,)), 1.0)
    sym = mx.sym.random.gamma(mx.sym.var("a"), mx.sym.var("b"), shape=(3,))
    assert sym.infer_shape(a=(2, 2), b=(2, 2))[1] == [(2, 2, 3)]


def test_like_randint_shuffle():
    x = mx.nd.ones((4, 3), dtype=np.float64)
    y = mx.nd.random.gamma_like(x, alpha=2.0, beta=1.0)
    assert y.shape == (4, 3) and y.dtype == np.float64
    r = mx.nd.random.randint(-1, 3, shape=(1000,))
    assert r.dtype == np.int32 and r.asnumpy().min() == -1 and r.asnumpy().max() == 2
    assert mx.nd.random.randint(5, 9, dtype="int64").dtype == np.int64
    d = mx.nd.arange(0, 12).reshape((4, 3))
    s = mx.nd.random.shuffle(d).asnumpy()
    np.testing.assert_array_equal(np.sort(s[:, 0]), [0, 3, 6, 9])
    np.testing.assert_array_equal(s - s[:, :1], np.tile([0, 1, 2], (4, 1)))
    with pytest.raises(mx.MXNetError, match="less than high"):
        mx.nd.random.randint(3, 3)


def test_multinomial_probabilities_and_gradient():
    probs = mx.nd.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    idx, logp = mx.nd.random.multinomial(probs, shape=N, get_prob=True)
    assert idx.dtype == np.int32 and idx.shape == (2, N)
    freq = np.stack([np.bincount(r, minlength=3) / N for r in idx.asnumpy()])
    np.testing.assert_allclose(freq, probs.asnumpy(), atol=0.02)
    np.testing.assert_allclose(logp.asnumpy(), np.log(np.take_along_axis(
        probs.asnumpy(), idx.asnumpy().astype(np.int64), 1)), rtol=1e-5)
    sym = mx.sym.random.multinomial(mx.sym.var("p"), shape=5)
    grad = mx.nd.zeros((2, 3))
    ex = sym.bind(mx.cpu(), {"p": probs}, args_grad={"p": grad})
    drawn, _ = ex.forward(is_train=True)
    ex.backward([mx.nd.zeros((2, 5)), mx.nd.ones((2, 5))])
    counts = np.stack([np.bincount(r, minlength=3) for r in drawn.asnumpy().astype(int)])
    np.testing.assert_allclose(grad.asnumpy(), counts / probs.asnumpy(), rtol=1e-5)


def test_unique_zipfian():
    classes, tries = mx.nd._internal._sample_unique_zipfian(1000, shape=(3, 200))
    assert classes.dtype == np.int64 and tries.shape == (3,)
    for row, t in zip(classes.asnumpy(), tries.asnumpy()):
        assert np.unique(row).size == 200 and row.min() >= 0 and row.max() < 1000 and t >= 200


def test_mx_random_reexports_nd_random_samplers():
    # MXNet's mx.random is nd.random's namespace plus seed
    mx.random.seed(3)
    a = mx.random.poisson(lam=4, shape=(2000, 1))
    assert a.shape == (2000, 1) and abs(float(a.mean().asscalar()) - 4.0) < 0.3
    assert mx.random.multinomial is mx.nd.random.multinomial
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = mx.random.nope
