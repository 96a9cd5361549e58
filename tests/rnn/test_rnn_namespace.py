"""mx.rnn's namespace as MXNet's: rnn_unroll (deprecated) and the names it carries along."""
import pytest

import sparsym as mx


def test_rnn_unroll_warns_and_makes_step_variables():
    cell = mx.rnn.GRUCell(3, prefix="g_")
    with pytest.warns(DeprecationWarning, match="rnn_unroll is deprecated"):
        outs, states = mx.rnn.rnn_unroll(cell, 2, input_prefix="x_")
    args = mx.sym.Group(outs).list_arguments()
    assert "x_t0_data" in args and "x_t1_data" in args and len(states) == 1
    _, shapes, _ = mx.sym.Group(outs).infer_shape(x_t0_data=(2, 5), x_t1_data=(2, 5))
    assert shapes == [(2, 3), (2, 3)]


def test_rnn_namespace_carries_mxnet_names():
    assert mx.rnn.DataBatch is mx.io.DataBatch and mx.rnn.DataIter is mx.io.DataIter
    assert mx.rnn.load_checkpoint is mx.model.load_checkpoint
    assert mx.rnn.save_checkpoint is mx.model.save_checkpoint
    assert mx.rnn.init is mx.init and mx.rnn.symbol is mx.sym and mx.rnn.ndarray is mx.nd
