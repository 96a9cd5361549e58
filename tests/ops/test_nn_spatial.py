"""GridGenerator, BilinearSampler and SpatialTransformer through the public API."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx


def test_identity_transform_reproduces_the_input_and_its_gradient():
    x = mx.nd.array(np.random.RandomState(0).rand(2, 3, 5, 7))
    x.attach_grad()
    ident = mx.nd.array([[1, 0, 0, 0, 1, 0]] * 2)
    with mx.autograd.record():
        y = mx.nd.SpatialTransformer(x, ident, target_shape=(5, 7), transform_type="affine",
                                     sampler_type="bilinear")
    y.backward(mx.nd.ones(y.shape))
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), np.ones(x.shape), rtol=1e-5)


def test_half_scale_affine_crops_the_centre():
    """MXNet's own check: scale 0.5 samples the centre window of a (4k+1)-sized input."""
    data = mx.sym.var("data")
    loc = mx.sym.var("loc")
    stn = mx.sym.SpatialTransformer(data=data, loc=loc, target_shape=(5, 5),
                                    transform_type="affine", sampler_type="bilinear")
    _, out_shapes, _ = stn.infer_shape(data=(1, 2, 9, 9))
    assert out_shapes == [(1, 2, 5, 5)]
    x = np.random.RandomState(1).rand(1, 2, 9, 9)
    exe = stn.bind(mx.cpu(), {"data": mx.nd.array(x),
                              "loc": mx.nd.array([[0.5, 0, 0, 0, 0.5, 0]])})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), x[:, :, 2:7, 2:7], rtol=1e-5)


def test_sampler_pads_with_zeros_and_warp_grid_follows_the_flow():
    x = mx.nd.ones((1, 1, 3, 3))
    far = mx.nd.full((1, 2, 1, 1), 5.0)
    assert mx.nd.BilinearSampler(x, far).asnumpy().item() == 0
    flow = mx.nd.ones((1, 2, 3, 3))          # one pixel right and down
    grid = mx.nd.GridGenerator(flow, transform_type="warp")
    y = mx.nd.BilinearSampler(mx.nd.arange(9).reshape((1, 1, 3, 3)), grid).asnumpy()[0, 0]
    assert y[0, 0] == 4 and y[1, 1] == 8 and y[2, 2] == 0


def test_grid_generator_checks_its_parameters():
    with pytest.raises(mx.base.ParamError, match="target_shape"):
        mx.nd.GridGenerator(mx.nd.ones((1, 6)), transform_type="affine")
    with pytest.raises(mx.base.ParamError):
        mx.nd.GridGenerator(mx.nd.ones((1, 6)), transform_type="perspective",
                            target_shape=(2, 2))
