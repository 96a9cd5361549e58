"""The fused RNN operator's own kernels (sparsym/kernels/rnn.py) against the unrolled cells
of mx.rnn (ordinary FullyConnected/Activation graphs), and numerically in float64."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx
from sparsym.kernels.rnn import layout
from sparsym.test_utils import check_numeric_gradient

MODES = ("lstm", "gru", "rnn_tanh", "rnn_relu")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fused_op_matches_unrolled_cells(mode, bidirectional):
    T, N, C, H = 3, 2, 4, 3
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode=mode, bidirectional=bidirectional,
                                get_next_state=True, prefix="f_")
    out, states = fused.unroll(T, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    assert [n.split("_", 1)[1] for n in out.list_outputs()] == ["rnn_output"]
    assert len(states) == (2 if mode == "lstm" else 1)
    stack = fused.unfuse()
    out2, _ = stack.unroll(T, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    ex1 = out.simple_bind(mx.cpu(), data=(T, N, C))
    ex2 = out2.simple_bind(mx.cpu(), data=(T, N, C))
    rng = np.random.RandomState(0)
    for v in ex1.arg_dict.values():
        v[:] = rng.uniform(-1, 1, v.shape)
    for k, v in stack.pack_weights(fused.unpack_weights(dict(ex1.arg_dict))).items():
        ex2.arg_dict[k][:] = v
    y1, y2 = ex1.forward(is_train=True)[0], ex2.forward(is_train=True)[0]
    np.testing.assert_allclose(y1.asnumpy(), y2.asnumpy(), rtol=1e-5, atol=1e-6)
    dy = mx.nd.array(rng.uniform(-1, 1, y1.shape))
    ex1.backward([dy])
    ex2.backward([dy])
    g1 = stack.pack_weights(fused.unpack_weights(dict(ex1.grad_dict)))
    for k, g in ex2.grad_dict.items():
        np.testing.assert_allclose(g1[k].asnumpy(), g.asnumpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=k)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_relu"])
def test_fused_op_numeric_gradient_with_states(mode):
    """Gradients of every input, initial states included, through every output."""
    n_st = 2 if mode == "lstm" else 1
    states = [mx.sym.var(f"s{i}") for i in range(n_st)]
    sym = mx.sym.RNN(mx.sym.var("data"), mx.sym.var("par"), *states, state_size=3,
                     num_layers=2, bidirectional=True, mode=mode, state_outputs=True)
    assert len(sym.list_outputs()) == 1 + n_st
    loss = None
    for k in range(1 + n_st):
        part = mx.sym.sum(sym[k] * sym[k] * (0.5 + k) + sym[k])
        loss = part if loss is None else loss + part
    rng = np.random.RandomState(1)
    _, total = layout(mode, 3, 2, True, 4)
    loc = {"data": rng.uniform(-1, 1, (3, 2, 4)), "par": rng.uniform(-0.5, 0.5, (total,))}
    for i in range(n_st):
        loc[f"s{i}"] = rng.uniform(-1, 1, (4, 2, 3))
    if mode == "rnn_relu":  # keep pre-activations away from relu's kink
        loc["par"] = np.abs(loc["par"])
    check_numeric_gradient(loss, loc, numeric_eps=1e-5, rtol=1e-5, atol=1e-7,
                           dtype=np.float64)


def test_dropout_masks_are_shared_by_forward_and_backward():
    """Between layers, training draws masks once per call; the backward pass uses them."""
    sym = mx.sym.RNN(mx.sym.var("data"), mx.sym.var("par"), mx.sym.var("h"), state_size=4,
                     num_layers=2, mode="rnn_relu", p=0.5)
    exe = sym.simple_bind(mx.cpu(), data=(1, 8, 3))
    rng = np.random.RandomState(2)
    for v in exe.arg_dict.values():
        v[:] = np.abs(rng.uniform(0.1, 1, v.shape))   # relu stays linear: y = M(x)
    exe.arg_dict["h"][:] = 0
    exe.arg_dict["par"][-16:] = 0                       # no biases: y is linear in x
    x = exe.arg_dict["data"].asnumpy().copy()
    y = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([mx.nd.ones(y.shape)])
    # for a positive linear map, sum(y) = <dsum/dx, x> with the same masks
    np.testing.assert_allclose((exe.grad_dict["data"].asnumpy() * x).sum(), y.sum(),
                               rtol=1e-4)
    # some units were dropped (p = 0.5 over 32 units), and inference keeps them all
    y_inf = exe.forward(is_train=False)[0].asnumpy()
    assert not np.allclose(y, y_inf)


def test_float64_and_float16_inputs():
    for dt in ("float64", "float16"):
        sym = mx.sym.RNN(mx.sym.var("data"), mx.sym.var("par"), mx.sym.var("s"), state_size=2,
                         num_layers=1, mode="rnn_tanh")
        exe = sym.simple_bind(mx.cpu(), data=(2, 1, 2), type_dict={"data": dt})
        for v in exe.arg_dict.values():
            v[:] = 0.5
        y = exe.forward(is_train=True)[0]
        assert y.dtype == np.dtype(dt)
        # h1 = tanh(x.w + h0.w + 2 biases) = tanh(0.5 + 0.5 + 1), then tanh(0.5 + h1 + 1)
        h1 = np.tanh(2.0)
        np.testing.assert_allclose(y.asnumpy().astype(np.float64)[:, 0, 0],
                                   [h1, np.tanh(1.5 + h1)], rtol=2e-3)
        exe.backward([mx.nd.ones(y.shape, dtype=dt)])
        assert exe.grad_dict["par"].dtype == np.dtype(dt)
