"""Dense training under load: the BLAS thread policy (kernels/blas.py), quiet vs loaded.

Two workloads, each in a fresh process, timed inside it (training only):

- ``mf``: examples/matrix_factorization.py (sparse embeddings, FullyConnected, Module.fit);
- ``mlp``: a Module MLP (784-256-256-10, relu, softmax) on random data, batch 128.

Each runs quiet (the machine as it is) and loaded (two busy background processes, one per
core of a 2-core machine), with the policy (one BLAS thread, all threads for large GEMMs)
and without it (``SPARSYM_BLAS_POLICY=0``: the BLAS library's default threads). Runs
alternate and each condition keeps its best of ``--repeat``. One JSON line per workload and
policy: ``quiet_s``, ``loaded_s`` and ``loaded_over_quiet``.

Usage::

    python benchmarks/blas_threads.py [--repeat 2] [--quick] [--only mf|mlp]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_SPIN = "while True:\n    pass\n"


def mlp(epochs, rows):
    """Train the MLP in this process; print one JSON line with the training seconds."""
    sys.path.insert(0, ROOT)
    import logging

    import numpy as np

    import sparsym as mx
    logging.getLogger().setLevel(logging.ERROR)
    rng = np.random.default_rng(0)
    x = rng.random((rows, 784), dtype=np.float32)
    y = rng.integers(0, 10, rows).astype(np.float32)
    it = mx.io.NDArrayIter(x, y, batch_size=128, shuffle=True, last_batch_handle="discard")
    net = mx.sym.Variable("data")
    for i, h in enumerate((256, 256)):
        net = mx.sym.Activation(mx.sym.FullyConnected(net, num_hidden=h, name=f"fc{i}"),
                                act_type="relu")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=10, name="out"),
                               name="softmax")
    mod = mx.mod.Module(net)
    t0 = time.perf_counter()
    mod.fit(it, num_epoch=epochs, optimizer="sgd", initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": 0.05, "momentum": 0.9})
    print(json.dumps({"train_s": round(time.perf_counter() - t0, 3)}), flush=True)


def _train_s(workload, policy, quick):
    env = dict(os.environ, SPARSYM_COMPILE_NOTICE="0", PYTHONPATH=ROOT)
    if not policy:
        env["SPARSYM_BLAS_POLICY"] = "0"
    if workload == "mf":
        cmd = [sys.executable, os.path.join(ROOT, "examples", "matrix_factorization.py"),
               "--epochs", "3" if quick else "6"]
    else:
        cmd = [sys.executable, os.path.abspath(__file__), "--child-mlp",
               "--rows", "10000" if quick else "30000"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"{workload}: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(lines[-1])["train_s"]


def _spinners(n):
    return [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(n)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="smaller runs")
    ap.add_argument("--only", choices=["mf", "mlp"], default=None)
    ap.add_argument("--busy", type=int, default=2, help="background processes when loaded")
    ap.add_argument("--child-mlp", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=30000, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_mlp:
        mlp(2, args.rows)
        return
    workloads = [args.only] if args.only else ["mf", "mlp"]
    for w in workloads:
        _train_s(w, True, True)  # fills the Numba cache: compile time is not the point here
        for policy in (True, False):
            best = {"quiet": None, "loaded": None}
            load = []
            for _ in range(args.repeat):
                for cond in ("quiet", "loaded"):
                    spin = _spinners(args.busy) if cond == "loaded" else []
                    try:
                        time.sleep(0.2 if spin else 0)
                        load.append(os.getloadavg()[0])
                        s = _train_s(w, policy, args.quick)
                    finally:
                        for p in spin:
                            p.kill()
                            p.wait()
                    best[cond] = s if best[cond] is None else min(best[cond], s)
            print(json.dumps({"bench": "blas_threads", "workload": w,
                              "policy": "one thread, all for large GEMMs" if policy
                              else "BLAS default threads",
                              "quiet_s": best["quiet"], "loaded_s": best["loaded"],
                              "loaded_over_quiet": round(best["loaded"] / best["quiet"], 2),
                              "busy_processes": args.busy,
                              "load_avg": round(sum(load) / len(load), 1)}), flush=True)


if __name__ == "__main__":
    main()
