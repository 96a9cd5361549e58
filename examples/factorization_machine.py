"""Factorization machine on csr click data: row_sparse factors, _square_sum, log loss and AUC.

    python examples/factorization_machine.py                        # generated data, ~15 s
    python examples/factorization_machine.py --criteo-size          # 1M features, 2M rows
    python examples/factorization_machine.py --data-train a.libsvm --data-test b.libsvm \\
        --num-features 1000000

The model is MXNet's example/sparse/factorization_machine (Rendle 2010):

    score = w0 + x.w + 1/2 sum_f ((x.V)_f^2 - (x^2).(sum_f V^2))

with csr input x, row_sparse factors V (num_features, factor_size) and linear weights w,
and the self-interaction term computed by ``_square_sum(V, axis=1, keepdims=True)``; a
LogisticRegressionOutput head gives click probabilities. Only the rows of V and w that
a batch touches are read, differentiated and updated (lazy Adam).

Without data files the script writes Criteo-like LibSVM files: every row picks one value
from each categorical field (field sizes and value frequencies follow power laws), and the
label is drawn from a known factorization machine; the AUC of that generating model is
printed as the ceiling. Prints one JSON line with the test log loss and AUC.
"""
import argparse
import json
import os
import tempfile
import time

import numpy as np

import sparsym as mx


# ---------------------------------------------------------------------- data
def make_fm_data(num_rows, num_features, num_fields, rank, seed):
    """Rows of one-hot fields and labels from a random FM; returns (indices, labels, oracle)."""
    rng = np.random.default_rng(seed)
    # field sizes fall off like a power law; together they cover num_features ids
    sizes = 1.0 / np.arange(1, num_fields + 1) ** 1.2
    sizes = np.maximum(2, (sizes / sizes.sum() * num_features).astype(np.int64))
    sizes[0] += num_features - sizes.sum()
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    cols = np.empty((num_rows, num_fields), dtype=np.int64)
    for f, (off, size) in enumerate(zip(offsets, sizes)):
        p = 1.0 / np.arange(1, size + 1) ** 1.1            # popular values dominate
        cols[:, f] = off + rng.choice(size, size=num_rows, p=p / p.sum())
    w = rng.normal(scale=0.3, size=num_features)
    V = rng.normal(scale=0.5 / np.sqrt(rank), size=(num_features, rank))
    xv = V[cols].sum(axis=1)
    score = -0.5 + w[cols].sum(axis=1) + 0.5 * ((xv ** 2).sum(1) - (V[cols] ** 2).sum((1, 2)))
    prob = 1.0 / (1.0 + np.exp(-score))
    labels = (rng.random(num_rows) < prob).astype(np.int64)
    return cols, labels, prob


def write_libsvm(path, cols, labels):
    """One ``label idx:1 ...`` line per row, indices sorted (LibSVMIter expects that)."""
    cols = np.sort(cols, axis=1)
    fmt = "%d " + " ".join(["%d:1"] * cols.shape[1])
    np.savetxt(path, np.column_stack([labels, cols]), fmt=fmt)


def auc(labels, scores):
    """Area under the ROC curve (rank statistic)."""
    from scipy.stats import rankdata
    y = np.asarray(labels) > 0
    r = rankdata(scores)
    npos, nneg = y.sum(), (~y).sum()
    return float((r[y].sum() - npos * (npos + 1) / 2) / (npos * nneg))


# ---------------------------------------------------------------------- model
def _square_sum(data, **kwargs):
    # MXNet keeps internal operators in mx.sym._internal; sparsym also has them at mx.sym
    return getattr(mx.sym, "_internal", mx.sym)._square_sum(data=data, **kwargs)


