"""First run on a fresh machine: sparse logistic regression cold vs warm vs MXNet 1.9.1.

One epoch of ``LogisticRegressionOutput(dot(csr_batch, row_sparse weight) + bias)`` over an
Avazu-shaped LibSVM file (benchmarks/gen_avazu.py; 1M features, 200k rows by default),
batch 2048, trained with Module and a local kvstore as in benchmarks/train_sparse_logreg.py.
Each run is a fresh process, timed from its start to its end (import, parse, bind, train):

- ``cold``: sparsym with an empty Numba cache (a fresh ``NUMBA_CACHE_DIR``), as on a fresh
  machine: every kernel it uses compiles;
- ``warm``: the same command again on that cache;
- ``mxnet``: MXNet 1.9.1 (``--mxnet-python``), skipped when it is not installed.

Prints one JSON line per run (``seconds`` is the process wall time; ``compile_s`` the time in
Numba compilation and cache loads, ``compiled`` the number of signatures compiled), then one
summary line with the ratios (cold / MXNet, MXNet / warm). ``--profile`` adds, for the cold
run, one line per kernel with its compile seconds and signatures (the ``--top`` costliest).

``--workload lenet`` times a hybridized LeNet's first ``--lenet-batches`` training batches
instead (the dense primitives' first run): the sparsym lines add ``onednn_load_s`` (library
load, engine, stream), ``onednn_primitives`` and ``onednn_create_s`` (primitive descriptors
and JIT) next to Numba's ``compile_s``.

Usage::

    python benchmarks/first_run.py                 # 200k rows, 1M features, repeat 1
    python benchmarks/first_run.py --repeat 2 --profile
    python benchmarks/first_run.py --quick         # 50k rows
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from _quiet import Watch, under_load

HERE = os.path.dirname(os.path.abspath(__file__))
T_START = time.perf_counter()


def _profiler():
    """Per-dispatcher compile seconds and signature counts through numba.core.event."""
    import threading

    from numba.core import event

    stats, tls = {}, threading.local()

    class Prof(event.Listener):
        def on_start(self, ev):
            stack = getattr(tls, "stack", None)
            if stack is None:
                stack = tls.stack = []
            stack.append((time.perf_counter(), time.thread_time()))

        def on_end(self, ev):
            t0, c0 = tls.stack.pop()
            disp = ev.data.get("dispatcher")
            name = getattr(getattr(disp, "py_func", None), "__qualname__", "?")
            mod = getattr(getattr(disp, "py_func", None), "__module__", "?")
            s = stats.setdefault(f"{mod}.{name}", [0.0, 0, 0.0])
            s[1] += 1
            dt = time.perf_counter() - t0
            dc = time.thread_time() - c0
            if os.environ.get("FR_TIMELINE"):
                sys.stderr.write(f"TL {threading.get_ident() % 1000} {name} "
                                 f"{t0 - T_START:.2f} {dt:.2f} {len(tls.stack)}\n")
            if not tls.stack:  # outermost: wall time that the user waits, and CPU time
                s[0] += dt
                s[2] += dc

    event.register("numba:compile", Prof())
    return stats


def child(args):
    """One epoch in this process; print one JSON line."""
    stats = _profiler() if args.profile and args.pkg == "sparsym" else None
    if args.pkg == "sparsym":
        sys.path.insert(0, os.path.dirname(HERE))
    import importlib
    import logging
    mx = importlib.import_module(args.pkg)
    t_import = time.perf_counter() - T_START
    logging.getLogger().setLevel(logging.ERROR)
    if args.workload == "lenet":
        return child_lenet(args, mx, t_import)
    nf, bs = args.features, args.batch
    sys.path.insert(0, HERE)
    from train_sparse_logreg import build
    it, mod, _ = build(mx, args.file, nf, bs, True, "sgd",
                       {"learning_rate": 1.0, "rescale_grad": 1.0 / bs, "momentum": 0.0})

    def row_ids(batch):
        return {"weight": batch.data[0].indices}

    n = 0
    for batch in it:
        batch.label = [batch.label[0].reshape((bs, 1))]
        mod.prepare(batch, sparse_row_id_fn=row_ids)
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
        n += 1
    mod.get_outputs()[0].wait_to_read()
    out = {"pkg": args.pkg, "batches": n, "import_s": round(t_import, 3),
           "inproc_s": round(time.perf_counter() - T_START, 3),
           "cpu_s": round(time.process_time(), 3)}
    if args.pkg == "sparsym":
        from sparsym import _compile_notice
        out["compile_s"] = round(_compile_notice.compile_seconds(), 3)
    if stats is not None:
        out["compiled"] = sum(s[1] for s in stats.values())
        out["kernels"] = sorted(([k, round(v[0], 3), v[1], round(v[2], 3)]
                                 for k, v in stats.items()), key=lambda r: -r[1])
    print(json.dumps(out), flush=True)


def child_lenet(args, mx, t_import):
    """``--workload lenet``: a hybridized LeNet trained for ``--lenet-batches`` batches of
    64 28x28 images (convolution, pooling, dense: the dense primitives' first run)."""
    import numpy as np
    nn = mx.gluon.nn
    net = nn.HybridSequential()  # benchmarks/cnn_vs_mxnet.py's LeNet
    net.add(nn.Conv2D(20, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(50, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Flatten(), nn.Dense(500, activation="relu"), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.05, "momentum": 0.9})
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.rand(64, 1, 28, 28).astype("float32"))
    y = mx.nd.array(rng.randint(0, 10, 64))
    t_first = None
    for i in range(args.lenet_batches):
        with mx.autograd.record():
            l = loss(net(x), y)
        l.backward()
        trainer.step(64)
        l.wait_to_read()
        if i == 0:
            t_first = time.perf_counter() - T_START
    out = {"pkg": args.pkg, "workload": "lenet", "batches": args.lenet_batches,
           "import_s": round(t_import, 3), "first_batch_done_s": round(t_first, 3),
           "inproc_s": round(time.perf_counter() - T_START, 3),
           "cpu_s": round(time.process_time(), 3)}
    if args.pkg == "sparsym":
        from sparsym import _compile_notice
        from sparsym.kernels import onednn
        out["compile_s"] = round(_compile_notice.compile_seconds(), 3)
        info = onednn.cache_info()
        out["onednn"] = onednn.enabled()
        out["onednn_load_s"] = round(info["load_s"], 3)
        out["onednn_primitives"] = info["misses"]
        out["onednn_create_s"] = round(info["create_s"], 3)
    print(json.dumps(out), flush=True)


def _run(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:300]}
    out = json.loads(lines[-1])
    out["seconds"] = round(dt, 3)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pkg", choices=["sparsym", "mxnet"], default=None,
                    help="run one epoch in this process (used by the driver)")
    ap.add_argument("--file", default=None)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=1, help="cold/warm/MXNet rounds")
    ap.add_argument("--profile", action="store_true", help="per-kernel compile times (cold)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--quick", action="store_true", help="50k rows")
    ap.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    ap.add_argument("--workload", choices=["logreg", "lenet"], default="logreg",
                    help="logreg: the sparse epoch above; lenet: a hybridized LeNet's first "
                         "batches (oneDNN load, primitive creation and JIT counted)")
    ap.add_argument("--lenet-batches", type=int, default=20)
    args = ap.parse_args(argv)
    if args.pkg is not None:
        child(args)
        return
    if args.quick:
        args.rows = min(args.rows, 50_000)
    sys.path.insert(0, HERE)
    from gen_avazu import generate
    tmp = tempfile.mkdtemp(prefix="sparsym-first-run-")
    try:
        path = args.file
        if path is None:
            path = os.path.join(tmp, "avazu.libsvm")
            generate(path, args.rows, args.features)
        have_mx = os.path.exists(args.mxnet_python)
        base = [os.path.abspath(__file__), "--file", path, "--features", str(args.features),
                "--batch", str(args.batch), "--workload", args.workload,
                "--lenet-batches", str(args.lenet_batches)]
        # as a user's: Python writes its bytecode caches (pip installs them precompiled)
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
        env["SPARSYM_COMPILE_NOTICE"] = "0"
        for rnd in range(args.repeat):
            cache = os.path.join(tmp, f"numba-cache-{rnd}")
            res = {}
            watch = Watch()
            runs = [("cold", "sparsym"), ("warm", "sparsym"), ("mxnet", "mxnet")]
            for name, pkg in runs:
                if pkg == "mxnet" and not have_mx:
                    continue
                py = args.mxnet_python if pkg == "mxnet" else sys.executable
                extra = ["--profile"] if args.profile and name == "cold" else []
                r = _run([py] + base + ["--pkg", pkg] + extra,
                         dict(env, NUMBA_CACHE_DIR=cache))
                kernels = r.pop("kernels", None)
                res[name] = r
                print(json.dumps({"bench": "first_run", "run": name, "round": rnd,
                                  "rows": args.rows, "features": args.features,
                                  "batch": args.batch, **r}), flush=True)
                for k in (kernels or [])[:args.top]:
                    print(json.dumps({"bench": "first_run_kernel", "kernel": k[0],
                                      "compile_s": k[1], "compile_cpu_s": k[3],
                                      "signatures": k[2]}), flush=True)
            summ = {"bench": "first_run_summary", "round": rnd, "rows": args.rows,
                    **watch.done()}
            summ["under_load"] = under_load([summ])
            for name in ("cold", "warm", "mxnet"):
                if "seconds" in res.get(name, {}):
                    summ[f"{name}_s"] = res[name]["seconds"]
            for name in ("cold", "warm", "mxnet"):
                if "cpu_s" in res.get(name, {}):
                    summ[f"{name}_cpu_s"] = res[name]["cpu_s"]
            if "cold_s" in summ and "mxnet_s" in summ:
                summ["cold_over_mxnet"] = round(summ["cold_s"] / summ["mxnet_s"], 2)
                summ["mxnet_over_warm"] = round(summ["mxnet_s"] / summ["warm_s"], 2)
                # CPU seconds (all threads) move less with the machine's load than wall time
                summ["cpu_cold_over_mxnet"] = round(summ["cold_cpu_s"] / summ["mxnet_cpu_s"], 2)
                summ["cpu_mxnet_over_warm"] = round(summ["mxnet_cpu_s"] / summ["warm_cpu_s"], 2)
            print(json.dumps(summ), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
