"""A convolution whose data and output are one pixel, where one kernel tap meets the data
and the others read padding (a ResNet's last stage on 32x32 images), runs as a 1x1
convolution of that tap on oneDNN: values and gradients equal the full convolution's, and
the weight gradient is zero at the other taps."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import nd


def _reference(x, w, b, taps):
    wt = w[(slice(None), slice(None)) + taps].astype(np.float64)
    return np.einsum("fc,nc->nf", wt, x.reshape(x.shape[:2]).astype(np.float64)) + b


@pytest.mark.parametrize("kernel,pad,stride,dilate", [
    ((3, 3), (1, 1), (1, 1), (1, 1)), ((5, 5), (2, 2), (1, 1), (1, 1)),
    ((3, 3), (1, 1), (2, 2), (1, 1)), ((3, 3), (2, 2), (1, 1), (2, 2)),
    ((3,), (1,), (1,), (1,))])
def test_one_pixel_convolution_values_and_gradients(dnn_path, kernel, pad, stride, dilate):
    rng = np.random.default_rng(0)
    nd_ = len(kernel)
    x = rng.standard_normal((4, 16) + (1,) * nd_).astype(np.float32)
    w = rng.standard_normal((8, 16) + kernel).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    taps = tuple(p // d for p, d in zip(pad, dilate))
    X, W, B = nd.array(x), nd.array(w), nd.array(b)
    for a in (X, W, B):
        a.attach_grad()
    with mx.autograd.record():
        y = nd.Convolution(X, W, B, kernel=kernel, pad=pad, stride=stride, dilate=dilate,
                           num_filter=8)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(nd.array(dy))
    ref = _reference(x, w, b, taps)
    np.testing.assert_allclose(y.asnumpy().reshape(ref.shape), ref, rtol=1e-5, atol=1e-5)
    dy2 = dy.reshape(ref.shape).astype(np.float64)
    wt = w[(slice(None), slice(None)) + taps].astype(np.float64)
    np.testing.assert_allclose(X.grad.asnumpy().reshape(4, 16), dy2 @ wt, rtol=1e-5, atol=1e-5)
    dw = np.zeros(w.shape)
    dw[(slice(None), slice(None)) + taps] = dy2.T @ x.reshape(4, 16)
    np.testing.assert_allclose(W.grad.asnumpy(), dw, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(B.grad.asnumpy(), dy2.sum(0), rtol=1e-5, atol=1e-5)
