"""gluon.rnn fused layers against their unfused cell stacks."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import gluon


@pytest.mark.parametrize("layer", [
    lambda: gluon.rnn.LSTM(3, num_layers=2, bidirectional=True),
    lambda: gluon.rnn.GRU(3, num_layers=2),
    lambda: gluon.rnn.RNN(3, activation="tanh"),
])
def test_unfused_cells_share_parameters_and_agree(layer):
    net = layer()
    cells = net._unfuse()
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, size=(4, 2, 5)))
    fused = net(x).asnumpy()
    unfused = cells.unroll(4, x, layout="TNC", merge_outputs=True)[0].asnumpy()
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-6)
    assert set(cells.collect_params().keys()) <= set(net.collect_params().keys())
