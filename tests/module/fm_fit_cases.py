"""A factorization machine on LibSVM files (csr data, row_sparse weights ``w`` and ``v``)
trained by ``Module.fit`` with ``eval_data``: shared by the test and by
make_mxnet_fm_fit_fixtures.py, which runs it on MXNet 1.9.1. Every function takes the
engine module (``sparsym`` or ``mxnet``) as ``mx``."""
import os

import numpy as np

NF, K, BS, N_TRAIN, N_VAL = 60, 3, 16, 96, 48


def write_data(folder):
    """Write train.libsvm / val.libsvm (4 features a row) and return the initial weights."""
    rng = np.random.RandomState(0)
    for name, n in (("train.libsvm", N_TRAIN), ("val.libsvm", N_VAL)):
        with open(os.path.join(folder, name), "w") as f:
            for _ in range(n):
                cols = np.sort(rng.choice(NF, 4, replace=False))
                vals = rng.rand(4).round(3) + 0.1
                feats = " ".join("%d:%g" % (c, v) for c, v in zip(cols, vals))
                f.write("%d %s\n" % (rng.randint(2), feats))
    w0 = (rng.randn(NF, 1) * 0.1).astype(np.float32)
    v0 = (rng.randn(NF, K) * 0.1).astype(np.float32)
    return w0, v0


def fm_symbol(mx):
    x = mx.sym.Variable("data", stype="csr")
    v = mx.sym.Variable("v", shape=(NF, K), stype="row_sparse")
    w = mx.sym.Variable("w", shape=(NF, 1), stype="row_sparse")
    b = mx.sym.Variable("b", shape=(1,))
    linear = mx.sym.broadcast_add(mx.sym.dot(x, w), b)
    v_s = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    self_inter = mx.sym.dot(mx.sym.square(x), v_s)
    inter = 0.5 * mx.sym.square(mx.sym.dot(x, v))
    score = mx.sym.sum(mx.sym.Concat(linear, inter, dim=1), axis=1, keepdims=True)
    return mx.sym.LogisticRegressionOutput(score - 0.5 * self_inter,
                                           mx.sym.Variable("softmax_label"))


def batch_row_ids(batch):
    """MXNet's sparse_row_id_fn for the FM example: the batch's feature ids."""
    idx = batch.data[0].indices
    return {"w": idx, "v": idx}


def iters(mx, folder):
    def it(name):
        return mx.io.LibSVMIter(data_libsvm=os.path.join(folder, name), data_shape=(NF,),
                                batch_size=BS)
    return it("train.libsvm"), it("val.libsvm")


def fit(mx, folder, mode):
    """Train 3 epochs of Adam; ``mode``: 'kv_fn' (a KVStore and sparse_row_id_fn), 'kv'
    (a KVStore, no sparse_row_id_fn) or 'local' (one device, no store).

    Returns (module, val iterator)."""
    w0, v0 = write_data(folder)
    train, val = iters(mx, folder)
    mod = mx.mod.Module(fm_symbol(mx), data_names=["data"], label_names=["softmax_label"])
    args = {"w": mx.nd.array(w0).tostype("row_sparse"),
            "v": mx.nd.array(v0).tostype("row_sparse"), "b": mx.nd.zeros((1,))}
    kv = "local" if mode == "local" else mx.kv.create("local")
    mod.fit(train, eval_data=val, kvstore=kv, optimizer="adam",
            optimizer_params={"learning_rate": 0.05}, arg_params=args, num_epoch=3,
            sparse_row_id_fn=batch_row_ids if mode == "kv_fn" else None, eval_metric="mse")
    return mod, val


def fresh_predict(mx, mod, val):
    """Predictions and mse of a new inference Module given ``mod.get_params()``."""
    arg, aux = mod.get_params()
    fresh = mx.mod.Module(fm_symbol(mx), data_names=["data"], label_names=["softmax_label"])
    fresh.bind(val.provide_data, val.provide_label, for_training=False)
    fresh.set_params(arg, aux)
    return fresh.predict(val).asnumpy(), dict(fresh.score(val, "mse"))["mse"]