def factorization_machine_model(factor_size, num_features, init_sigma=0.01):
    """MXNet's factorization machine symbol (csr data, row_sparse v and w).

    v and w get ``wd_mult=1``: by MXNet's rule only names ending in ``_weight`` are decayed.
    """
    x = mx.sym.Variable("data", stype="csr")
    v = mx.sym.Variable("v", shape=(num_features, factor_size), stype="row_sparse",
                        init=mx.init.Normal(init_sigma), wd_mult=1.0)
    w = mx.sym.Variable("w", shape=(num_features, 1), stype="row_sparse",
                        init=mx.init.Zero(), wd_mult=1.0)
    w0 = mx.sym.Variable("w0", shape=(1,), init=mx.init.Zero(), wd_mult=0)
    w1 = mx.sym.broadcast_add(mx.sym.dot(x, w), w0)
    # squared terms for subtracting self interactions
    v_s = _square_sum(v, axis=1, keepdims=True)
    x_s = x.square()
    bd_sum = mx.sym.dot(x_s, v_s)
    # interactions
    w2 = mx.sym.dot(x, v)
    w2_squared = 0.5 * mx.sym.square(data=w2)
    w_all = mx.sym.Concat(w1, w2_squared, dim=1)
    sum1 = w_all.sum(axis=1, keepdims=True)
    sum2 = -0.5 * bd_sum
    model = sum1 + sum2
    y = mx.sym.Variable("softmax_label")
    return mx.sym.LogisticRegressionOutput(data=model, label=y, name="out")


# ---------------------------------------------------------------------- driver
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data-train", help="LibSVM training file (default: generate one)")
    p.add_argument("--data-test", help="LibSVM test file (default: generate one)")
    p.add_argument("--num-features", type=int, default=5000)
    p.add_argument("--num-fields", type=int, default=16, help="categorical fields per row")
    p.add_argument("--train-rows", type=int, default=60000)
    p.add_argument("--test-rows", type=int, default=10000)
    p.add_argument("--true-rank", type=int, default=4, help="rank of the generating model")
    p.add_argument("--criteo-size", action="store_true",
                   help="generate 1M features, 39 fields, 2M training rows")
    p.add_argument("--factor-size", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.005, help="Adam learning rate")
    p.add_argument("--wd", type=float, default=1e-5, help="weight decay of v and w")
    p.add_argument("--plot", metavar="PNG", help="write a training curve to this file")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.criteo_size:
        args.num_features, args.num_fields, args.train_rows, args.test_rows = (
            1_000_000, 39, 2_000_000, 200_000)
    if (args.data_train is None) != (args.data_test is None):
        p.error("--data-train and --data-test go together")
    return args


def main(argv=None):
    args = parse_args(argv)
    mx.random.seed(args.seed)
    oracle_auc = None
    tmp = None
    if args.data_train is None:
        tmp = tempfile.TemporaryDirectory(prefix="sparsym-fm-")
        cols, labels, prob = make_fm_data(args.train_rows + args.test_rows, args.num_features,
                                          args.num_fields, args.true_rank, args.seed)
        n = args.train_rows
        args.data_train = os.path.join(tmp.name, "train.libsvm")
        args.data_test = os.path.join(tmp.name, "test.libsvm")
        write_libsvm(args.data_train, cols[:n], labels[:n])
        write_libsvm(args.data_test, cols[n:], labels[n:])
        oracle_auc = auc(labels[n:], prob[n:])
    try:
        train = mx.io.LibSVMIter(data_libsvm=args.data_train, data_shape=(args.num_features,),
                                 batch_size=args.batch_size)
        test = mx.io.LibSVMIter(data_libsvm=args.data_test, data_shape=(args.num_features,),
                                batch_size=args.batch_size)
        net = factorization_machine_model(args.factor_size, args.num_features)
        mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
        callbacks = {}
        if args.plot:
            callbacks = mx.callback.TrainingCurve(args.plot, title="factorization machine",
                                                  ).callbacks()
        t0 = time.perf_counter()
        mod.fit(train, eval_data=test, eval_metric=["log_loss", "auc"], num_epoch=args.epochs,
                optimizer="adam",
                optimizer_params={"learning_rate": args.lr, "wd": args.wd,
                                  "rescale_grad": 1.0 / args.batch_size},
                **callbacks)
        train_s = time.perf_counter() - t0
        res = dict(mod.score(test, mx.metric.create(["log_loss", "auc"])))
    finally:
        if tmp is not None:
            tmp.cleanup()
    out = {"example": "factorization_machine", "test_log_loss": round(res["log_loss"], 4),
           "test_auc": round(res["auc"], 4), "train_s": round(train_s, 2)}
    if oracle_auc is not None:
        out["generating_model_auc"] = round(oracle_auc, 4)
    print(json.dumps(out))
    return res


if __name__ == "__main__":
    main()
