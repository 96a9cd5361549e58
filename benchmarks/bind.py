"""Binding benchmark (issue 4): simple_bind of an unrolled 5-layer LSTM-shaped graph.

The graph (built the same way for both packages) is Embedding -> SliceChannel -> per step
and layer: FullyConnected(x) + FullyConnected(h) -> SliceChannel(4) -> sigmoid/tanh
Activations -> c = f*c + i*g, h = o*tanh(c) -> Concat -> FullyConnected -> SoftmaxOutput,
with weights shared over the steps. Measured, per package, in one run:

- ``cold_ms``: simple_bind of the default bucket (length 5) with nothing cached;
- ``shared_ms``: simple_bind with ``shared_exec`` (+ shared_arg_names, shared_buffer) of a
  freshly built symbol for buckets 1..5, averaged over ``--repeat`` binds (sparsym: the first
  bind of each bucket length is a cold plan build, the rest are cache hits; the symbols are
  built outside the timing, as in the seed benchmark);
- ``hit_ms``: simple_bind of the same symbol and shapes again (sparsym's plan cache hit);
- memory (sparsym): tracemalloc's peak while running (forward + backward) each bucket alone,
  and all five one after the other; the plans' peak live bytes; the shared pool's bytes vs
  the sum of the buckets' own pooled plans (only ``out``-capable kernels use the pool).

MXNet 1.9.1 runs the same function in a subprocess (``~/mxref/bin/python``) in the same run,
and so does the seed benchmark (000, ``seed_bind_bench.py``) with ``--seed``. One JSON line
per measurement:

    python benchmarks/bind.py [--repeat 100] [--rounds 3] [--seed] [--no-mxnet]

The packages alternate over ``--rounds`` rounds and every measurement keeps its best round
(other jobs share the machine's two cores).
"""
import argparse
import gc
import importlib
import json
import os
import subprocess
import sys
import time

MXREF = os.path.expanduser("~/mxref/bin/python")
SEED = "/work/shared/seeds/seed_bind_bench.py"


def lstm_graph(mx, seq_len, layers=5, hidden=200, embed=200, vocab=50):
    """The unrolled LSTM from FullyConnected, SliceChannel, Activation and elementwise ops."""
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("softmax_label")
    x = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=embed, name="embed")
    steps = mx.sym.SliceChannel(x, num_outputs=seq_len, axis=1, squeeze_axis=True,
                                name="steps")
    steps = [steps[t] for t in range(seq_len)] if seq_len > 1 else [steps]
    w = {}
    for i in range(layers):
        for part in ("i2h", "h2h"):
            w[i, part] = (mx.sym.Variable(f"l{i}_{part}_weight"),
                          mx.sym.Variable(f"l{i}_{part}_bias"))
    h = [mx.sym.Variable(f"l{i}_begin_h") for i in range(layers)]
    c = [mx.sym.Variable(f"l{i}_begin_c") for i in range(layers)]
    outs = []
    for t in range(seq_len):
        inp = steps[t]
        for i in range(layers):
            name = f"l{i}_t{t}_"
            i2h = mx.sym.FullyConnected(inp, weight=w[i, "i2h"][0], bias=w[i, "i2h"][1],
                                        num_hidden=4 * hidden, name=name + "i2h")
            h2h = mx.sym.FullyConnected(h[i], weight=w[i, "h2h"][0], bias=w[i, "h2h"][1],
                                        num_hidden=4 * hidden, name=name + "h2h")
            gates = mx.sym.SliceChannel(i2h + h2h, num_outputs=4, name=name + "slice")
            in_gate = mx.sym.Activation(gates[0], act_type="sigmoid")
            forget = mx.sym.Activation(gates[1], act_type="sigmoid")
            trans = mx.sym.Activation(gates[2], act_type="tanh")
            out_gate = mx.sym.Activation(gates[3], act_type="sigmoid")
            c[i] = forget * c[i] + in_gate * trans
            h[i] = out_gate * mx.sym.Activation(c[i], act_type="tanh")
            inp = h[i]
        outs.append(inp)
    merged = mx.sym.Concat(*outs, dim=0) if seq_len > 1 else outs[0]
    pred = mx.sym.FullyConnected(merged, num_hidden=vocab, name="pred")
    label = mx.sym.Reshape(mx.sym.transpose(label), shape=(-1,))
    return mx.sym.SoftmaxOutput(pred, label=label, name="softmax")


