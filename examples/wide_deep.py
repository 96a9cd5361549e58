"""Wide & deep classifier: a csr "wide" linear part plus embeddings and an MLP "deep" part.

    python examples/wide_deep.py                  # generated census-like data, ~15 s
    python examples/wide_deep.py --full-size      # 10x the rows, wider cross features

The network is MXNet's example/sparse/wide_deep (Cheng et al. 2016, on UCI Adult):

- wide: one-hot cross features as a csr batch times a row_sparse weight (num_linear, 2)
  plus a bias, so a batch reads and updates only the weight rows of its crosses;
- deep: the first columns of a dense batch are categorical ids, each looked up in a
  row_sparse ``contrib.SparseEmbedding`` table; the embeddings are concatenated with the
  continuous columns and go through two relu FullyConnected layers;
- the two logit vectors are added and trained jointly with SoftmaxOutput and Adam.

The data imitates the census set's shape: wide crosses, two categorical columns with
power-law frequencies and continuous columns; labels come from a known model with wide,
categorical and non-linear continuous effects, and the accuracy of that model (the Bayes
rate) is printed next to the result. Prints one JSON line with the test accuracy.
"""
import argparse
import json
import time

import numpy as np
import scipy.sparse as sps

import sparsym as mx


def make_census_like(num_rows, num_linear, num_wide_fields, embed_dims, num_cont, seed):
    """(csr wide features, dense [ids..., continuous...], labels, Bayes accuracy)."""
    rng = np.random.default_rng(seed)
    size = num_linear // num_wide_fields
    cols = rng.integers(0, size, size=(num_rows, num_wide_fields)) + \
        np.arange(num_wide_fields) * size
    wide = sps.csr_matrix((np.ones(cols.size, np.float32), cols.ravel(),
                           np.arange(0, cols.size + 1, num_wide_fields)),
                          shape=(num_rows, num_linear))
    wide.sort_indices()
    ids = []
    for d in embed_dims:
        p = 1.0 / np.arange(1, d + 1) ** 1.1
        ids.append(rng.choice(d, size=num_rows, p=p / p.sum()))
    cont = rng.normal(size=(num_rows, num_cont)).astype(np.float32)
    logit = rng.normal(scale=0.6, size=num_linear)[cols].sum(axis=1)
    for d, i in zip(embed_dims, ids):
        logit += rng.normal(scale=0.8, size=d)[i]
    # effects a linear model cannot express: they need the deep part
    logit += 1.5 * np.tanh(cont[:, 0] * cont[:, 1]) + np.abs(cont[:, 2]) - 0.8
    prob = 1.0 / (1.0 + np.exp(-logit))
    labels = (rng.random(num_rows) < prob).astype(np.float32)
    bayes = float(np.mean((prob > 0.5) == (labels > 0.5)))
    dense = np.column_stack(ids + [cont]).astype(np.float32)
    return wide, dense, labels, bayes


