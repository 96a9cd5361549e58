"""Run the examples under sparsym and, unchanged, under MXNet 1.9.1; print JSON lines.

    python benchmarks/examples_vs_mxnet.py [--mxnet-python ~/mxref/bin/python]
        [--examples matrix_factorization factorization_machine wide_deep] [--epochs 2]
        [--repeat 1]

Each example is an MXNet 1.x script: the MXNet run imports it with ``sparsym`` aliased to
``mxnet`` (plus the ``log_loss``/``auc`` metrics that MXNet's own factorization machine
example registers itself). Both runs use the same generated data and settings; the
examples' JSON lines (training time and final metric) are printed side by side, after one
untimed sparsym run of each example that leaves Numba's disk cache warm. MXNet is
only the oracle here, never a dependency; without it the sparsym lines are printed alone.
"""
import argparse
import json
import os
import subprocess
import sys

from _quiet import Watch, under_load

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")

# runs an example under MXNet with `import sparsym as mx` resolved to mxnet
_SHIM = r"""
import runpy, sys
import numpy as np
import mxnet


class _LogLoss(mxnet.metric.EvalMetric):
    def __init__(self, name="log_loss", **kw):
        super().__init__(name, **kw)

    def update(self, labels, preds):
        for lab, pred in zip(labels, preds):
            p = np.clip(pred.asnumpy().ravel(), 1e-12, 1 - 1e-12)
            y = lab.asnumpy().ravel()
            self.sum_metric += float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).sum())
            self.num_inst += len(y)


class _AUC(mxnet.metric.EvalMetric):
    def __init__(self, name="auc", **kw):
        super().__init__(name, **kw)

    def reset(self):
        super().reset()
        self.s, self.y = [], []

    def update(self, labels, preds):
        for lab, pred in zip(labels, preds):
            self.s.append(pred.asnumpy().ravel())
            self.y.append(lab.asnumpy().ravel() > 0.5)
        self.num_inst = 1

    def get(self):
        from scipy.stats import rankdata
        if not self.s:
            return self.name, float("nan")
        y, r = np.concatenate(self.y), rankdata(np.concatenate(self.s))
        npos, nneg = y.sum(), (~y).sum()
        return self.name, float((r[y].sum() - npos * (npos + 1) / 2) / (npos * nneg))


# MXNet's own factorization machine example registers these two itself
for _name, _cls in (("log_loss", _LogLoss), ("auc", _AUC)):
    try:
        mxnet.metric.create(_name)
    except Exception:
        mxnet.metric.alias(_name)(_cls)
sys.modules["sparsym"] = mxnet
# `from sparsym.gluon import nn` must find MXNet's loaded submodules, not load copies
for _mod in [m for m in sys.modules if m.startswith("mxnet.")]:
    sys.modules["sparsym" + _mod[len("mxnet"):]] = sys.modules[_mod]
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""


def _run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail)}
    return json.loads(lines[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    p.add_argument("--examples", nargs="+",
                   default=["matrix_factorization", "factorization_machine", "wide_deep",
                            "image_classification"])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args(argv)
    env = dict(os.environ, MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0")
    have_mx = os.path.exists(args.mxnet_python)
    for name in args.examples:
        script = os.path.join(EXAMPLES, f"{name}.py")
        ex_args = ["--epochs", str(args.epochs)]
        # a warm Numba cache, as a user's second run has (the cold first run is
        # benchmarks/first_run.py): an untimed run compiles what the code changes left stale
        _run([sys.executable, script, "--epochs", "1"], env)
        for rep in range(args.repeat):
            # alternate the packages so that machine load affects both alike
            watch = Watch()
            res = {"example": name, "epochs": args.epochs, "repeat": rep,
                   "sparsym": _run([sys.executable, script] + ex_args, env)}
            if have_mx:
                res["mxnet"] = _run([args.mxnet_python, "-c", _SHIM, script] + ex_args, env)
                s, m = res["sparsym"].get("train_s"), res["mxnet"].get("train_s")
                if s and m:
                    res["speedup"] = round(m / s, 2)
            res.update(watch.done())
            res["under_load"] = under_load([res])
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
