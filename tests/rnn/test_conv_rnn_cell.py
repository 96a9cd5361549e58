"""Convolutional RNN cells: MXNet 1.9.1's sums recorded on the same seeded weights."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")

# sum of each output (2 steps) then of each final state, recorded from MXNet 1.9.1
MXNET_SUMS = {"ConvRNNCell": [6.6358, 23.1215, 23.1215],
              "ConvGRUCell": [7.0965, 12.0408, 12.0408],
              "ConvLSTMCell": [1.8579, 5.3216, 5.3216, 4.9292]}


@pytest.mark.parametrize("name", sorted(MXNET_SUMS))
def test_conv_cells_match_mxnet(name):
    cell = getattr(mx.rnn, name)(input_shape=(2, 3, 8, 6), num_hidden=4, i2h_stride=(2, 2),
                                 prefix="c_")
    outs, states = cell.unroll(2, [mx.sym.var("x0"), mx.sym.var("x1")])
    g = mx.sym.Group(outs + states)
    shapes, out_shapes, _ = g.infer_shape(x0=(2, 3, 8, 6), x1=(2, 3, 8, 6))
    assert all(s == (2, 4, 4, 3) for s in out_shapes)     # the stride-2 i2h sets the state
    assert sorted(cell.params._params) == ["c_h2h_bias", "c_h2h_weight", "c_i2h_bias",
                                           "c_i2h_weight"]
    rng = np.random.RandomState(0)
    args = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s))
            for n, s in zip(g.list_arguments(), shapes)}
    sums = [float(x.asnumpy().sum()) for x in g.bind(mx.cpu(), args).forward()]
    np.testing.assert_allclose(sums, MXNET_SUMS[name], atol=2e-4)
    weights = {k: v for k, v in args.items() if k.startswith("c_")}
    unpacked = cell.unpack_weights(weights)
    assert len(unpacked) == 4 * len(cell._gate_names)
    packed = cell.pack_weights(unpacked)
    for k, v in weights.items():
        np.testing.assert_array_equal(packed[k].asnumpy(), v.asnumpy())


def test_conv_cell_refuses_even_state_kernels():
    with pytest.raises(ParamError, match="odd"):
        mx.rnn.ConvRNNCell(input_shape=(1, 3, 8, 8), num_hidden=2, h2h_kernel=(2, 3))
