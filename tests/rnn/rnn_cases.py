"""Cell and FusedRNNCell cases run identically under MXNet 1.9.1 (to record the fixture, see
make_mxnet_rnn_fixtures.py) and under sparsym (tests compare the two)."""
import numpy as np


def _flat(x):
    out = []
    for e in x:
        out += _flat(e) if isinstance(e, (list, tuple)) else [e]
    return out


def _run(mx, make, layout="NTC", merge=True, T=3, N=2, C=4):
    # a fresh NameManager: auto-generated names (concat0...) do not depend on earlier tests
    with mx.name.NameManager():
        cell = make()
        outs, states = cell.unroll(T, mx.sym.var("data"), layout=layout, merge_outputs=merge)
    if isinstance(outs, list):
        outs = mx.sym.Group(outs)
    g = mx.sym.Group([outs] + _flat(states)) if states else outs
    shape = (N, T, C) if layout == "NTC" else (T, N, C)
    args, osh, _ = g.infer_shape(data=shape)
    names = g.list_arguments()
    rng = np.random.RandomState(0)
    vals = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s).astype("float32"))
            for n, s in zip(names, args)}
    out = g.bind(mx.cpu(), vals).forward()
    return {"args": names, "outs": g.list_outputs(), "shapes": [list(s) for s in osh],
            "vals": [o.asnumpy().round(5).tolist() for o in out]}


def cell_cases(mx):
    rnn = mx.rnn

    def seq():
        s = rnn.SequentialRNNCell()
        s.add(rnn.LSTMCell(5, prefix="l0_"))
        s.add(rnn.GRUCell(3, prefix="l1_"))
        return s

    def seqdrop():
        s = rnn.SequentialRNNCell()
        s.add(rnn.LSTMCell(5, prefix="l0_"))
        s.add(rnn.DropoutCell(0.5))
        s.add(rnn.LSTMCell(5, prefix="l1_"))
        return s

    cases = {
        "rnn": dict(make=lambda: rnn.RNNCell(5, prefix="r_")),
        "rnn_relu_list": dict(make=lambda: rnn.RNNCell(5, activation="relu", prefix="r_"),
                              merge=False),
        "lstm": dict(make=lambda: rnn.LSTMCell(5, prefix="l_")),
        "lstm_tnc": dict(make=lambda: rnn.LSTMCell(5, prefix="l_"), layout="TNC"),
        "gru": dict(make=lambda: rnn.GRUCell(5, prefix="g_")),
        "seq": dict(make=seq),
        "bi": dict(make=lambda: rnn.BidirectionalCell(rnn.LSTMCell(3, prefix="lf_"),
                                                      rnn.GRUCell(2, prefix="lb_"))),
        "bi_list": dict(make=lambda: rnn.BidirectionalCell(rnn.RNNCell(3, prefix="lf_"),
                                                           rnn.RNNCell(2, prefix="lb_")),
                        merge=False),
        "res": dict(make=lambda: rnn.ResidualCell(rnn.GRUCell(4, prefix="g_"))),
        "zone": dict(make=lambda: rnn.ZoneoutCell(rnn.RNNCell(4, prefix="z_"),
                                                  zoneout_outputs=0.5, zoneout_states=0.5)),
        "seqdrop": dict(make=seqdrop),
    }
    return {k: _run(mx, **v) for k, v in cases.items()}


def fused_cases(mx):
    res = {}
    for mode, bi, layers in [("lstm", False, 2), ("gru", True, 1), ("rnn_tanh", False, 1),
                             ("rnn_relu", True, 2), ("lstm", True, 2)]:
        cell = mx.rnn.FusedRNNCell(4, num_layers=layers, mode=mode, bidirectional=bi,
                                   get_next_state=True, prefix="f_")
        outs, states = cell.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
        g = mx.sym.Group([outs] + list(states))
        args, osh, _ = g.infer_shape(data=(3, 2, 5))
        rng = np.random.RandomState(1)
        vals = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s).astype("float32"))
                for n, s in zip(g.list_arguments(), args)}
        out = g.bind(mx.cpu(), vals).forward()
        un = cell.unpack_weights({"f_parameters": vals["f_parameters"]})
        o2, _ = cell.unfuse().unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
        repacked = cell.pack_weights(un)["f_parameters"].asnumpy()
        res[f"{mode}_{int(bi)}_{layers}"] = {
            "args": g.list_arguments(), "shapes": [list(s) for s in osh],
            "vals": [o.asnumpy().round(5).tolist() for o in out], "unpacked": sorted(un),
            "unfused_args": o2.list_arguments(),
            "repacked_equal": bool(np.array_equal(repacked, vals["f_parameters"].asnumpy()))}
    return res


def rnn_op_cases(mx):
    """MXNet's fused RNN operator: outputs, final states and all input gradients."""
    res = {}
    for mode, bi, layers in [("lstm", False, 2), ("gru", True, 1), ("rnn_tanh", True, 2),
                             ("rnn_relu", False, 1)]:
        ins = [mx.sym.var("data"), mx.sym.var("p"), mx.sym.var("h")]
        if mode == "lstm":
            ins.append(mx.sym.var("c"))
        s = mx.sym.RNN(*ins, state_size=3, num_layers=layers, mode=mode, bidirectional=bi,
                       state_outputs=True, name="rnn")
        args, _, _ = s.infer_shape(data=(3, 2, 4))
        rng = np.random.RandomState(0)
        vals = {n: mx.nd.array(rng.uniform(-0.5, 0.5, sh).astype("float32"))
                for n, sh in zip(s.list_arguments(), args)}
        grads = {n: mx.nd.zeros(sh) for n, sh in zip(s.list_arguments(), args)}
        exe = s.bind(mx.cpu(), vals, args_grad=grads)
        out = exe.forward(is_train=True)
        exe.backward([mx.nd.array(rng.uniform(-1, 1, o.shape).astype("float32")) for o in out])
        res[f"{mode}_{int(bi)}_{layers}"] = {
            "outs": s.list_outputs(), "args": s.list_arguments(),
            "shapes": [list(a) for a in args],
            "vals": [o.asnumpy().round(5).tolist() for o in out],
            "grads": {n: g.asnumpy().round(5).tolist() for n, g in exe.grad_dict.items()}}
    return res
