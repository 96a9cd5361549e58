"""nd/sym.contrib.rand_zipfian: log-uniform candidates and their expected counts."""
import numpy as np

import sparsym as mx


def _expected(classes, num_sampled, range_max):
    c = np.asarray(classes, dtype=np.float64)
    return np.log((c + 2) / (c + 1)) / np.log(range_max + 1) * num_sampled


def test_rand_zipfian_counts_and_frequencies():
    true = mx.nd.array([0, 3, 7], dtype="int32")
    mx.random.seed(3)
    samples, cnt_true, cnt_sampled = mx.nd.contrib.rand_zipfian(true, 20000, 10)
    s = samples.asnumpy()
    assert samples.dtype == np.int64 and s.shape == (20000,) and s.min() >= 0 and s.max() < 10
    np.testing.assert_allclose(cnt_true.asnumpy(), _expected([0, 3, 7], 20000, 10))
    np.testing.assert_allclose(cnt_sampled.asnumpy(), _expected(s, 20000, 10))
    freq = np.bincount(s, minlength=10)
    np.testing.assert_allclose(freq, _expected(np.arange(10), 20000, 10), rtol=0.1)


def test_symbolic_rand_zipfian_draws_the_same_with_the_same_seed():
    true = mx.nd.array([1, 2])
    mx.random.seed(7)
    ref = [o.asnumpy() for o in mx.nd.contrib.rand_zipfian(true, 50, 6)]
    out = mx.sym.Group(mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 50, 6))
    exe = out.bind(mx.cpu(), {"t": true})
    mx.random.seed(7)
    got = [o.asnumpy() for o in exe.forward()]
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r)
