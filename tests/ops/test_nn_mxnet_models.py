"""Symbol JSON and parameters written by MXNet 1.9.1 (make_mxnet_nn_model_fixtures.py) load in
sparsym and give MXNet's outputs: a CNN (Convolution, BatchNorm with aux states, Pooling,
Deconvolution, Dropout, FullyConnected, LeakyReLU, SliceChannel, Reshape, Concat, clip, sum,
log_softmax) and an RNN model (Embedding, MXNet's fused RNN op, GRU cells with zeros states)."""
import os

import pytest

import sparsym as mx
from sparsym.test_utils import assert_almost_equal

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("name", ["nn_cnn", "nn_rnn"])
def test_mxnet_model_loads_and_matches(name):
    sym = mx.sym.load(os.path.join(HERE, f"mxnet_{name}-symbol.json"))
    arrays = mx.nd.load(os.path.join(HERE, f"mxnet_{name}.params"))
    args = {k[4:]: v for k, v in arrays.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in arrays.items() if k.startswith("aux:")}
    assert sorted(sym.list_arguments()) == sorted(args)
    assert sorted(sym.list_auxiliary_states()) == sorted(aux)
    exe = sym.bind(mx.cpu(), args, aux_states=aux)
    out = exe.forward(is_train=False)[0]
    assert_almost_equal(out, arrays["out:0"], rtol=1e-4, atol=1e-5)
    # the loaded graph trains: a backward pass runs with the loaded parameters
    exe = sym.simple_bind(mx.cpu(), **{k: v.shape for k, v in args.items()},
                          grad_req={k: ("null" if k == "data" else "write") for k in args})
    exe.copy_params_from(args, aux)
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(out.shape))
    assert all(g is not None for k, g in exe.grad_dict.items() if k != "data")
