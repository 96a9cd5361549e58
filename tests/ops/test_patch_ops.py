"""im2col/col2im, AdaptiveAvgPooling2D and nearest UpSampling: values against NumPy
references, numeric gradients in float64."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(12)


def _im2col_ref(x, k, s, p):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    cols = np.empty((n, c, k[0], k[1], oh, ow))
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[:, :, i:i + s[0] * oh:s[0], j:j + s[1] * ow:s[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def _adaptive_ref(x, oh, ow):
    h, w = x.shape[2:]
    out = np.empty(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, he = i * h // oh, -(-(i + 1) * h // oh)
            ws, we = j * w // ow, -(-(j + 1) * w // ow)
            out[:, :, i, j] = x[:, :, hs:he, ws:we].mean(axis=(2, 3))
    return out


def test_im2col_col2im_forward_and_adjoint():
    x = rng.randn(2, 3, 5, 6)
    s = mx.sym.im2col(mx.sym.var("x"), kernel=(2, 3), stride=(1, 2), pad=(1, 0))
    check_symbolic_forward(s, {"x": x}, [_im2col_ref(x, (2, 3), (1, 2), (1, 0))])
    check_numeric_gradient(s, {"x": x}, rtol=1e-6, atol=1e-8, dtype=np.float64)
    cols = rng.randn(2, 18, 12)
    t = mx.sym.col2im(mx.sym.var("c"), output_size=(5, 6), kernel=(2, 3), stride=(1, 2),
                      pad=(1, 0))
    # col2im is im2col's adjoint: <im2col(x), c> == <x, col2im(c)>
    y = mx.nd.col2im(mx.nd.array(cols, dtype="float64"), output_size=(5, 6), kernel=(2, 3),
                     stride=(1, 2), pad=(1, 0)).asnumpy()
    assert np.isclose((_im2col_ref(x, (2, 3), (1, 2), (1, 0)) * cols).sum(), (x * y).sum())
    check_numeric_gradient(t, {"c": cols}, rtol=1e-6, atol=1e-8, dtype=np.float64)
    assert mx.nd.im2col(mx.nd.ones((1, 1, 12)), kernel=(3,), stride=(2,)).shape == (1, 3, 5)


@pytest.mark.parametrize("size,want", [((2, 4), (2, 4)), ((), (1, 1)), ((3,), (3, 3))])
def test_adaptive_avg_pooling(size, want):
    x = rng.randn(2, 3, 5, 7)
    s = mx.sym.contrib.AdaptiveAvgPooling2D(mx.sym.var("x"), output_size=size)
    check_symbolic_forward(s, {"x": x}, [_adaptive_ref(x, *want)])
    check_numeric_gradient(s, {"x": x}, rtol=1e-6, atol=1e-8, dtype=np.float64)


def test_nearest_upsampling():
    a, b = rng.randn(1, 2, 2, 3), rng.randn(1, 1, 4, 6)
    s = mx.sym.UpSampling(mx.sym.var("a"), mx.sym.var("b"), scale=2, sample_type="nearest",
                          num_args=2)
    up = np.repeat(np.repeat(a, 2, axis=2), 2, axis=3)
    check_symbolic_forward(s, {"a": a, "b": b}, [np.concatenate([up, b], axis=1)])
    check_numeric_gradient(s, {"a": a, "b": b}, rtol=1e-6, atol=1e-8, dtype=np.float64)
    t = mx.sym.UpSampling(mx.sym.var("a"), scale=3, sample_type="nearest", num_args=1)
    check_numeric_gradient(t, {"a": a}, rtol=1e-6, atol=1e-8, dtype=np.float64)
