"""Seed bind benchmark side by side: ms per shared DataParallelExecutorGroup, sparsym vs
MXNet 1.9.1.

Runs ``../shared/seeds/seed_bind_bench.py`` (unchanged) ``--runs`` times per package,
alternating packages so both see the same machine load, and prints each run's JSON line,
then one summary line with the best run of each and their ratio.

Usage::

    python benchmarks/bind_groups.py --runs 3 --repeat 100
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "seeds",
                    "seed_bind_bench.py")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--script", default=SEED)
    ap.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    args = ap.parse_args(argv)
    pkgs = [("sparsym", sys.executable)]
    if os.path.exists(args.mxnet_python):
        pkgs.insert(0, ("mxnet", args.mxnet_python))
    best = {}
    for _ in range(args.runs):
        for pkg, py in pkgs:
            env = dict(os.environ, MXPKG=pkg)
            if pkg == "sparsym":
                env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH",
                                                                                 "")
            r = subprocess.run([py, args.script, "--repeat", str(args.repeat)], env=env,
                               capture_output=True, text=True)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            if r.returncode or not lines:
                print(json.dumps({"pkg": pkg, "error": r.stderr.strip()[-300:]}), flush=True)
                continue
            rec = json.loads(lines[-1])
            print(json.dumps(rec), flush=True)
            ms = rec["ms_per_shared_group"]
            best[pkg] = min(best.get(pkg, ms), ms)
    summary = {"bench": "seed_bind_bench", "best_ms_per_shared_group": best}
    if len(best) == 2:
        summary["ratio_sparsym_over_mxnet"] = round(best["sparsym"] / best["mxnet"], 3)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
