"""Module calls out of order or with a malformed batch raise typed errors (MXNet asserts, or
runs on the previous batch's values, or fails deep inside on a numpy array)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError, ParamError, ShapeError


def _module(bind=True, init=True):
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    m = mx.mod.Module(mx.sym.SoftmaxOutput(fc, name="softmax"))
    if bind:
        m.bind([("data", (2, 3))], [("softmax_label", (2,))])
    if init:
        m.init_params()
    return m


def test_init_optimizer_before_init_params():
    with pytest.raises(MXNetError, match="init_optimizer: call bind and init_params first"):
        _module(init=False).init_optimizer()


@pytest.mark.parametrize("batch,err,text", [
    (mx.io.DataBatch([], []), ShapeError, r"data must be a list of 1 NDArrays .*got 0"),
    (mx.io.DataBatch([np.ones((2, 3))], [np.ones(2)]), ParamError,
     "data 'data' must be an NDArray, got numpy.ndarray"),
    (mx.io.DataBatch([mx.nd.ones((2, 3))], [[0, 1]]), ParamError, "label 'softmax_label'"),
])
def test_forward_with_a_malformed_batch(batch, err, text):
    with pytest.raises(err, match=text):
        _module().forward(batch)


def test_bind_with_a_negative_dim_and_a_well_formed_forward():
    with pytest.raises(ShapeError, match="must be >= 0"):
        mx.mod.Module(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2),
                      label_names=None).bind([("data", (2, -3))])
    m = _module()
    m.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2,))]))
    assert m.get_outputs()[0].shape == (2, 2)
