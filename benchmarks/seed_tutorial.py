"""Training steps/s of the seed tutorial loop at batch 1 and 32, sparsym vs MXNet 1.9.1.

    python benchmarks/seed_tutorial.py [--mxnet ~/mxref/bin/python] [--repeat 3]

Runs tests/conformance/seed_tutorial.py (the seed script, unchanged) in subprocesses,
alternating packages, and prints one JSON line per (package, batch) with the best
batches/s over the repeats, then one per batch with the speedup, the 1-minute load average
before and after and the share of cores other processes used meanwhile (``under_load`` when
other work shared the machine: benchmarks/_quiet.py).
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _quiet import Watch, under_load

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "conformance" / "seed_tutorial.py"


def run(python, pkg, batch, epochs):
    env = dict(os.environ, MXPKG=pkg, BATCH=str(batch), EPOCHS=str(epochs),
               MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0")
    res = subprocess.run([python, str(SCRIPT)], env=env, capture_output=True, text=True)
    line = [x for x in res.stdout.splitlines() if x.startswith("{")]
    if not line:
        raise RuntimeError(f"{pkg} failed:\n{res.stderr[-2000:]}")
    return json.loads(line[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mxnet", default=os.path.expanduser("~/mxref/bin/python"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()
    have_mx = os.path.exists(args.mxnet)
    for batch in (1, 32):
        best = {}
        watch = Watch()
        for _ in range(args.repeat):
            for pkg, py in (("sparsym", sys.executable), ("mxnet", args.mxnet)):
                if pkg == "mxnet" and not have_mx:
                    continue
                out = run(py, pkg, batch, args.epochs)
                if out["batches_per_s"] > best.get(pkg, {}).get("batches_per_s", 0):
                    best[pkg] = out
        for pkg, out in best.items():
            print(json.dumps({"bench": "seed_tutorial", "pkg": pkg, "batch": batch,
                              "batches_per_s": round(out["batches_per_s"], 1),
                              "final_mse": out["mse"][-1]}))
        seen = watch.done()
        seen["under_load"] = under_load([seen])
        if len(best) == 2:
            print(json.dumps({"bench": "seed_tutorial", "batch": batch, "speedup_vs_mxnet": round(
                best["sparsym"]["batches_per_s"] / best["mxnet"]["batches_per_s"], 2), **seen}))


if __name__ == "__main__":
    main()