def wide_deep_model(num_linear_features, num_embed_features, num_cont_features, input_dims,
                    hidden_units):
    """MXNet's wide & deep network; ``hidden_units`` = (embedding width, fc1, fc2)."""
    # wide model
    csr_data = mx.sym.Variable("csr_data", stype="csr")
    label = mx.sym.Variable("softmax_label")
    norm_init = mx.initializer.Normal(sigma=0.01)
    # row_sparse weight: sparse gradient and lazy updates of the rows a batch touches
    weight = mx.sym.Variable("linear_weight", shape=(num_linear_features, 2), init=norm_init,
                             stype="row_sparse")
    bias = mx.sym.Variable("linear_bias", shape=(2,))
    dot = mx.sym.sparse.dot(csr_data, weight)
    linear_out = mx.sym.broadcast_add(dot, bias)
    # deep model
    dns_data = mx.sym.Variable("dns_data")
    # embedding features
    x = mx.sym.slice(data=dns_data, begin=(0, 0), end=(None, num_embed_features))
    embeds = mx.sym.split(data=x, num_outputs=num_embed_features, squeeze_axis=1)
    # continuous features
    x = mx.sym.slice(data=dns_data, begin=(0, num_embed_features),
                     end=(None, num_embed_features + num_cont_features))
    features = [x]
    for i, embed in enumerate(embeds):
        embed_weight = mx.sym.Variable("embed_%d_weight" % i, stype="row_sparse")
        features.append(mx.sym.contrib.SparseEmbedding(data=embed, weight=embed_weight,
                                                       input_dim=input_dims[i],
                                                       output_dim=hidden_units[0]))
    hidden = mx.sym.concat(*features, dim=1)
    hidden = mx.sym.FullyConnected(data=hidden, num_hidden=hidden_units[1])
    hidden = mx.sym.Activation(data=hidden, act_type="relu")
    hidden = mx.sym.FullyConnected(data=hidden, num_hidden=hidden_units[2])
    hidden = mx.sym.Activation(data=hidden, act_type="relu")
    deep_out = mx.sym.FullyConnected(data=hidden, num_hidden=2)
    return mx.sym.SoftmaxOutput(linear_out + deep_out, label, name="model")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--train-rows", type=int, default=30000)
    p.add_argument("--test-rows", type=int, default=8000)
    p.add_argument("--num-linear", type=int, default=3000, help="wide (cross) features")
    p.add_argument("--wide-fields", type=int, default=10, help="crosses per row")
    p.add_argument("--embed-dims", type=int, nargs="+", default=[200, 50],
                   help="vocabulary sizes of the categorical columns")
    p.add_argument("--num-cont", type=int, default=38, help="continuous columns")
    p.add_argument("--full-size", action="store_true",
                   help="300k training rows and 30000 wide features")
    p.add_argument("--hidden-units", type=int, nargs=3, default=[8, 50, 100],
                   metavar=("EMBED", "FC1", "FC2"))
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.001, help="Adam learning rate")
    p.add_argument("--plot", metavar="PNG", help="write a training curve to this file")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.full_size:
        args.train_rows, args.test_rows, args.num_linear = 300_000, 50_000, 30_000
    return args


def main(argv=None):
    args = parse_args(argv)
    mx.random.seed(args.seed)
    n = args.train_rows
    wide, dense, labels, bayes = make_census_like(n + args.test_rows, args.num_linear,
                                                  args.wide_fields, args.embed_dims,
                                                  args.num_cont, args.seed)

    def iterator(rows, shuffle):
        return mx.io.NDArrayIter({"csr_data": wide[rows], "dns_data": dense[rows]},
                                 {"softmax_label": labels[rows]}, batch_size=args.batch_size,
                                 shuffle=shuffle, last_batch_handle="discard")

    train, test = iterator(slice(0, n), True), iterator(slice(n, None), False)
    net = wide_deep_model(args.num_linear, len(args.embed_dims), args.num_cont,
                          args.embed_dims, args.hidden_units)
    mod = mx.mod.Module(net, data_names=["csr_data", "dns_data"],
                        label_names=["softmax_label"])
    callbacks = {}
    if args.plot:
        callbacks = mx.callback.TrainingCurve(args.plot, title="wide & deep").callbacks()
    t0 = time.perf_counter()
    mod.fit(train, eval_data=test, eval_metric="acc", num_epoch=args.epochs, optimizer="adam",
            optimizer_params={"learning_rate": args.lr, "rescale_grad": 1.0 / args.batch_size},
            initializer=mx.init.Xavier(), **callbacks)
    train_s = time.perf_counter() - t0
    acc = dict(mod.score(test, "acc"))["accuracy"]
    majority = float(max(labels[n:].mean(), 1 - labels[n:].mean()))
    print(json.dumps({"example": "wide_deep", "test_accuracy": round(acc, 4),
                      "majority_class_accuracy": round(majority, 4),
                      "bayes_accuracy": round(bayes, 4), "train_s": round(train_s, 2)}))
    return acc, majority, bayes


if __name__ == "__main__":
    main()
