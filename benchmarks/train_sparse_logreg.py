"""Sparse logistic regression over Avazu-shaped LibSVM data: sparsym vs MXNet 1.9.1.

The model is MXNet's sparse linear classification example reduced to one output:
``LogisticRegressionOutput(dot(csr_batch, row_sparse weight (F, 1)) + bias)``, trained with
Module (forward, backward, update) on batches from ``LibSVMIter``, with
``mod.prepare(batch, sparse_row_id_fn)`` pulling the batch's weight rows before each step.

Two update paths are measured (``--kv``):

- ``kvstore``: a ``mx.kv.create('local')`` instance is passed to the module, so updates run
  on the store (update_on_kvstore) and ``prepare`` row_sparse_pulls the batch's rows;
- ``none``: ``kvstore=None``: the optimizer updates the executor's weight in place and
  ``prepare`` has nothing to pull.

Each configuration runs in its own process (``--pkg sparsym`` or ``--pkg mxnet``, the latter
with the MXNet venv's python). One JSON line per run: samples/s over the timed epochs
(after a warm-up epoch that also compiles sparsym's Numba kernels), samples per CPU-second of
the process (all its threads; steadier than wall time on a shared machine) and the mean log
loss of the epoch after the timed ones. MXNet 1.9.1's wheel cannot bind batch 8192 x 1M
features (its dense shape size overflows int32); that run is attempted and its error
reported.

Usage::

    python benchmarks/train_sparse_logreg.py                    # the full side-by-side table
    python benchmarks/train_sparse_logreg.py --rows 100000 --epochs 2
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build(mx, path, nf, bs, use_kv, optimizer, opt_params):
    """(LibSVMIter, bound Module with optimizer, kvstore or None) of the model above."""
    data = mx.sym.Variable("data", stype="csr")
    weight = mx.sym.Variable("weight", stype="row_sparse", shape=(nf, 1),
                             init=mx.init.Normal(0.01))
    bias = mx.sym.Variable("bias", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    net = mx.sym.LogisticRegressionOutput(pred, mx.sym.Variable("label"), name="out")
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(nf,), batch_size=bs)
    mod = mx.mod.Module(net, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=[mx.io.DataDesc("label", (bs, 1))])
    mod.init_params(mx.init.Zero())
    kv = mx.kv.create("local") if use_kv else None
    mod.init_optimizer(kvstore=kv, optimizer=optimizer, optimizer_params=opt_params)
    return it, mod, kv


def run_one(args):
    """Train in this process with package ``args.pkg``; print one JSON line."""
    import numpy as np
    if args.pkg == "sparsym":
        sys.path.insert(0, os.path.dirname(HERE))
    mx = importlib.import_module(args.pkg)
    import logging
    logging.getLogger().setLevel(logging.ERROR)
    nf, bs = args.features, args.batch
    opt_params = {"learning_rate": args.lr, "rescale_grad": 1.0 / bs}
    if args.optimizer == "sgd":
        opt_params["momentum"] = 0.0
    it, mod, kv = build(mx, args.file, nf, bs, args.kv == "kvstore", args.optimizer, opt_params)

    def row_ids(batch):
        return {"weight": batch.data[0].indices}

    def epoch(timed):
        it.reset()
        loss_sum, n, samples = 0.0, 0, 0
        for batch in it:
            batch.label = [batch.label[0].reshape((bs, 1))]
            mod.prepare(batch, sparse_row_id_fn=row_ids if kv is not None else None)
            mod.forward(batch, is_train=True)
            mod.backward()
            mod.update()
            samples += bs
            if not timed or args.track_loss:
                p = np.clip(mod.get_outputs()[0].asnumpy().ravel(), 1e-7, 1 - 1e-7)
                y = batch.label[0].asnumpy().ravel()
                k = bs - (batch.pad or 0)
                loss_sum += float(-(y[:k] * np.log(p[:k]) + (1 - y[:k]) *
                                    np.log(1 - p[:k])).sum())
                n += k
        return samples, (loss_sum / n if n else float("nan"))

    t0 = time.perf_counter()
    epoch(timed=False)  # warm-up (Numba compilation, allocator)
    warm = time.perf_counter() - t0
    total, t0, c0 = 0, time.perf_counter(), time.process_time()
    for _ in range(args.epochs):
        samples, _ = epoch(timed=True)
        total += samples
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    _, loss = epoch(timed=False)  # the loss after the timed epochs (one more epoch)
    print(json.dumps({"pkg": args.pkg, "version": getattr(mx, "__version__", "?"),
                      "optimizer": args.optimizer, "kv": args.kv, "batch": bs,
                      "features": nf, "samples_per_s": round(total / dt, 1),
                      "samples_per_cpu_s": round(total / dc, 1),
                      "timed_epochs": args.epochs, "warmup_s": round(warm, 2),
                      "final_logloss": round(loss, 5)}), flush=True)


def io_pass(args):
    """One JSON line: MB/s of full passes of ``LibSVMIter`` (best of ``--epochs``)."""
    if args.pkg == "sparsym":
        sys.path.insert(0, os.path.dirname(HERE))
    mx = importlib.import_module(args.pkg)
    best, best_cpu, rows = None, None, 0
    for _ in range(max(1, args.epochs)):
        t0, c0 = time.perf_counter(), time.process_time()
        it = mx.io.LibSVMIter(data_libsvm=args.file, data_shape=(args.features,),
                              batch_size=args.batch)
        rows = 0
        for b in it:
            b.data[0].wait_to_read()
            rows += args.batch - (b.pad or 0)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        best = dt if best is None else min(best, dt)
        best_cpu = dc if best_cpu is None else min(best_cpu, dc)
    mb = os.path.getsize(args.file) / 1e6
    print(json.dumps({"pkg": args.pkg, "bench": "LibSVMIter pass", "batch": args.batch,
                      "rows": rows, "MB_per_s": round(mb / best, 1), "seconds": round(best, 3),
                      "MB_per_cpu_s": round(mb / best_cpu, 1)}), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pkg", choices=["sparsym", "mxnet"], default=None,
                    help="run one configuration in this process (used by the driver)")
    ap.add_argument("--file", default=None)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--kv", choices=["kvstore", "none"], default="kvstore")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--track-loss", action="store_true")
    ap.add_argument("--io", action="store_true", help="time LibSVMIter passes only")
    ap.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    args = ap.parse_args(argv)
    if args.lr is None:
        args.lr = {"sgd": 1.0, "adam": 0.01}.get(args.optimizer, 0.1)
    if args.pkg is not None:
        io_pass(args) if args.io else run_one(args)
        return

    sys.path.insert(0, HERE)
    from gen_avazu import generate
    tmp = None
    path = args.file
    if path is None:
        tmp = tempfile.TemporaryDirectory()
        path = os.path.join(tmp.name, "avazu.libsvm")
        generate(path, args.rows, args.features)
    print(json.dumps({"file_MB": round(os.path.getsize(path) / 1e6, 1), "rows": args.rows,
                      "features": args.features}), flush=True)
    have_mx = os.path.exists(args.mxnet_python)
    # MXNet 1.9.1's LibSVMIter segfaults at batch 8192 x 1M features (int32 sizes)
    for pkg, bs in (("mxnet", 2048), ("sparsym", 2048), ("sparsym", 8192)):
        if pkg == "mxnet" and not have_mx:
            continue
        cmd = [args.mxnet_python if pkg == "mxnet" else sys.executable,
               os.path.abspath(__file__), "--pkg", pkg, "--file", path, "--features",
               str(args.features), "--batch", str(bs), "--epochs", "3", "--io"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(([ln for ln in r.stdout.splitlines() if ln.startswith("{")] or
               [json.dumps({"pkg": pkg, "bench": "LibSVMIter pass",
                            "error": r.stderr[-300:]})])[-1], flush=True)
    configs = [(opt, kv, 2048) for opt in ("sgd", "adam") for kv in ("kvstore", "none")]
    configs += [("sgd", "kvstore", 8192), ("adam", "kvstore", 8192)]
    for opt, kv, bs in configs:
        for pkg in ("mxnet", "sparsym"):
            if pkg == "mxnet" and not have_mx:
                continue
            lr = {"sgd": 1.0, "adam": 0.01}[opt]
            cmd = [args.mxnet_python if pkg == "mxnet" else sys.executable,
                   os.path.abspath(__file__), "--pkg", pkg, "--file", path, "--features",
                   str(args.features), "--batch", str(bs), "--optimizer", opt, "--lr",
                   str(lr), "--kv", kv, "--epochs", str(args.epochs)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            if r.returncode == 0 and lines:
                print(lines[-1], flush=True)
            else:
                err = (r.stderr.strip().splitlines() or ["?"])
                msg = next((ln for ln in reversed(err) if "Error" in ln), err[-1])
                print(json.dumps({"pkg": pkg, "optimizer": opt, "kv": kv, "batch": bs,
                                  "error": msg[:300]}), flush=True)


if __name__ == "__main__":
    main()
