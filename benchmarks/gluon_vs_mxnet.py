"""Gluon training throughput, sparsym and MXNet 1.9.1 side by side; prints JSON lines.

    python benchmarks/gluon_vs_mxnet.py [--mxnet-python ~/mxref/bin/python] [--batches 200]
                                        [--repeats 5]

Cases (samples/s over timed batches, after warm-up batches that also compile kernels). The
engines run in ``--repeats`` interleaved pairs (sparsym, then MXNet); a line reports each
engine's median samples/s, the median of the per-pair speedups (``speedup``), the pairs'
lowest and highest (``speedup_range``) and the 1-minute load average seen around the pairs
(``load``), since on a shared machine a busy neighbour slows MXNet's threaded engine more:

- ``mlp``: 784-256-128-10 MLP, batch 32, softmax cross-entropy, SGD, ``autograd.record`` /
  ``backward`` / ``Trainer.step``; imperative and hybridized.
- ``sparse_linear``: logistic regression over 1M features, csr batches of 2048 rows with
  about 15 non-zeros each, a row_sparse weight Parameter, ``sparse.dot``, lazy SGD on a
  ``local`` kvstore: MXNet's Gluon sparse tutorial pattern.

The same script body runs under both packages (``mx`` is whichever is imported). MXNet is
only the oracle here, never a dependency; without it the sparsym lines are printed alone.
"""
import argparse
import json
import os
import subprocess
import sys

BODY = r'''
import importlib, json, sys, time
import numpy as np
mx = importlib.import_module(sys.argv[1])
from_pkg, batches = sys.argv[1], int(sys.argv[2])
gluon, autograd, nd = mx.gluon, mx.autograd, mx.nd
rng = np.random.RandomState(0)


def timed(step, warm, n, batch):
    for i in range(warm):
        step(i)
    nd.waitall()
    t = time.perf_counter()
    for i in range(n):
        step(warm + i)
    nd.waitall()
    return batch * n / (time.perf_counter() - t)


def mlp(hybrid):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(128, activation="relu"),
            gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    xs = [nd.array(rng.rand(32, 784)) for _ in range(16)]
    ys = [nd.array(rng.randint(0, 10, 32)) for _ in range(16)]

    def step(i):
        with autograd.record():
            out = loss(net(xs[i % 16]), ys[i % 16])
        out.backward()
        tr.step(32)
    return timed(step, 10, batches, 32)


class SparseLinear(gluon.Block):
    def __init__(self, num_features, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(num_features, 1),
                                          stype="row_sparse", grad_stype="row_sparse")
            self.bias = self.params.get("bias", shape=(1,))

    def forward(self, x):
        w = self.weight.row_sparse_data(x.indices)
        return nd.sparse.dot(x, w) + self.bias.data()


def sparse_linear():
    nf, bs, nnz = 1_000_000, 2048, 15
    batches_data = []
    for _ in range(8):
        cols = np.sort(rng.randint(0, nf, (bs, nnz)), axis=1).ravel()
        indptr = np.arange(0, bs * nnz + 1, nnz)
        x = nd.sparse.csr_matrix((rng.rand(bs * nnz).astype(np.float32), cols, indptr),
                                 shape=(bs, nf))
        batches_data.append((x, nd.array(rng.randint(0, 2, (bs, 1)))))
    net = SparseLinear(nf)
    net.initialize(mx.init.Normal(0.01))
    loss = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                       kvstore="local")

    def step(i):
        x, y = batches_data[i % 8]
        with autograd.record():
            out = loss(net(x), y)
        out.backward()
        tr.step(bs)
    return timed(step, 3, max(batches // 4, 10), bs)


for case, fn in (("mlp_imperative", lambda: mlp(False)), ("mlp_hybridized", lambda: mlp(True)),
                 ("sparse_linear_1M", sparse_linear)):
    print(json.dumps({"case": case, "package": from_pkg, "samples_per_s": round(fn(), 1)}),
          flush=True)
'''


def _run(python, pkg, batches, env=None, body=BODY):
    """Run ``body`` as ``python -c body pkg batches``; its JSON lines as dicts."""
    r = subprocess.run([python, "-c", body, pkg, str(batches)], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        raise SystemExit(f"{pkg} run failed:\n{r.stderr[-3000:]}")
    return [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _by_case(run):
    return {r["case"]: r["samples_per_s"] for r in run}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5,
                   help="interleaved pairs of runs; medians are reported")
    a = p.parse_args(argv)
    mx_env = dict(os.environ, PYTHONPATH="")
    have_mx = os.path.exists(a.mxnet_python)
    ours, theirs, loads = [], [], [os.getloadavg()[0]]
    for _ in range(a.repeats):
        # interleave the engines so that a change in machine load hits both alike
        ours.append(_by_case(_run(sys.executable, "sparsym", a.batches)))
        if have_mx:
            theirs.append(_by_case(_run(a.mxnet_python, "mxnet", a.batches, env=mx_env)))
        loads.append(os.getloadavg()[0])
    for case in ours[0]:
        line = {"case": case, "package": "sparsym",
                "samples_per_s": round(_median([r[case] for r in ours]), 1),
                "repeats": a.repeats}
        if theirs:
            ratios = [o[case] / t[case] for o, t in zip(ours, theirs)]
            line["mxnet_samples_per_s"] = round(_median([t[case] for t in theirs]), 1)
            line["speedup"] = round(_median(ratios), 2)
            line["speedup_range"] = f"{min(ratios):.2f}-{max(ratios):.2f}"
        line["load"] = f"{min(loads):.1f}-{max(loads):.1f}"
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
