"""Wall-clock time of every example at its default size (issue 9: each under a minute).

Runs each script in ``examples/`` as a fresh process (so import, Numba cache loading and
data generation count, as they do for a user) and prints one JSON line per example with
its wall time, exit code and the final metric line the example printed, then a summary.

Usage: python benchmarks/examples.py [--only NAME[,NAME...]] [--timeout SECONDS]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXAMPLES = os.path.join(ROOT, "examples")


def _last_json(text):
    """The last line of ``text`` that parses as a JSON object, or None."""
    for line in reversed(text.strip().splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def run_one(name, timeout):
    """Run examples/<name>.py with default arguments; one result record."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name + ".py")],
                              capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        rc, out = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", e.stdout or ""
        if isinstance(out, bytes):  # TimeoutExpired may carry bytes even with text=True
            out = out.decode(errors="replace")
    wall = time.perf_counter() - t0
    return {"bench": "example", "example": name, "wall_s": round(wall, 2), "rc": rc,
            "under_60s": bool(rc == 0 and wall < 60), "loadavg_1m": os.getloadavg()[0],
            "final": _last_json(out)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated example names")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    names = sorted(f[:-3] for f in os.listdir(EXAMPLES)
                   if f.endswith(".py") and not f.startswith("_"))
    if args.only:
        want = args.only.split(",")
        unknown = sorted(set(want) - set(names))
        if unknown:
            ap.error(f"unknown example(s) {unknown}; expected some of {names}")
        names = [n for n in names if n in want]
    rows = []
    for name in names:
        row = run_one(name, args.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"bench": "summary", "examples": len(rows),
                      "all_under_60s": all(r["under_60s"] for r in rows),
                      "max_wall_s": max((r["wall_s"] for r in rows), default=0.0)}))


if __name__ == "__main__":
    main()
