"""The sparse pipeline end to end, sparsym vs MXNet 1.9.1 (and PyTorch), interleaved pairs.

One row per target of the sparse path, each measured in fresh processes that alternate
engines (sparsym, MXNet, PyTorch, then again), so a busy neighbour hits them alike. Every
run records the 1-minute load average before and after it and the share of cores other
processes used meanwhile; a row's ratio is the median of its per-pair ratios and carries
``under_load: true`` (and is not a quiet-machine figure) when other work shared the machine
during any run of the row (benchmarks/_quiet.py).

Cases (``--cases``, comma-separated; all by default):

- ``io``: ``LibSVMIter`` full passes over an Avazu-shaped file (benchmarks/gen_avazu.py;
  200k rows, 1M features, 15 non-zeros a row), batch 2048 and 8192, MB/s of the first pass
  in a fresh process (``first``: sparsym parses it with NumPy, as Numba's one-time set-up,
  which the first kernel call of a process pays, cache warm or not, costs 0.37-0.40 s of
  CPU against 0.06 s of Numba parsing and 0.2 s of NumPy parsing; Numba is then set up in
  the background while the second pass runs), of the best of the following ones
  (``steady``) and of the import and first pass together (``with_import``). MXNet
  1.9.1's wheel cannot build a CSR batch of 8192 x 1M (its dense size overflows int32), so
  the 8192 row compares with MXNet at batch 2147, its largest.
- ``csv``: ``CSVIter`` full passes over a dense CSV file (100k rows of 64 values written
  ``%.4f``, 44.8 MB, and a label file of 0/1), batch 1024, MB/s of the data file as for
  ``io`` (first pass in a fresh process, which sparsym parses with NumPy as for ``io``;
  best of two more; with the import).
- ``logreg_sgd``, ``logreg_adam``: sparse logistic regression (``dot(csr, row_sparse
  weight) + bias``, LogisticRegressionOutput), Module with a ``local`` kvstore and
  ``prepare`` pulling the batch's rows, batch 2048: samples/s of two epochs after a warm-up
  epoch, parsing (LibSVMIter) included.
- ``gluon_emb``: a Gluon model, ``Embedding(1M, 16, sparse_grad=True)`` weighted by the
  feature values and summed per row, a ``Dense(1)`` head, sigmoid cross-entropy, Trainer
  with lazy SGD, hybridized; batches preloaded as arrays, samples/s of one epoch after a
  warm-up. PyTorch's peer (``--torch-python``, or ``$TORCH_PYTHON``): ``nn.EmbeddingBag(1M,
  16, mode='sum', sparse=True)`` with per-sample weights, ``nn.Linear(16, 1)``,
  ``BCEWithLogitsLoss``, ``torch.optim.SGD``.
- ``seed_tutorial``: tests/conformance/seed_tutorial.py (the seed script) at batch 1,
  batches/s.
- ``seed_bind``: the seed binding benchmark (see benchmarks/bind_groups.py), ms per shared
  executor group (lower is better; the ratio is MXNet's time over sparsym's).

Before the pairs of a training row (``logreg_*``, ``gluon_emb``), one sparsym run whose
figures are not used fills Numba's disk cache as a training run longer than a few seconds
leaves it: the parallel twins of the kernels compile only after 2 s of serial work
(kernels/_twins.py), which the timed epochs alone never reach. The cold first run (empty
Numba cache, parse included) is benchmarks/first_run.py.

Usage::

    python benchmarks/sparse_vs_mxnet.py [--pairs 3] [--cases io,logreg_sgd]
                                         [--mxnet-python PATH] [--torch-python PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _quiet import Watch, summary

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASES = ("io", "csv", "logreg_sgd", "logreg_adam", "gluon_emb", "seed_tutorial", "seed_bind")
MX_MAX_BATCH = (2**31 - 2) // 1_000_000  # MXNet's wheel: batch x features < 2**31


# ----------------------------------------------------------------------------- workers
def _import(pkg):
    """The engine module (sparsym from this checkout)."""
    import importlib
    if pkg == "sparsym":
        sys.path.insert(0, ROOT)
    mx = importlib.import_module(pkg)
    import logging
    logging.getLogger().setLevel(logging.ERROR)
    return mx


def _passes(a, path, make_iter):
    """MB/s of ``path`` for a fresh process's first pass of ``make_iter(mx)``, the best of
    two more, and the import with the first pass."""
    t0 = time.perf_counter()
    mx = _import(a.pkg)
    imported = time.perf_counter() - t0
    mb = os.path.getsize(path) / 1e6
    times = []
    for _ in range(3):
        t = time.perf_counter()
        for b in make_iter(mx):
            b.data[0].wait_to_read()
        times.append(time.perf_counter() - t)
    return {"import_s": round(imported, 3), "first_MB_per_s": round(mb / times[0], 1),
            "steady_MB_per_s": round(mb / min(times[1:]), 1),
            "with_import_MB_per_s": round(mb / (imported + times[0]), 1), "batch": a.batch}


def work_io(a):
    """LibSVMIter passes (see _passes)."""
    return _passes(a, a.file, lambda mx: mx.io.LibSVMIter(
        data_libsvm=a.file, data_shape=(a.features,), batch_size=a.batch))


def work_csv(a):
    """CSVIter passes over the data and label files of _make_csv (see _passes)."""
    data, label = a.file.split(",")
    return _passes(a, data, lambda mx: mx.io.CSVIter(
        data_csv=data, data_shape=(64,), label_csv=label, batch_size=a.batch))


def _make_csv(folder):
    """The dense CSV pair of the ``csv`` case: 'data,label' paths."""
    import numpy as np
    rng = np.random.default_rng(0)
    data, label = os.path.join(folder, "dense.csv"), os.path.join(folder, "label.csv")
    np.savetxt(data, rng.random((100_000, 64)), fmt="%.4f", delimiter=",")
    np.savetxt(label, rng.random(100_000) > 0.5, fmt="%d")
    return f"{data},{label}"


def work_logreg(a):
    """Samples/s of Module training (kvstore + prepare) over two epochs after a warm-up."""
    mx = _import(a.pkg)
    sys.path.insert(0, HERE)
    from train_sparse_logreg import build
    bs = a.batch
    params = {"learning_rate": 1.0 if a.optimizer == "sgd" else 0.01, "rescale_grad": 1.0 / bs}
    it, mod, kv = build(mx, a.file, a.features, bs, True, a.optimizer, params)

    def row_ids(batch):
        return {"weight": batch.data[0].indices}

    def epoch():
        it.reset()
        n = 0
        for batch in it:
            batch.label = [batch.label[0].reshape((bs, 1))]
            mod.prepare(batch, sparse_row_id_fn=row_ids)
            mod.forward_backward(batch)
            mod.update()
            n += bs
        mod.get_outputs()[0].wait_to_read()
        return n

    epoch()
    t, c = time.perf_counter(), time.process_time()
    n = epoch() + epoch()
    return {"samples_per_s": round(n / (time.perf_counter() - t)),
            "samples_per_cpu_s": round(n / (time.process_time() - c)), "batch": bs,
            "optimizer": a.optimizer}


def _emb_batches(a):
    """The preloaded data: ids, values (rows x fields) and labels, in batches."""
    import numpy as np
    z = np.load(a.npz)
    ids, vals, y = z["ids"], z["vals"], z["labels"]
    n = len(y) // a.batch
    return [(ids[i * a.batch:(i + 1) * a.batch], vals[i * a.batch:(i + 1) * a.batch],
             y[i * a.batch:(i + 1) * a.batch]) for i in range(n)]


def _time_epochs(step, batches, bs, warm=10):
    """Samples/s and samples per CPU-second (all threads) of one pass over ``batches``
    after ``warm`` steps."""
    for b in batches[:warm]:
        step(*b)
    t, c = time.perf_counter(), time.process_time()
    for b in batches:
        last = step(*b)
    last()
    n = len(batches) * bs
    return {"samples_per_s": round(n / (time.perf_counter() - t)),
            "samples_per_cpu_s": round(n / (time.process_time() - c))}


def work_gluon_emb(a):
    """Samples/s of the sparse-embedding Gluon model (or PyTorch's EmbeddingBag peer)."""
    data = _emb_batches(a)
    if a.pkg == "torch":
        import torch
        nn = torch.nn
        emb = nn.EmbeddingBag(a.features, a.dim, mode="sum", sparse=True)
        head = nn.Linear(a.dim, 1)
        opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=a.lr)
        lossf = nn.BCEWithLogitsLoss()
        batches = [(torch.from_numpy(i), torch.from_numpy(v), torch.from_numpy(y))
                   for i, v, y in data]

        def step(ids, vals, y):
            opt.zero_grad()
            loss = lossf(head(emb(ids, per_sample_weights=vals)).squeeze(1), y)
            loss.backward()
            opt.step()
            return loss.item
        return {**_time_epochs(step, batches, a.batch), "batch": a.batch,
                "torch": torch.__version__}
    mx = _import(a.pkg)
    gluon, nd, autograd = mx.gluon, mx.nd, mx.autograd

    class Net(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.emb = gluon.nn.Embedding(a.features, a.dim, sparse_grad=True)
                self.head = gluon.nn.Dense(1, in_units=a.dim)

        def hybrid_forward(self, F, ids, vals):
            e = F.broadcast_mul(self.emb(ids), F.expand_dims(vals, axis=2))
            return self.head(F.sum(e, axis=1))

    net = Net()
    net.initialize(mx.init.Normal(0.01))
    net.hybridize()
    lossf = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": a.lr})
    batches = [(nd.array(i), nd.array(v), nd.array(y)) for i, v, y in data]

    def step(ids, vals, y):
        with autograd.record():
            loss = lossf(net(ids, vals), y)
        loss.backward()
        trainer.step(a.batch)
        return loss.wait_to_read
    return {**_time_epochs(step, batches, a.batch), "batch": a.batch}


def _script_json(python, script, env, args=()):
    res = subprocess.run([python, script, *args], env=env, capture_output=True, text=True)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode or not lines:
        raise RuntimeError(res.stderr.strip()[-500:])
    return json.loads(lines[-1])


# ----------------------------------------------------------------------------- driver
def _run(python, case, pkg, a, **extra):
    """One fresh worker process: its record with the load seen around it."""
    watch = Watch()
    env = dict(os.environ, MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0", SPARSYM_COMPILE_NOTICE="0")
    try:
        if case == "seed_tutorial":
            env.update(MXPKG=pkg, BATCH="1", EPOCHS=str(a.seed_epochs))
            if pkg == "sparsym":
                env["PYTHONPATH"] = ROOT
            r = _script_json(python, os.path.join(ROOT, "tests", "conformance",
                                                  "seed_tutorial.py"), env)
            rec = {"batches_per_s": round(r["batches_per_s"], 1)}
        elif case == "seed_bind":
            env["MXPKG"] = pkg
            if pkg == "sparsym":
                env["PYTHONPATH"] = ROOT
            r = _script_json(python, a.bind_script, env, ["--repeat", str(a.bind_repeat)])
            rec = {"ms_per_shared_group": round(r["ms_per_shared_group"], 3)}
        else:
            args = ["--worker", case, "--pkg", pkg,
                    "--file", a.csv if case == "csv" else a.file, "--npz", a.npz,
                    "--features", str(a.features)]
            for k, v in extra.items():
                args += ["--" + k, str(v)]
            rec = _script_json(python, os.path.abspath(__file__), env, args)
    except (RuntimeError, ValueError, KeyError) as err:
        rec = {"error": str(err).splitlines()[-1:] if str(err) else repr(err)}
    rec.update(watch.done())
    return rec


def _row(name, runs, metric, higher_better=True, peers=("mxnet", "torch")):
    """The summary line of one row: medians, per-pair ratios, loads."""
    line = {"bench": "sparse_vs_mxnet", "row": name}
    for pkg, rs in runs.items():
        ok = [r for r in rs if metric in r]
        if ok:
            line[pkg] = statistics.median(r[metric] for r in ok)
        elif rs:
            line[pkg + "_error"] = rs[-1].get("error")
    for peer in peers:
        pairs = [(s[metric], p[metric]) for s, p in zip(runs.get("sparsym", []),
                                                           runs.get(peer, []))
                 if metric in s and metric in p]
        if not pairs:
            continue
        ratios = [s / p if higher_better else p / s for s, p in pairs]
        key = "vs_" + peer
        line[key] = round(statistics.median(ratios), 2)
        line[key + "_range"] = [round(min(ratios), 2), round(max(ratios), 2)]
    line["metric"] = metric
    line.update(summary([r for rs in runs.values() for r in rs]))
    return line


def _make_npz(path, features, out):
    """ids / vals (rows x nnz-per-row) and labels of the LibSVM file, for the Gluon case."""
    import numpy as np
    sys.path.insert(0, ROOT)
    from sparsym.kernels.libsvm import parse_libsvm_chunk
    with open(path, "rb") as f:
        y, x, _ = parse_libsvm_chunk(f.read(), features)
    counts = np.diff(x.indptr)
    k = int(counts.max())
    ids = np.zeros((len(y), k), np.int64)
    vals = np.zeros((len(y), k), np.float32)
    pos = np.arange(len(x.indices)) - np.repeat(x.indptr[:-1], counts)
    rows = np.repeat(np.arange(len(y)), counts)
    ids[rows, pos] = x.indices
    vals[rows, pos] = x.data
    np.savez(out, ids=ids, vals=vals, labels=y.astype(np.float32))


def drive(a):
    tmp = tempfile.TemporaryDirectory()
    if a.file is None:
        sys.path.insert(0, HERE)
        from gen_avazu import generate
        a.file = os.path.join(tmp.name, "avazu.libsvm")
        generate(a.file, a.rows, a.features)
    a.npz = os.path.join(tmp.name, "emb.npz")
    cases = [c for c in a.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad:
        raise SystemExit(f"--cases: unknown {bad}; have {', '.join(CASES)}")
    if "gluon_emb" in cases:
        _make_npz(a.file, a.features, a.npz)
    pythons = {"sparsym": sys.executable}
    if os.path.exists(a.mxnet_python):
        pythons["mxnet"] = a.mxnet_python
    torch_py = a.torch_python or os.environ.get("TORCH_PYTHON", "")
    rows = []  # (row name, case, {pkg: extra args}, metric, higher_better)
    for c in cases:
        if c == "io":
            rows.append(("io_2048", "io", {"sparsym": {"batch": 2048}, "mxnet": {"batch": 2048}},
                         "first_MB_per_s", True))
            rows.append(("io_8192", "io", {"sparsym": {"batch": 8192},
                                           "mxnet": {"batch": MX_MAX_BATCH}},
                         "first_MB_per_s", True))
        elif c.startswith("logreg_"):
            opt = c.split("_", 1)[1]
            rows.append((c, "logreg", {p: {"batch": 2048, "optimizer": opt}
                                       for p in ("sparsym", "mxnet")}, "samples_per_s", True))
        elif c == "csv":
            a.csv = _make_csv(tmp.name)
            rows.append(("csv_1024", "csv", {"sparsym": {"batch": 1024}, "mxnet": {"batch": 1024}},
                         "first_MB_per_s", True))
        elif c == "gluon_emb":
            peers = {"sparsym": {"batch": 2048}, "mxnet": {"batch": 2048}}
            if torch_py and os.path.exists(torch_py):
                peers["torch"] = {"batch": 2048}
            rows.append((c, c, peers, "samples_per_s", True))
        elif c == "seed_tutorial":
            rows.append((c, c, {"sparsym": {}, "mxnet": {}}, "batches_per_s", True))
        elif c == "seed_bind":
            rows.append((c, c, {"sparsym": {}, "mxnet": {}}, "ms_per_shared_group", False))
    for name, case, peers, metric, higher in rows:
        runs = {p: [] for p in peers}
        if case in ("logreg", "gluon_emb") and "sparsym" in peers:
            # the Numba disk cache as a training run longer than a few seconds leaves it:
            # the parallel twins compile only after 2 s of serial work (kernels/_twins.py),
            # which one timed epoch never reaches; this run's figures are not used
            rec = _run(sys.executable, case, "sparsym", a, fill_cache=1, **peers["sparsym"])
            print(json.dumps({"bench": "sparse_vs_mxnet_fill_cache", "row": name, **rec}),
                  flush=True)
        for k in range(a.pairs):
            for pkg, extra in peers.items():
                py = torch_py if pkg == "torch" else pythons.get(pkg)
                if py is None:
                    continue
                rec = _run(py, case, pkg, a, **extra)
                runs[pkg].append(rec)
                print(json.dumps({"bench": "sparse_vs_mxnet_run", "row": name, "pkg": pkg,
                                  "pair": k, **rec}), flush=True)
        if name == "io_8192" and "mxnet" in runs:
            runs["mxnet"] = [dict(r, note=f"MXNet at batch {MX_MAX_BATCH}")
                             for r in runs["mxnet"]]
        line = _row(name, {p: r for p, r in runs.items() if r}, metric, higher)
        # a second view: steady-state passes, or samples per CPU-second (all threads; on a
        # busy machine steadier than wall time)
        io_views = [("steady_MB_per_s", "_steady"), ("with_import_MB_per_s", "_with_import")]
        views = {"io": io_views, "csv": io_views,
                 "logreg": [("samples_per_cpu_s", "_cpu")],
                 "gluon_emb": [("samples_per_cpu_s", "_cpu")]}.get(case, [])
        for key, suffix in views:
            more = _row(name, {p: r for p, r in runs.items() if r}, key)
            line.update({k + suffix: v for k, v in more.items()
                         if k in ("sparsym", "mxnet", "torch", "vs_mxnet", "vs_torch")})
        print(json.dumps(line), flush=True)
    tmp.cleanup()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--file", default=None, help="a LibSVM file instead of a generated one")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=1_000_000)
    ap.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    ap.add_argument("--torch-python", default=None)
    ap.add_argument("--seed-epochs", type=int, default=10,
                    help="the seed script asserts its MSE < 1 at the end: 10 epochs reach it")
    ap.add_argument("--bind-repeat", type=int, default=100)
    ap.add_argument("--bind-script", default=os.path.join(
        os.path.dirname(ROOT), "shared", "seeds", "seed_bind_bench.py"))
    # worker mode (one engine, one case, this process)
    ap.add_argument("--worker", choices=["io", "csv", "logreg", "gluon_emb"], default=None)
    ap.add_argument("--pkg", default="sparsym")
    ap.add_argument("--npz", default=None)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--fill_cache", type=int, default=0,
                    help="(sparsym worker) compile the parallel twins at once, filling "
                         "Numba's disk cache as a long training run does")
    a = ap.parse_args(argv)
    if a.worker:
        if a.fill_cache and a.pkg == "sparsym":
            sys.path.insert(0, ROOT)
            from sparsym.kernels import _twins
            _twins.COMPILE_AFTER_S = 0.0
        fn = {"io": work_io, "csv": work_csv, "logreg": work_logreg,
              "gluon_emb": work_gluon_emb}[a.worker]
        print(json.dumps({"pkg": a.pkg, **fn(a)}), flush=True)
        return
    drive(a)


if __name__ == "__main__":
    main()
