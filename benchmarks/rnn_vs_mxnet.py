"""Fused recurrent layers in training, sparsym and MXNet 1.9.1 side by side; JSON lines.

    python benchmarks/rnn_vs_mxnet.py [--mxnet-python ~/mxref/bin/python] [--steps 10]
                                      [--repeats 3] [--cases lstm gru]

Cases: a Gluon ``rnn.LSTM`` and ``rnn.GRU`` (2 layers, 200 hidden units, input 200,
sequence 35, batch 32: a word language model's shape) trained with ``autograd.record`` /
``backward`` / ``Trainer.step`` (SGD). Milliseconds per step after 3 warm-up steps; the two
engines alternate ``--repeats`` times and each keeps its best run. One line per case with
both figures, ``speedup`` (MXNet's time / sparsym's), ``target_speedup``, the 1-minute load
average before and after and the share of cores other processes used meanwhile
(``under_load`` when other work shared the machine: benchmarks/_quiet.py). MXNet is
only the oracle here; without it the sparsym figures are printed alone.
"""
import argparse
import json
import os
import subprocess
import sys

from _quiet import Watch, under_load

BODY = r'''
import importlib, json, sys, time
import numpy as np
mx = importlib.import_module(sys.argv[1])
steps = int(sys.argv[2])
rng = np.random.RandomState(0)
x = mx.nd.array(rng.rand(35, 32, 200))
for case, layer in ((c, getattr(mx.gluon.rnn, c.upper())) for c in sys.argv[3].split(",")):
    net = layer(200, num_layers=2, layout="TNC")
    net.initialize(mx.init.Xavier())
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

    def step():
        with mx.autograd.record():
            y = net(x)
            loss = (y * y).mean()
        loss.backward()
        tr.step(32)
    for _ in range(3):
        step()
    mx.nd.waitall()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    mx.nd.waitall()
    print(json.dumps({"case": case, "ms": (time.perf_counter() - t) / steps * 1000}),
          flush=True)
'''


# the speedup over MXNet issue 30 asks of the fused LSTM and GRU
TARGET = 1.5


def _run(python, pkg, steps, cases):
    r = subprocess.run([python, "-c", BODY, pkg, str(steps), ",".join(cases)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{pkg} run failed:\n{r.stderr[-3000:]}")
    return {d["case"]: d["ms"] for d in
            (json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{"))}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cases", nargs="+", default=["lstm", "gru"], choices=["lstm", "gru"])
    a = p.parse_args(argv)
    have_mx = os.path.exists(a.mxnet_python)
    best = {"sparsym": {}, "mxnet": {}}
    watch = Watch()
    for _ in range(a.repeats):
        runs = [("sparsym", sys.executable)] + ([("mxnet", a.mxnet_python)] if have_mx else [])
        for pkg, py in runs:
            for case, ms in _run(py, pkg, a.steps, a.cases).items():
                best[pkg][case] = min(ms, best[pkg].get(case, ms))
    seen = watch.done()
    seen["under_load"] = under_load([seen])
    for case, ms in best["sparsym"].items():
        rec = {"bench": "rnn_vs_mxnet", "case": case, "sparsym_ms": round(ms, 1)}
        if case in best["mxnet"]:
            rec["mxnet_ms"] = round(best["mxnet"][case], 1)
            rec["speedup"] = round(best["mxnet"][case] / ms, 2)
            rec["target_speedup"] = TARGET
        rec.update(seen)
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
