"""Matrix factorization with sparse Embedding gradients on a generated low-rank ratings set.

    python examples/matrix_factorization.py                     # small default, ~10 s
    python examples/matrix_factorization.py --movielens-10m     # MovieLens-10M-sized data

The network is MXNet's example/sparse/matrix_factorization: user and item ids go through
``Embedding(sparse_grad=True)`` with row_sparse weights (each batch touches only its own
rows, so the gradient and the lazy SGD update are row_sparse), a relu and a
FullyConnected layer each, and the predicted rating is the dot product of the two.
The ratings come from a known low-rank model plus noise, with power-law user and item
popularity, so the noise level is the best achievable RMSE.

Prints one JSON line with the validation RMSE, the RMSE of always predicting the mean
and the noise floor.
"""
import argparse
import json
import time

import numpy as np

import sparsym as mx


def make_ratings(num_users, num_items, num_ratings, rank, noise, seed):
    """(users, items, ratings) from a rank-``rank`` model; popularity follows a power law."""
    rng = np.random.default_rng(seed)
    scale = rank ** -0.25          # dot products of the factors have unit variance
    U = rng.normal(size=(num_users, rank)) * scale
    V = rng.normal(size=(num_items, rank)) * scale

    def powerlaw(n, size):
        p = 1.0 / np.arange(1, n + 1) ** 0.8
        return rng.permutation(n)[rng.choice(n, size=size, p=p / p.sum())]

    users, items = powerlaw(num_users, num_ratings), powerlaw(num_items, num_ratings)
    r = 3.0 + (U[users] * V[items]).sum(axis=1) + rng.normal(scale=noise, size=num_ratings)
    return users.astype(np.float32), items.astype(np.float32), np.clip(r, 1, 5).astype(
        np.float32)


def matrix_fact_net(factor_size, num_hidden, max_user, max_item, dense=False):
    """MXNet's matrix factorization network (row_sparse embeddings unless ``dense``)."""
    stype = "default" if dense else "row_sparse"
    user = mx.sym.Variable("user")
    item = mx.sym.Variable("item")
    score = mx.sym.Variable("score")
    user_weight = mx.sym.Variable("user_weight", stype=stype)
    item_weight = mx.sym.Variable("item_weight", stype=stype)
    user = mx.sym.Embedding(data=user, weight=user_weight, sparse_grad=not dense,
                            input_dim=max_user, output_dim=factor_size, name="user_embed")
    item = mx.sym.Embedding(data=item, weight=item_weight, sparse_grad=not dense,
                            input_dim=max_item, output_dim=factor_size, name="item_embed")
    user = mx.sym.Activation(data=user, act_type="relu")
    user = mx.sym.FullyConnected(data=user, num_hidden=num_hidden, name="user_fc")
    item = mx.sym.Activation(data=item, act_type="relu")
    item = mx.sym.FullyConnected(data=item, num_hidden=num_hidden, name="item_fc")
    pred = mx.sym.sum(data=user * item, axis=1)
    pred = mx.sym.Flatten(data=pred)
    return mx.sym.LinearRegressionOutput(data=pred, label=score, name="lro")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--num-users", type=int, default=1000)
    p.add_argument("--num-items", type=int, default=500)
    p.add_argument("--num-ratings", type=int, default=80000)
    p.add_argument("--rank", type=int, default=4, help="rank of the generating model")
    p.add_argument("--noise", type=float, default=0.3, help="rating noise (the RMSE floor)")
    p.add_argument("--movielens-10m", action="store_true",
                   help="MovieLens-10M sizes: 71567 users, 10681 items, 10M ratings")
    p.add_argument("--factor-size", type=int, default=32, help="embedding width")
    p.add_argument("--num-hidden", type=int, default=32, help="FullyConnected width")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--wd", type=float, default=1e-5)
    p.add_argument("--dense", action="store_true",
                   help="dense embeddings and gradients (for comparison)")
    p.add_argument("--plot", metavar="PNG", help="write a training curve to this file")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.movielens_10m:
        args.num_users, args.num_items, args.num_ratings = 71567, 10681, 10_000_000
    return args


def main(argv=None):
    args = parse_args(argv)
    mx.random.seed(args.seed)
    users, items, ratings = make_ratings(args.num_users, args.num_items, args.num_ratings,
                                         args.rank, args.noise, args.seed)
    n_val = max(args.batch_size, len(ratings) // 10)
    tr, va = slice(n_val, None), slice(0, n_val)
    train = mx.io.NDArrayIter({"user": users[tr], "item": items[tr]}, {"score": ratings[tr]},
                              batch_size=args.batch_size, shuffle=True,
                              last_batch_handle="discard")
    val = mx.io.NDArrayIter({"user": users[va], "item": items[va]}, {"score": ratings[va]},
                            batch_size=args.batch_size)
    net = matrix_fact_net(args.factor_size, args.num_hidden, args.num_users, args.num_items,
                          args.dense)
    mod = mx.mod.Module(net, data_names=["user", "item"], label_names=["score"])
    callbacks = {}
    if args.plot:
        callbacks = mx.callback.TrainingCurve(args.plot, title="matrix factorization").callbacks()
    t0 = time.perf_counter()
    mod.fit(train, eval_data=val, eval_metric="rmse", num_epoch=args.epochs,
            optimizer="sgd", initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": args.lr, "momentum": args.momentum,
                              "wd": args.wd, "rescale_grad": 1.0 / args.batch_size},
            **callbacks)
    train_s = time.perf_counter() - t0
    rmse = dict(mod.score(val, "rmse"))["rmse"]
    baseline = float(np.sqrt(np.mean((ratings[va] - ratings[tr].mean()) ** 2)))
    # the weight gradient the executor produced: row_sparse unless --dense
    exe = mod._exec_group.execs[0] if hasattr(mod, "_exec_group") else None
    grad_stype = exe.grad_dict["user_weight"].stype if exe is not None else None
    print(json.dumps({"example": "matrix_factorization", "val_rmse": round(rmse, 4),
                      "mean_baseline_rmse": round(baseline, 4), "noise_floor": args.noise,
                      "user_weight_grad_stype": grad_stype, "train_s": round(train_s, 2)}))
    return rmse, baseline


if __name__ == "__main__":
    main()
