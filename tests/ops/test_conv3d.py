"""3-D Convolution (NCDHW and NDHWC) and its gradients: values recorded on MXNet 1.9.1 for
NCDHW; channel-last and dilation checked against the channel-first path and a direct sum."""
import numpy as np
import pytest

import sparsym as mx

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")


def _run(x, w, b, **kw):
    x, w, b = mx.nd.array(x), mx.nd.array(w), mx.nd.array(b)
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(x, w, b, **kw)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy(), w.grad.asnumpy(), b.grad.asnumpy()


def test_grouped_strided_padded_conv3d_matches_mxnet():
    x = np.arange(2 * 2 * 4 * 3 * 3, dtype=np.float32).reshape(2, 2, 4, 3, 3) / 50
    w = np.linspace(-1, 1, 4 * 1 * 3 * 2 * 2, dtype=np.float32).reshape(4, 1, 3, 2, 2)
    y, dx, dw, db = _run(x, w, [0.5, -0.5, 1, 0], kernel=(3, 2, 2), num_filter=4,
                         num_group=2, pad=(1, 0, 1), stride=(2, 1, 1))
    assert y.shape == (2, 4, 2, 2, 4)
    np.testing.assert_allclose(y[1, 3], [
        [[7.99149, 15.66468, 15.80085, 7.73617], [8.20085, 16.07319, 16.20936, 7.93532]],
        [[12.17489, 23.79319, 23.97702, 11.70255], [12.45830, 24.34468, 24.52851, 11.97064]]],
        rtol=1e-5)
    np.testing.assert_allclose(dx[0, 1, :, 1], [[4.08511] * 3, [8.17021] * 3, [4.08511] * 3,
                                                [5.44681] * 3], rtol=1e-5)
    np.testing.assert_allclose(dw[2, 0, 1], [[40.08, 40.08], [41.52, 41.52]], rtol=1e-5)
    np.testing.assert_allclose(db, [32.0] * 4)  # N * D * H * W output positions


def _direct(x, w, stride, pad, dilate):
    """Convolution as the defining sum (NCDHW, one group)."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for i, j, m in np.ndindex(*k):
        win = xp[:, :, i * dilate[0]::stride[0], j * dilate[1]::stride[1],
                 m * dilate[2]::stride[2]][:, :, :out[0], :out[1], :out[2]]
        y += np.einsum("ncdhw,fc->nfdhw", win, w[:, :, i, j, m])
    return y


def test_dilated_and_channel_last_conv3d():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6, 5))
    w = rng.standard_normal((4, 3, 2, 3, 2))
    kw = dict(kernel=(2, 3, 2), num_filter=4, stride=(2, 1, 2), pad=(1, 1, 0), dilate=(2, 1, 1))
    y, dx, dw, db = _run(x, w, np.zeros(4), **kw)
    np.testing.assert_allclose(y, _direct(x, w, kw["stride"], kw["pad"], kw["dilate"]),
                               rtol=1e-4, atol=1e-4)
    cl = _run(x.transpose(0, 2, 3, 4, 1), w.transpose(0, 2, 3, 4, 1), np.zeros(4),
              layout="NDHWC", **kw)
    np.testing.assert_allclose(cl[0], y.transpose(0, 2, 3, 4, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cl[1], dx.transpose(0, 2, 3, 4, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cl[2], dw.transpose(0, 2, 3, 4, 1), rtol=1e-4, atol=1e-4)


def test_conv3d_shape_errors_and_gluon_layer():
    x = mx.sym.var("x")
    c = mx.sym.Convolution(x, kernel=(3, 3, 3), num_filter=2)
    assert c.infer_shape(x=(1, 4, 5, 6, 7))[1] == [(1, 2, 3, 4, 5)]
    with pytest.raises(mx.base.MXNetError):
        mx.sym.Convolution(x, kernel=(3, 3, 3), num_filter=2, layout="NCHW")
    with pytest.raises(mx.base.MXNetError, match="3-D deconvolution is not supported"):
        mx.sym.Deconvolution(x, kernel=(3, 3, 3), num_filter=2)
    layer = mx.gluon.nn.Conv3D(5, (1, 3, 3), strides=(1, 2, 2), padding=(0, 1, 1), in_channels=2)
    layer.initialize()
    assert layer(mx.nd.ones((1, 2, 3, 8, 8))).shape == (1, 5, 3, 4, 4)
