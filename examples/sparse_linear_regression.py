"""Train the seed tutorial's sparse linear regression (csr data . row_sparse weight).

    python examples/sparse_linear_regression.py [--features 1000] [--rows 1000]
        [--batch-size 1] [--epochs 10]

Prints one JSON line with the MSE per epoch and the training speed.
"""
import argparse
import json
import time

import sparsym as mx


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--features", type=int, default=1000, help="feature dimension")
    p.add_argument("--rows", type=int, default=1000, help="training rows")
    p.add_argument("--density", type=float, default=0.01, help="csr density")
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args(argv)

    mx.random.seed(args.seed)
    train_data = mx.test_utils.rand_ndarray((args.rows, args.features), "csr", args.density)
    target = mx.nd.arange(1, args.features + 1).reshape((args.features, 1)) / args.features
    train_label = mx.nd.dot(train_data, target)
    it = mx.io.NDArrayIter(train_data, train_label, args.batch_size,
                           last_batch_handle="discard", label_name="label")
    init = mx.initializer.Normal(sigma=0.01)
    X = mx.sym.Variable("data", stype="csr")
    Y = mx.sym.Variable("label")
    w = mx.sym.Variable("weight", stype="row_sparse", shape=(args.features, 1), init=init)
    b = mx.sym.Variable("bias", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(X, w), b)
    lro = mx.sym.LinearRegressionOutput(data=pred, label=Y, name="lro")
    mod = mx.mod.Module(symbol=lro, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=init)
    mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=args.lr, momentum=0.9,
                                                  rescale_grad=1.0 / args.batch_size))
    metric = mx.metric.create("MSE")
    hist, t0 = [], time.perf_counter()
    for _ in range(args.epochs):
        it.reset()
        metric.reset()
        for batch in it:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
        hist.append(metric.get()[1])
    dt = time.perf_counter() - t0
    print(json.dumps({"mse": hist, "train_s": dt,
                      "batches_per_s": args.epochs * (args.rows // args.batch_size) / dt}))
    return hist[-1]


if __name__ == "__main__":
    main()
