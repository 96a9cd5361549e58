"""Sparse linear classification (MXNet's example/sparse/linear_classification), local or
distributed.

    python examples/sparse_linear_classification.py [--kvstore local]
    sparsym-launch -n 2 -s 2 python examples/sparse_linear_classification.py \\
        --kvstore dist_sync

``softmax(dot(csr data, row_sparse weight) + bias)`` trained with SGD. Only the weight rows
a batch touches are pulled from the kvstore (``Module.prepare``) and only the rows its
gradient touches are pushed. Without ``--data`` a separable problem is generated; each
global batch of ``--batch-size`` rows is split evenly among the workers, so a dist_sync run
makes exactly the updates of the local run and ends at the same loss. ``--data FILE``
reads LibSVM (zero-based features) through ``mx.io.LibSVMIter``, one part per worker.

Every worker prints one JSON line: the final negative log-likelihood over the whole data
set (``loss``), the training metric per epoch and the samples/s of this worker.
"""
import argparse
import json
import time

import numpy as np

import sparsym as mx


def make_data(rows, features, nnz, seed):
    """A linearly separable csr problem: label = [x . w_true > 0]."""
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(features)
    cols = np.sort(np.stack([rng.choice(features, nnz, replace=False) for _ in range(rows)]),
                   axis=1)
    vals = rng.standard_normal((rows, nnz)).astype(np.float32)
    label = ((vals * w_true[cols]).sum(1) > 0).astype(np.float32)
    indptr = np.arange(0, rows * nnz + 1, nnz, dtype=np.int64)
    return vals.ravel(), cols.ravel().astype(np.int64), indptr, label


def worker_rows(rows, batch_size, rank, num_workers):
    """Row ids of this worker: its 1/num_workers share of every global batch."""
    per = batch_size // num_workers
    starts = np.arange(0, rows - batch_size + 1, batch_size)
    return np.concatenate([np.arange(s + rank * per, s + (rank + 1) * per) for s in starts])


def build_module(features):
    data = mx.sym.Variable("data", stype="csr")
    label = mx.sym.Variable("softmax_label")
    weight = mx.sym.Variable("weight", shape=(features, 2), stype="row_sparse",
                             init=mx.initializer.Normal(sigma=0.01))
    bias = mx.sym.Variable("bias", shape=(2,))
    out = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    net = mx.sym.SoftmaxOutput(data=out, label=label, name="softmax")
    return mx.mod.Module(symbol=net, data_names=["data"], label_names=["softmax_label"])


def full_loss(mod, csr, label):
    """Negative log-likelihood of the trained model over the whole data set (numpy)."""
    arg, _ = mod.get_params()
    w = arg["weight"].tostype("default").asnumpy()
    b = arg["bias"].asnumpy()
    logits = csr.asscipy() @ w + b
    logits -= logits.max(1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return float(-logp[np.arange(len(label)), label.astype(np.int64)].mean())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kvstore", default="local", help="local, dist_sync, dist_async, ...")
    p.add_argument("--data", default=None, help="LibSVM training file (default: generated)")
    p.add_argument("--features", type=int, default=1000)
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--nnz", type=int, default=10, help="non-zeros per generated row")
    p.add_argument("--batch-size", type=int, default=100, help="global batch size")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args(argv)

    kv = mx.kv.create(args.kvstore) if "dist" in args.kvstore else None
    rank, nworkers = (kv.rank, kv.num_workers) if kv else (0, 1)
    if args.batch_size % nworkers:
        p.error(f"--batch-size {args.batch_size} must be a multiple of the {nworkers} workers")
    batch = args.batch_size // nworkers
    mx.random.seed(args.seed)

    if args.data:
        it = mx.io.LibSVMIter(data_libsvm=args.data, data_shape=(args.features,),
                              batch_size=batch, num_parts=nworkers, part_index=rank)
        full = None
    else:
        vals, cols, indptr, label = make_data(args.rows, args.features, args.nnz, args.seed)
        full = mx.nd.sparse.csr_matrix((vals, cols, indptr), shape=(args.rows, args.features))
        mine = worker_rows(args.rows, args.batch_size, rank, nworkers)
        it = mx.io.NDArrayIter(full.asscipy()[mine], label[mine], batch,
                               last_batch_handle="discard")

    mod = build_module(args.features)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.initializer.Normal(sigma=0.01))
    mod.init_optimizer(kvstore=kv or "local", optimizer="sgd",
                       optimizer_params={"learning_rate": args.lr})
    metric = mx.metric.create("nll_loss")

    def row_ids(b):
        return {"weight": b.data[0].indices}

    history, samples, t0 = [], 0, time.perf_counter()
    for _ in range(args.epochs):
        it.reset()
        metric.reset()
        for b in it:
            if kv is not None:
                mod.prepare(b, sparse_row_id_fn=row_ids)
            mod.forward_backward(b)
            mod.update()
            mod.update_metric(metric, b.label)
            samples += b.data[0].shape[0]
        history.append(metric.get()[1])
    elapsed = time.perf_counter() - t0
    result = {"kvstore": args.kvstore, "rank": rank, "num_workers": nworkers,
              "train_nll": history, "samples_per_s": samples / elapsed}
    if full is not None:
        result["loss"] = full_loss(mod, full, label)
    print(json.dumps(result), flush=True)
    if kv is not None:
        kv._barrier()    # keep the servers up until every worker has pulled its final rows
    return result


if __name__ == "__main__":
    main()
