"""contrib fft / ifft / count_sketch (GPU-only in MXNet 1.9.1, here on the CPU) and
_set_value, through the public front ends."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient

nd = mx.nd


def test_fft_interleaves_numpys_transform_and_ifft_inverts_it_up_to_d():
    x = np.random.RandomState(0).randn(3, 5).astype(np.float32)
    f = nd.contrib.fft(nd.array(x)).asnumpy()
    z = np.fft.fft(x, axis=-1)
    np.testing.assert_allclose(f[:, 0::2], z.real, atol=1e-5)
    np.testing.assert_allclose(f[:, 1::2], z.imag, atol=1e-5)
    back = nd.contrib.ifft(nd.array(f)).asnumpy()
    np.testing.assert_allclose(back, 5 * x, atol=1e-4)  # unnormalised, as cuFFT


def test_ifft_refuses_an_odd_last_axis():
    with pytest.raises(mx.base.ShapeError, match="even"):
        nd.contrib.ifft(nd.ones((2, 3)))


def test_count_sketch_docstring_example_and_gradient():
    x = nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    out = nd.contrib.count_sketch(x, nd.array([[0, 3, 4]]), nd.array([[1, -1, 1]]), out_dim=5)
    np.testing.assert_allclose(out.asnumpy(), [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]],
                               rtol=1e-6)
    d, h, s = mx.sym.var("d"), mx.sym.var("h"), mx.sym.var("s")
    sym = mx.sym.contrib.count_sketch(d, h, s, out_dim=2)
    check_numeric_gradient(sym, {"d": np.random.RandomState(1).randn(2, 3),
                                 "h": np.array([[1.0, 1.0, 0.0]]),
                                 "s": np.array([[1.0, -1.0, 1.0]])},
                           grad_nodes=["d"], dtype=np.float64)
    with pytest.raises(mx.MXNetError, match="hash indices"):
        nd.contrib.count_sketch(x, nd.array([[0, 3, 9]]), nd.array([[1, 1, 1]]), out_dim=5)


def test_set_value_fills_out():
    out = nd.zeros((2, 3))
    nd._internal._set_value(src=2.5, out=out)
    assert out.asnumpy().tolist() == [[2.5] * 3] * 2
