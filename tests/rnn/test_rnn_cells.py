"""mx.rnn cells: names, shapes and values against MXNet 1.9.1 (recorded), gradients, errors."""
import json
import os

import numpy as np
import pytest
from rnn_cases import cell_cases, fused_cases, rnn_op_cases

import sparsym as mx
from sparsym.base import MXNetError, ParamError
from sparsym.test_utils import assert_almost_equal, check_numeric_gradient

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_rnn.json")) as _f:
    FIXTURE = json.load(_f)


@pytest.fixture(scope="module")
def cell_results():
    return cell_cases(mx)


@pytest.fixture(scope="module")
def fused_results():
    return fused_cases(mx)


@pytest.mark.parametrize("case", sorted(FIXTURE["cells"]))
def test_cells_match_mxnet(case, cell_results):
    want, got = FIXTURE["cells"][case], cell_results[case]
    assert got["args"] == want["args"]          # parameter names and order
    assert got["outs"] == want["outs"]          # node names
    assert got["shapes"] == want["shapes"]
    for g, w in zip(got["vals"], want["vals"]):
        assert_almost_equal(np.array(g), np.array(w), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("case", sorted(FIXTURE["fused"]))
def test_fused_rnn_matches_mxnet_rnn_op(case, fused_results):
    want, got = FIXTURE["fused"][case], fused_results[case]
    for key in ("args", "shapes", "unpacked", "unfused_args"):
        assert got[key] == want[key], key
    assert got["repacked_equal"]
    for g, w in zip(got["vals"], want["vals"]):
        assert_almost_equal(np.array(g), np.array(w), rtol=1e-4, atol=2e-5)


def test_lstm_parameter_names_and_reset():
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=4, prefix=f"lstm_l{i}_"))
    out, states = stack.unroll(3, mx.sym.var("data"), merge_outputs=True)
    assert out.list_arguments() == [
        "data", "lstm_l0_i2h_weight", "lstm_l0_i2h_bias", "lstm_l0_h2h_weight",
        "lstm_l0_h2h_bias", "lstm_l1_i2h_weight", "lstm_l1_i2h_bias", "lstm_l1_h2h_weight",
        "lstm_l1_h2h_bias"]
    assert len(states) == 4
    # unrolling again restarts the step counters: same node names
    out2, _ = stack.unroll(3, mx.sym.var("data"), merge_outputs=True)
    def named(sym):
        return [n for n in sym.get_internals().list_outputs() if n.startswith("lstm_")]
    assert named(out2) == named(out) and "lstm_l1_t2_out_output" in named(out)
    assert out.infer_shape(data=(5, 3, 2))[1] == [(5, 3, 4)]
    assert mx.rnn.LSTMCell(4).params._params["lstm_i2h_bias"].attr("__init__")


def test_begin_state_variables_and_partial_shapes():
    cell = mx.rnn.GRUCell(3, prefix="g_")
    states = cell.begin_state(func=mx.sym.Variable)
    assert [s.name for s in states] == ["g_begin_state_0"]
    out, _ = cell.unroll(2, mx.sym.var("data"), begin_state=states, merge_outputs=True)
    assert "g_begin_state_0" in out.list_arguments()
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(4, 2, 5))[0]))
    assert shapes["g_begin_state_0"] == (4, 3)
    # default zeros states have an unknown batch dim completed by inference
    out, st = mx.rnn.LSTMCell(3).unroll(2, mx.sym.var("data"), merge_outputs=False)
    assert len(out) == 2
    assert mx.sym.Group(st).infer_shape(data=(6, 2, 5))[1] == [(6, 3), (6, 3)]


