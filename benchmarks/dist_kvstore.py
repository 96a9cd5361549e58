"""Distributed KVStore benchmark: push+pull latency/throughput and end-to-end training.

    python benchmarks/dist_kvstore.py [--reps 30] [--no-mxnet] [--no-e2e]

Prints JSON lines:

- ``pushpull``: one worker, dist_sync, SGD on the servers, median time of one push + pull
  round for dense values and for row_sparse values (push k rows, ``row_sparse_pull`` the
  same k rows of a 100000 x 16 weight), with 1 and 2 servers; ``MBps`` counts the payload
  both ways.
  The same rounds on MXNet 1.9.1's ps-lite dist kvstore (scheduler and servers as local
  processes on 127.0.0.1) when ``~/mxref/bin/python`` exists.
- ``e2e``: ``examples/sparse_linear_classification.py`` (dist_sync through sparsym-launch,
  joining this script's Ray cluster) with 1 and 2 workers, and the local run: samples/s
  summed over the workers and the final loss.
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
MXPY = os.path.expanduser("~/mxref/bin/python")
DENSE = [(100, 10), (1000, 100), (10000, 100)]
RSP_SHAPE, RSP_ROWS = (100_000, 16), [100, 1000, 10000]


def emit(rec):
    print(json.dumps(rec), flush=True)


# ----------------------------------------------------------------------------- cases
def cases():
    """(name, shape, stype, rows pushed) for both implementations."""
    out = [("dense", s, "default", s[0]) for s in DENSE]
    out += [("row_sparse", RSP_SHAPE, "row_sparse", k) for k in RSP_ROWS]
    return out


CASE_CODE = r'''
import json, sys, time
import numpy as np
def run_cases(mx, kv, cases, reps, impl, servers):
    rng = np.random.default_rng(0)
    # an updater on the servers (MXNet's server fails on a row_sparse push without one)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.01))
    for key, (name, shape, stype, k) in enumerate(cases):
        shape = tuple(shape)
        if stype == "row_sparse":
            # every row present: MXNet's server rejects a row_sparse init without rows
            kv.init(key, mx.nd.ones(shape).tostype("row_sparse"))
            ids = np.sort(rng.choice(shape[0], k, replace=False)).astype(np.int64)
            g = mx.nd.sparse.row_sparse_array((np.ones((k,) + shape[1:], np.float32), ids),
                                              shape=shape)
            out = mx.nd.sparse.zeros("row_sparse", shape)
            rid = mx.nd.array(ids, dtype="int64")
            def step():
                kv.push(key, g)
                kv.row_sparse_pull(key, out=out, row_ids=rid)
                out.wait_to_read()
        else:
            kv.init(key, mx.nd.zeros(shape))
            g, out = mx.nd.ones(shape), mx.nd.zeros(shape)
            def step():
                kv.push(key, g)
                kv.pull(key, out=out)
                out.wait_to_read()
        for _ in range(3):
            step()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        ms = float(np.median(times) * 1e3)
        nbytes = k * int(np.prod(shape[1:])) * 4 * 2
        print(json.dumps({"bench": "pushpull", "impl": impl, "stype": stype,
                          "shape": list(shape), "rows": k, "servers": servers,
                          "ms": round(ms, 3), "MBps": round(nbytes / ms / 1e3, 1)}), flush=True)
'''


def bench_sparsym(reps, servers):
    import sparsym as mx
    from sparsym.kvstore.dist import DistConfig, start_servers
    group = start_servers(config=DistConfig.from_env(num_workers=1, num_servers=servers))
    kv = group.worker("dist_sync", 0)
    ns = {}
    exec(CASE_CODE, ns)
    ns["run_cases"](mx, kv, cases(), reps, "sparsym", servers)
    kv.close()
    group.shutdown()


MX_WORKER = CASE_CODE + r'''
import mxnet as mx
kv = mx.kv.create("dist_sync")
run_cases(mx, kv, json.loads(sys.argv[1]), int(sys.argv[2]), "mxnet-1.9.1", int(sys.argv[3]))
'''


def bench_mxnet(reps, servers, port):
    """MXNet's ps-lite kvstore: scheduler, servers and one worker on 127.0.0.1."""
    env = dict(os.environ, DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(port),
               DMLC_NUM_SERVER=str(servers), DMLC_NUM_WORKER="1", DMLC_NODE_HOST="127.0.0.1",
               DMLC_INTERFACE="lo", OMP_NUM_THREADS="1")
    helpers = [subprocess.Popen([MXPY, "-c", "import mxnet"], env=dict(env, DMLC_ROLE=role),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for role in ["scheduler"] + ["server"] * servers]
    try:
        proc = subprocess.run([MXPY, "-c", MX_WORKER, json.dumps(cases()), str(reps),
                               str(servers)], env=dict(env, DMLC_ROLE="worker"),
                              capture_output=True, text=True, timeout=600)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                print(line, flush=True)
        if proc.returncode:
            emit({"bench": "pushpull", "impl": "mxnet-1.9.1", "error": proc.stderr[-500:]})
    finally:
        for h in helpers:
            try:
                h.wait(timeout=20)
            except subprocess.TimeoutExpired:
                h.kill()


# ----------------------------------------------------------------------------- e2e
E2E_ARGS = ["--features", "100000", "--rows", "20000", "--nnz", "20", "--batch-size", "1000",
            "--epochs", "2"]


def _results(stdout):
    out = []
    for line in stdout.splitlines():
        _, _, rest = line.partition(" ") if line.startswith("[") else ("", "", line)
        if rest.startswith("{"):
            out.append(json.loads(rest))
    return out


def bench_e2e(address):
    example = os.path.join(ROOT, "examples", "sparse_linear_classification.py")
    local = subprocess.run([sys.executable, example, "--kvstore", "local"] + E2E_ARGS,
                           capture_output=True, text=True, timeout=900)
    res = _results(local.stdout)
    emit({"bench": "e2e", "impl": "sparsym", "kvstore": "local", "workers": 1,
          "samples_per_s": round(res[0]["samples_per_s"], 1), "loss": res[0]["loss"]})
    for n in (1, 2):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "sparsym.kvstore.launch", "-n", str(n),
                               "-s", str(n), "--address", address, sys.executable, example,
                               "--kvstore", "dist_sync"] + E2E_ARGS,
                              capture_output=True, text=True, timeout=1800, cwd=ROOT)
        res = _results(proc.stdout)
        if proc.returncode or len(res) != n:
            emit({"bench": "e2e", "workers": n, "error": (proc.stdout + proc.stderr)[-800:]})
            continue
        emit({"bench": "e2e", "impl": "sparsym", "kvstore": "dist_sync", "workers": n,
              "servers": n, "samples_per_s": round(sum(r["samples_per_s"] for r in res), 1),
              "loss": res[0]["loss"], "wall_s_with_startup": round(time.perf_counter() - t0, 1)})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--no-mxnet", action="store_true")
    p.add_argument("--no-e2e", action="store_true")
    p.add_argument("--mxnet-port", type=int, default=9391)
    args = p.parse_args()
    from sparsym.kvstore.dist import connect_ray
    ray = connect_ray(None, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address
    for servers in (1, 2):
        bench_sparsym(args.reps, servers)
        if not args.no_mxnet and os.path.exists(MXPY):
            bench_mxnet(args.reps, servers, args.mxnet_port + servers)
    if not args.no_e2e:
        bench_e2e(address)
    ray.shutdown()



if __name__ == "__main__":
    main()
