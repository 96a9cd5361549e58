"""Record MXNet 1.9.1 symbol JSON, parameters, inputs and outputs of two small models that use
most nn operators (tests/ops/test_nn_mxnet_models.py loads them in sparsym):

    ~/mxref/bin/python tests/ops/make_mxnet_nn_model_fixtures.py
"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def cnn():
    x = mx.sym.var("data")
    c = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    b = mx.sym.BatchNorm(c, fix_gamma=False, name="bn")
    a = mx.sym.Activation(b, act_type="relu", name="relu")
    p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    d = mx.sym.Deconvolution(p, kernel=(2, 2), stride=(2, 2), num_filter=2, name="deconv")
    q = mx.sym.Pooling(d, kernel=(3, 3), pool_type="avg", pooling_convention="full",
                       global_pool=False, stride=(2, 2), name="pool2")
    f = mx.sym.Flatten(mx.sym.Dropout(q, p=0.3), name="flat")
    h = mx.sym.FullyConnected(f, num_hidden=6, name="fc1")
    h = mx.sym.LeakyReLU(h, act_type="elu", slope=0.3, name="elu")
    s = mx.sym.SliceChannel(mx.sym.Reshape(h, shape=(0, 2, 3)), num_outputs=2, axis=1,
                            squeeze_axis=True, name="split")
    z = mx.sym.concat(mx.sym.transpose(mx.sym.expand_dims(s[0], axis=2), axes=(0, 2, 1)),
                      mx.sym.expand_dims(s[1], axis=1), dim=1, name="cat")
    z = mx.sym.sum(mx.sym.clip(z, a_min=-1, a_max=2), axis=1, name="red")
    return mx.sym.log_softmax(z, axis=-1, name="out")


def rnn():
    x = mx.sym.var("data")
    e = mx.sym.Embedding(x, input_dim=10, output_dim=4, name="embed")
    cell = mx.rnn.FusedRNNCell(5, num_layers=2, mode="lstm", prefix="lstm_")
    out, _ = cell.unroll(3, e, layout="NTC", merge_outputs=True)
    gru = mx.rnn.GRUCell(3, prefix="gru_")
    out2, _ = gru.unroll(3, out, layout="NTC", merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(out2, shape=(-1, 3)), num_hidden=10, name="pred")
    return mx.sym.softmax(pred, name="prob")


def record(name, sym, shapes, int_inputs=()):
    rng = np.random.RandomState(0)
    args, _, aux = sym.infer_shape(**shapes)
    arrays = {}
    for n, s in zip(sym.list_arguments(), args):
        arrays["arg:" + n] = mx.nd.array(rng.randint(0, 10, s) if n in int_inputs
                                         else rng.uniform(-0.5, 0.5, s))
    for n, s in zip(sym.list_auxiliary_states(), aux):
        arrays["aux:" + n] = mx.nd.array(rng.uniform(0.5, 1.0, s))
    exe = sym.bind(mx.cpu(), {k[4:]: v for k, v in arrays.items() if k.startswith("arg:")},
                   aux_states={k[4:]: v for k, v in arrays.items() if k.startswith("aux:")})
    arrays["out:0"] = exe.forward(is_train=False)[0]
    sym.save(os.path.join(HERE, f"mxnet_{name}-symbol.json"))
    mx.nd.save(os.path.join(HERE, f"mxnet_{name}.params"), arrays)


record("nn_cnn", cnn(), {"data": (2, 3, 8, 8)})
record("nn_rnn", rnn(), {"data": (2, 3)}, int_inputs=("data",))