def shapes(seq_len, batch, layers=5, hidden=200):
    s = {"data": (batch, seq_len), "softmax_label": (batch, seq_len)}
    for i in range(layers):
        s[f"l{i}_begin_h"] = s[f"l{i}_begin_c"] = (batch, hidden)
    return s


def measure(pkg, repeat, batch):
    """Run every measurement with package ``pkg``; returns a list of result dicts."""
    mx = importlib.import_module(pkg)
    ours = pkg != "mxnet"
    res = []
    sym5 = lstm_graph(mx, 5)
    names = [n for n in sym5.list_arguments()
             if n not in shapes(5, batch) and n not in ("data", "softmax_label")]
    if ours:
        mx.executor.clear_cache()
    gc.collect()
    t0 = time.perf_counter()
    base = sym5.simple_bind(mx.cpu(), **shapes(5, batch))
    cold = 1000 * (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(repeat):
        sym5.simple_bind(mx.cpu(), **shapes(5, batch))
    hit = 1000 * (time.perf_counter() - t0) / repeat
    res.append({"bench": "bind_cold", "pkg": pkg, "nodes": len(sym5.get_internals()),
                "ms": round(cold, 3)})
    res.append({"bench": "bind_same_again", "pkg": pkg, "ms": round(hit, 3),
                "cold_over_hit": round(cold / hit, 1)})
    buf = {}
    base = sym5.simple_bind(mx.cpu(), shared_buffer=buf, **shapes(5, batch))
    jobs = [(lstm_graph(mx, L), L) for L in [(i % 5) + 1 for i in range(repeat)]]
    gc.collect()
    t0 = time.perf_counter()
    execs = {}
    for s, L in jobs:
        execs[L] = s.simple_bind(mx.cpu(), shared_exec=base, shared_arg_names=names,
                                 shared_buffer=buf, **shapes(L, batch))
    shared = 1000 * (time.perf_counter() - t0) / repeat
    res.append({"bench": "bind_shared_exec_buckets_1_5", "pkg": pkg, "ms": round(shared, 3),
                "repeat": repeat})
    if ours:
        jobs = [(lstm_graph(mx, L), L) for L in [(i % 5) + 1 for i in range(repeat)]]
        gc.collect()
        t0 = time.perf_counter()
        for s, L in jobs:
            s.simple_bind(mx.cpu(), shared_exec=base, shared_arg_names=names,
                          shared_buffer=buf, **shapes(L, batch))
        warm = 1000 * (time.perf_counter() - t0) / repeat
        res.append({"bench": "bind_shared_exec_buckets_1_5_warm", "pkg": pkg,
                    "ms": round(warm, 3), "repeat": repeat})
        import tracemalloc
        pool = base.pool
        order = [base] + [execs[L] for L in (1, 2, 3, 4)]
        for e in order:          # warm up
            e.forward(is_train=True)
            e.backward()
        tracemalloc.start()
        measured = []
        for e in order:          # each bucket alone
            tracemalloc.reset_peak()
            start, _ = tracemalloc.get_traced_memory()
            e.forward(is_train=True)
            e.backward()
            measured.append(tracemalloc.get_traced_memory()[1] - start)
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        for e in order:          # all five, one after the other
            e.forward(is_train=True)
            e.backward()
        now, peak_all = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        per = {L: e.plan.memory.pooled_bytes for L, e in execs.items()}
        peak = {L: e.plan.memory.peak_bytes for L, e in execs.items()}
        params = sum(base.arg_dict[n].asnumpy().nbytes for n in names)
        res.append({"bench": "bucket_memory", "pkg": pkg, "param_bytes": params,
                    "traced_peak_per_bucket_5_1_2_3_4": measured,
                    "traced_peak_all_five_sequential": peak_all - start,
                    "traced_retained_after": now - start,
                    "plan_peak_live_per_bucket": peak, "pool_bytes": pool.nbytes,
                    "largest_bucket_pooled": max(per.values()),
                    "sum_buckets_pooled": sum(per.values()), "pool_misses": pool.misses})
    return res


def run_seed(python, pkg, repeat):
    env = dict(os.environ, MXPKG=pkg)
    out = subprocess.run([python, SEED, "--repeat", str(repeat)], capture_output=True,
                         text=True, env=env, timeout=1800, cwd="/tmp")
    if out.returncode != 0:
        return {"bench": "seed_000", "pkg": pkg, "error": out.stderr[-500:]}
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["bench"] = "seed_000"
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=100)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seed", action="store_true", help="also run seed_bind_bench.py for both")
    p.add_argument("--no-mxnet", action="store_true")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds; best kept")
    p.add_argument("--pkg", default=None, help=argparse.SUPPRESS)   # child mode
    a = p.parse_args()
    if a.pkg:
        print(json.dumps(measure(a.pkg, a.repeat, a.batch)))
        return
    here = os.path.dirname(os.path.abspath(__file__))
    pkgs = [("sparsym", sys.executable)]
    if not a.no_mxnet and os.path.exists(MXREF):
        pkgs.append(("mxnet", MXREF))
    # the machine is shared: alternate the packages over the rounds and keep each
    # measurement's best round (the least disturbed one)
    best = {}
    for r in range(a.rounds):
        for pkg, python in (pkgs if r % 2 == 0 else pkgs[::-1]):
            out = subprocess.run([python, os.path.join(here, "bind.py"), "--pkg", pkg,
                                  "--repeat", str(a.repeat), "--batch", str(a.batch)],
                                 capture_output=True, text=True, timeout=3600, cwd="/tmp")
            if out.returncode != 0:
                print(json.dumps({"pkg": pkg, "error": out.stderr[-1000:]}))
                continue
            for res in json.loads(out.stdout.strip().splitlines()[-1]):
                key = (res["bench"], pkg)
                if key not in best or res.get("ms", 0) < best[key].get("ms", 0):
                    best[key] = dict(res, rounds=a.rounds)
            if a.seed:
                res = run_seed(python, pkg, a.repeat)
                key = ("seed_000", pkg)
                if "error" in res:
                    print(json.dumps(res))
                elif key not in best or res["ms_per_shared_group"] < \
                        best[key]["ms_per_shared_group"]:
                    best[key] = dict(res, rounds=a.rounds)
    for key in sorted(best, key=lambda k: (k[1], k[0])):
        print(json.dumps(best[key]))
    for bench, field in (("bind_cold", "ms"), ("bind_shared_exec_buckets_1_5", "ms"),
                         ("seed_000", "ms_per_shared_group")):
        ours, theirs = best.get((bench, "sparsym")), best.get((bench, "mxnet"))
        if ours and theirs:
            print(json.dumps({"bench": bench + "_ratio",
                              "sparsym_over_mxnet": round(ours[field] / theirs[field], 3)}))
    ours, theirs = best.get(("bind_shared_exec_buckets_1_5_warm", "sparsym")), \
        best.get(("bind_shared_exec_buckets_1_5", "mxnet"))
    if ours and theirs:
        print(json.dumps({"bench": "bind_shared_exec_buckets_1_5_warm_ratio",
                          "sparsym_over_mxnet": round(ours["ms"] / theirs["ms"], 3)}))


if __name__ == "__main__":
    main()