def test_lstm_unroll_numeric_gradient():
    # float64 needs variable begin states: the default zeros are float32 (as in MXNet, where
    # a float64 LSTM with default states fails type inference)
    cell = mx.rnn.LSTMCell(2, prefix="l_")
    out, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True,
                         begin_state=cell.begin_state(func=mx.sym.Variable))
    args, _, _ = out.infer_shape(data=(2, 2, 3))
    rng = np.random.RandomState(0)
    loc = {n: rng.uniform(-1, 1, s) for n, s in zip(out.list_arguments(), args)}
    check_numeric_gradient(out, loc, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_gru_bidirectional_numeric_gradient():
    cell = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(2, prefix="f_"), mx.rnn.RNNCell(1, prefix="b_"))
    out, _ = cell.unroll(2, mx.sym.var("data"), layout="TNC", merge_outputs=True,
                         begin_state=cell.begin_state(func=mx.sym.Variable))
    args, outs, _ = out.infer_shape(data=(2, 1, 2))
    assert outs == [(2, 1, 3)]
    rng = np.random.RandomState(1)
    loc = {n: rng.uniform(-1, 1, s) for n, s in zip(out.list_arguments(), args)}
    check_numeric_gradient(out, loc, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_fused_numeric_gradient_reaches_parameters():
    cell = mx.rnn.FusedRNNCell(2, num_layers=2, mode="lstm", prefix="f_")
    out, _ = cell.unroll(2, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    assert out.list_arguments() == ["data", "f_parameters"]
    out, _ = cell.unroll(2, mx.sym.var("data"), layout="TNC", merge_outputs=True,
                         begin_state=cell.begin_state(func=mx.sym.Variable))
    args, _, _ = out.infer_shape(data=(2, 1, 2))
    rng = np.random.RandomState(2)
    loc = {n: rng.uniform(-1, 1, s) for n, s in zip(out.list_arguments(), args)}
    check_numeric_gradient(out, loc, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_unpack_pack_weights_round_trip():
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    w = {"l_i2h_weight": mx.nd.array(np.arange(24.).reshape(12, 2)),
         "l_i2h_bias": mx.nd.array(np.arange(12.)),
         "l_h2h_weight": mx.nd.array(np.arange(36.).reshape(12, 3)),
         "l_h2h_bias": mx.nd.array(np.arange(12.))}
    un = cell.unpack_weights(w)
    assert sorted(un) == sorted(f"l_{g}_{k}_{t}".replace("_", "", 0) for g in ("i2h", "h2h")
                                for k in "ifco" for t in ("weight", "bias"))
    assert_almost_equal(un["l_i2h_f_weight"], np.arange(24.).reshape(12, 2)[3:6])
    back = cell.pack_weights(un)
    for k, v in w.items():
        assert_almost_equal(back[k], v)


def test_dropout_zoneout_cells_in_training():
    x = mx.sym.var("data")
    cell = mx.rnn.SequentialRNNCell()
    cell.add(mx.rnn.RNNCell(8, prefix="r_"))
    cell.add(mx.rnn.DropoutCell(0.5))
    out, _ = cell.unroll(2, x, merge_outputs=True)
    exe = out.simple_bind(mx.cpu(), data=(50, 2, 3))
    for _n, a in exe.arg_dict.items():
        a[:] = np.random.RandomState(0).uniform(-1, 1, a.shape)
    train = exe.forward(is_train=True)[0].asnumpy()
    test = exe.forward(is_train=False)[0].asnumpy()
    assert (train == 0).mean() > 0.3 and (test == 0).mean() < 0.05
    z = mx.rnn.ZoneoutCell(mx.rnn.GRUCell(4, prefix="z_"), zoneout_outputs=0.3)
    out, _ = z.unroll(3, x, merge_outputs=True)
    assert out.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 4)]


def test_cell_errors():
    with pytest.raises(MXNetError, match="unfuse"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(2))
    bi = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="a_"), mx.rnn.RNNCell(2, prefix="b_"))
    with pytest.raises(NotImplementedError):
        bi(mx.sym.var("x"), bi.begin_state())
    base = mx.rnn.LSTMCell(2)
    mx.rnn.ResidualCell(base)
    with pytest.raises(MXNetError, match="modifier"):
        base.begin_state()
    with pytest.raises(ParamError):
        mx.rnn.FusedRNNCell(2, mode="tanh")
    with pytest.raises(MXNetError):
        mx.rnn.RNNCell(2).unroll(2, inputs=None)


def test_rnn_checkpoint_round_trip(tmp_path):
    cell = mx.rnn.LSTMCell(2, prefix="l_")
    out, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    args, _, _ = out.infer_shape(data=(1, 2, 3))
    params = {n: mx.nd.array(np.random.rand(*s)) for n, s in zip(out.list_arguments(), args)
              if n != "data"}
    prefix = str(tmp_path / "lm")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 1, out, params, {})
    saved = mx.nd.load(prefix + "-0001.params")
    assert "arg:l_i2h_f_weight" in saved                    # unpacked on disk, as MXNet
    sym, arg, aux = mx.rnn.load_rnn_checkpoint(cell, prefix, 1)
    assert sorted(arg) == sorted(params)
    for k in params:
        assert_almost_equal(arg[k], params[k])


@pytest.mark.parametrize("case", sorted(FIXTURE["rnn_op"]))
def test_rnn_operator_matches_mxnet(case):
    want, got = FIXTURE["rnn_op"][case], rnn_op_cases(mx)[case]
    for key in ("outs", "args", "shapes"):
        assert got[key] == want[key], key
    for g, w in zip(got["vals"], want["vals"]):
        assert_almost_equal(np.array(g), np.array(w), rtol=1e-4, atol=2e-5)
    for name, w in want["grads"].items():
        assert_almost_equal(np.array(got["grads"][name]), np.array(w), rtol=1e-4, atol=2e-5)


def test_rnn_operator_numeric_gradient_and_dropout():
    s = mx.sym.RNN(mx.sym.var("data"), mx.sym.var("p"), mx.sym.var("h"), state_size=2,
                   num_layers=2, mode="gru", name="rnn")
    assert s.list_outputs() == ["rnn_output"]
    args, _, _ = s.infer_shape(data=(2, 1, 2))
    rng = np.random.RandomState(3)
    loc = {n: rng.uniform(-1, 1, sh) for n, sh in zip(s.list_arguments(), args)}
    check_numeric_gradient(s, loc, rtol=1e-5, atol=1e-7, dtype=np.float64)
    # dropout between layers: inference is deterministic, training masks and back-propagates
    d = mx.sym.RNN(mx.sym.var("data"), mx.sym.var("p"), mx.sym.var("h"), state_size=8,
                   num_layers=2, mode="rnn_tanh", p=0.5, name="rnn")
    exe = d.simple_bind(mx.cpu(), data=(3, 4, 2))
    for _name, arr in exe.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape)
    a = exe.forward(is_train=False)[0].asnumpy()
    assert np.array_equal(a, exe.forward(is_train=False)[0].asnumpy())
    t1 = exe.forward(is_train=True)[0].asnumpy()
    exe.backward(mx.nd.ones(t1.shape))
    g1 = exe.grad_dict["p"].asnumpy().copy()
    assert not np.allclose(t1, a) and np.isfinite(g1).all() and np.abs(g1).sum() > 0
    with pytest.raises(ParamError):
        mx.sym.RNN(mx.sym.var("data"), state_size=2, num_layers=1, mode="gru",
                   projection_size=2)


def test_rnn_operator_from_several_threads():
    """Concurrent calls of the fused op must not mix their values."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(3)
    n_par = 4 * (3 * 5 + 5 * 5 + 5 + 5)  # lstm: 4 gates x (W_x, W_h, b_x, b_h)
    params = mx.nd.array(rng.uniform(-0.3, 0.3, n_par))
    datas = [mx.nd.array(rng.uniform(-1, 1, (40, 2, 3))) for _ in range(8)]
    zeros = mx.nd.zeros((1, 2, 5))

    def run(x):
        return mx.nd.RNN(x, params, zeros, zeros, state_size=5, num_layers=1,
                         mode="lstm").asnumpy()
    alone = [run(x) for x in datas]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(run, datas * 6))
    for i, got in enumerate(together):
        np.testing.assert_array_equal(got, alone[i % len(datas)])
