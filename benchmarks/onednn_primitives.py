"""Per-primitive times through the public ``nd`` API: sparsym on oneDNN, sparsym on its Numba
kernels, and MXNet 1.9.1, on the same snippet (sparsym runs MXNet code unchanged).

Each case is a snippet that, given ``mx`` (sparsym or mxnet) and ``np``, defines ``fns``, a
dict of pass name -> callable (a forward, or a forward + backward under autograd with
gradients attached to the data only (``bwd_data``) or to the parameters only
(``bwd_weights``), so each backward primitive can be told apart: each pass runs on fresh
arrays and attaches its gradients at its first call; the backward alone is the
difference to ``fwd``). A round runs every case in a fresh process per engine, one engine
after the other (``--rounds`` rounds interleave the engines, so load hits all alike);
medians over rounds are printed as one JSON line per (case, pass), with the 1-minute load
average before and after, the share of cores other processes used meanwhile
(``under_load`` when other work shared the machine: benchmarks/_quiet.py) and
``target_over_mxnet`` (the largest ratio the issue accepts).
``first_ms`` is each engine's first call of the pass (oneDNN:
primitive creation and JIT; Numba: compilation or cache load); ``load_ms`` is the time to
import the engine and make its first call in the child.

Adding a primitive: append ``(name, shape label, snippet)`` tuples to ``CASES`` (a snippet
may use ``rand(*shape)`` for float32 NDArrays and ``sync(x)`` to wait for a result).

Usage: python benchmarks/onednn_primitives.py [--only conv,pool,batchnorm,fc,softmax,rnn]
       [--rounds 3] [--reps 10] [--engines onednn,numba,mxnet]
       [--mxnet-python ~/mxref/bin/python] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _quiet import Watch, under_load

HERE = os.path.dirname(os.path.abspath(__file__))


def _conv(n, c, h, w, f, k, s, p, g=1, bias=True, nd=2):
    """Convolution snippet: fwd, fwd+bwd_data, fwd+bwd_weights."""
    sp = (h, w)[:nd] if nd <= 2 else (h, h, w)
    ks = (k,) * nd
    return f"""
x = rand({n}, {c}, *{sp!r}); wt = rand({f}, {c // g}, *{ks!r}); b = rand({f})
kw = dict(kernel={ks!r}, stride={(s,) * nd!r}, pad={(p,) * nd!r}, num_filter={f},
          num_group={g}, no_bias={not bias})
args = (x, wt, b) if {bias} else (x, wt)
def fwd():
    sync(mx.nd.Convolution(*args, **kw))
def grads(on):
    attached = []
    def run():
        if not attached:  # at the first call: only this pass's arrays take gradients
            for a in on:
                a.attach_grad()
            attached.append(True)
        with mx.autograd.record():
            y = mx.nd.Convolution(*args, **kw)
        y.backward()
        for a in on:
            sync(a.grad)
    return run
fns = {{"fwd": fwd}}
"""


def _conv_bwd(on_data, on_w):
    return """
fns["fwd+bwd_data"] = grads([x])
fns["fwd+bwd_weights"] = grads([wt] + ([b] if len(args) == 3 else []))
""" if on_data or on_w else ""


def _resnet18_convs(batch=32, size=32):
    """The distinct conv shapes of model_zoo resnet18_v1 at ``size`` x ``size`` inputs."""
    out = [("7x7s2 3->64", (batch, 3, size, size, 64, 7, 2, 3))]
    hw, c = size // 4, 64
    for f, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        if stride == 2:
            out.append((f"3x3s2 {c}->{f} @{hw}", (batch, c, hw, hw, f, 3, 2, 1)))
            out.append((f"1x1s2 {c}->{f} @{hw}", (batch, c, hw, hw, f, 1, 2, 0)))
            hw //= 2
        out.append((f"3x3 {f}->{f} @{hw}", (batch, f, hw, hw, f, 3, 1, 1)))
        c = f
    return out


CASES = []
for _label, _shape in _resnet18_convs():
    CASES.append(("conv", "resnet18 " + _label, _conv(*_shape, bias=False) +
                  _conv_bwd(True, True)))
for _label, _shape in (("5x5 1->20 @28", (64, 1, 28, 28, 20, 5, 1, 0)),
                       ("5x5 20->50 @12", (64, 20, 12, 12, 50, 5, 1, 0))):
    CASES.append(("conv", "lenet " + _label, _conv(*_shape) + _conv_bwd(True, True)))
CASES.append(("conv", "sbnet 3x3 24->24 @400x704",
              _conv(1, 24, 400, 704, 24, 3, 1, 1, bias=False) + _conv_bwd(True, True)))
CASES.append(("deconv", "4x4s2 64->32 @16", """
x = rand(16, 64, 16, 16); wt = rand(64, 32, 4, 4)
kw = dict(kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=32, no_bias=True)
def fwd():
    sync(mx.nd.Deconvolution(x, wt, **kw))
def grads(on):
    attached = []
    def run():
        if not attached:  # at the first call: only this pass's arrays take gradients
            for a in on:
                a.attach_grad()
            attached.append(True)
        with mx.autograd.record():
            y = mx.nd.Deconvolution(x, wt, **kw)
        y.backward()
        for a in on:
            sync(a.grad)
    return run
fns = {"fwd": fwd, "fwd+bwd_data": grads([x]), "fwd+bwd_weights": grads([wt])}
"""))

def _op(inputs, call, weights=()):
    """Snippet of one op: ``inputs`` {name: shape} made with rand, ``call`` an expression
    over them; fwd, fwd+bwd_data (gradient of the first input) and, when ``weights`` names
    inputs, fwd+bwd_weights."""
    made = "\n".join(f"{k} = rand(*{v!r})" for k, v in inputs.items())
    first = next(iter(inputs))
    return f"""
{made}
def out():
    y = {call}
    return y[0] if isinstance(y, (list, tuple)) else y
def fwd():
    sync(out())
def grads(on):
    attached = []
    def run():
        if not attached:  # at the first call: only this pass's arrays take gradients
            for a in on:
                a.attach_grad()
            attached.append(True)
        with mx.autograd.record():
            y = out()
        y.backward()
        for a in on:
            sync(a.grad)
    return run
fns = {{"fwd": fwd, "fwd+bwd_data": grads([{first}])}}
if {list(weights)!r}:
    fns["fwd+bwd_weights"] = grads([{", ".join(weights) or "None"}])
"""


_POOLS = (("resnet18 max 3x3s2 64 @16", (32, 64, 16, 16),
           "kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='max'"),
          ("resnet18 global avg 512 @1", (32, 512, 1, 1), "kernel=(1, 1), global_pool=True, "
                                                          "pool_type='avg'"),
          ("lenet max 2x2 20 @24", (64, 20, 24, 24), "kernel=(2, 2), stride=(2, 2)"),
          ("lenet max 2x2 50 @8", (64, 50, 8, 8), "kernel=(2, 2), stride=(2, 2)"),
          ("avg 3x3s1 full 32 @17", (32, 32, 17, 17), "kernel=(3, 3), pool_type='avg', "
                                                      "pooling_convention='full'"))
for _label, _shape, _kw in _POOLS:
    CASES.append(("pool", _label, _op({"x": _shape}, f"mx.nd.Pooling(x, {_kw})")))
for _c, _hw in ((64, 16), (64, 8), (128, 4), (256, 2), (512, 1)):
    CASES.append(("batchnorm", f"resnet18 {_c} @{_hw}", _op(
        {"x": (32, _c, _hw, _hw), "g": (_c,), "b": (_c,), "mm": (_c,), "mv": (_c,)},
        "mx.nd.BatchNorm(x, g, b, mm, mx.nd.abs(mv), fix_gamma=False)", ("g", "b"))))
for _label, (_n, _k, _m) in (("lenet 800->500", (64, 800, 500)), ("lenet 500->10", (64, 500, 10)),
                             ("resnet18 512->10", (32, 512, 10))):
    CASES.append(("fc", _label, _op({"x": (_n, _k), "w": (_m, _k), "b": (_m,)},
                                    f"mx.nd.FullyConnected(x, w, b, num_hidden={_m})",
                                    ("w", "b"))))
for _label, _shape in (("loss 32x10", (32, 10)), ("128x1000", (128, 1000)),
                       ("lm 35x32x10000", (35, 32, 10000))):
    CASES.append(("softmax", _label, _op({"x": _shape}, "mx.nd.softmax(x, axis=-1)")))
    CASES.append(("log_softmax", _label, _op({"x": _shape}, "mx.nd.log_softmax(x, axis=-1)")))
CASES.append(("lrn", "alexnet-like 32 @28 n5", _op({"x": (8, 32, 28, 28)},
                                                   "mx.nd.LRN(x, nsize=5, alpha=1e-4)")))
for _mode, _g in (("lstm", 4), ("gru", 3)):
    # MXNet's word language model shape: 2 layers, 200 units, sequence 35, batch 32
    _np = 2 * _g * 200 * (200 + 200 + 2)
    _st = ("h0", "c0") if _mode == "lstm" else ("h0",)
    CASES.append(("rnn", f"{_mode} 2x200 T35 N32", _op(
        {"x": (35, 32, 200), "p": (_np,), **{k: (2, 32, 200) for k in _st}},
        f"mx.nd.RNN(x, p * 0.05, {', '.join(_st)}, state_size=200, num_layers=2, "
        f"mode='{_mode}')", ("p",))))


# issue 30: no primitive slower than MXNet's by more than 10% (oneDNN time / MXNet's)
TARGET_OVER_MXNET = 1.1


CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
if {pkg!r} == "sparsym":
    sys.path.insert(0, {root!r})
    import sparsym as mx
else:
    import mxnet as mx
rng = np.random.default_rng(0)
def rand(*shape):
    return mx.nd.array(rng.standard_normal(shape).astype(np.float32))
def sync(a):
    a.wait_to_read()
load_ms = None
clock = time.process_time if {cpu!r} else time.perf_counter
for name, label, code in {cases!r}:
    ns = dict(mx=mx, np=np, rand=rand, sync=sync)
    exec(code, ns)
    for pas in list(ns["fns"]):
        # fresh arrays per pass: gradients attached by an earlier pass would be computed too
        ns = dict(mx=mx, np=np, rand=rand, sync=sync)
        exec(code, ns)
        fn = ns["fns"][pas]
        t = clock(); fn(); first = clock() - t
        if load_ms is None:
            load_ms = (time.perf_counter() - t0) * 1e3
        fn()
        ts = []
        for _ in range({reps}):
            t = clock(); fn(); ts.append(clock() - t)
        print(json.dumps(dict(case=name, shape=label, pass_=pas, ms=float(np.median(ts)) * 1e3,
                              first_ms=first * 1e3, load_ms=load_ms)), flush=True)
"""


def run_engine(engine, cases, reps, mxpy, cpu=False):
    """{(case, shape, pass): record} from one child process of ``engine``."""
    pkg = "mxnet" if engine == "mxnet" else "sparsym"
    py = mxpy if engine == "mxnet" else sys.executable
    if not py:
        return {}
    env = dict(os.environ)
    if engine == "onednn":
        env["SPARSYM_ONEDNN"] = "1"
    elif engine == "numba":
        env["SPARSYM_ONEDNN"] = "0"
    if cpu:  # one thread everywhere: CPU seconds compare per core whatever the load
        for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                  "NUMBA_NUM_THREADS"):
            env[v] = "1"
    code = CHILD.format(pkg=pkg, root=os.path.dirname(HERE), cases=cases, reps=reps,
                        cpu=cpu)
    res = subprocess.run([py, "-c", code], capture_output=True, text=True, env=env,
                         timeout=3600)
    out = {}
    for line in res.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            out[(r["case"], r["shape"], r["pass_"])] = r
    if res.returncode:
        sys.stderr.write(f"{engine} failed: {res.stderr[-2000:]}\n")
    return out


def main(argv=None):
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated case names (conv,deconv,...)")
    ap.add_argument("--match", default="", help="substring of the shape label")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--engines", default="onednn,numba,mxnet")
    default_mx = os.path.expanduser("~/mxref/bin/python")
    ap.add_argument("--mxnet-python", default=default_mx if os.path.exists(default_mx) else "")
    ap.add_argument("--quick", action="store_true", help="one round, 2 reps, LeNet shapes")
    ap.add_argument("--cpu-time", action="store_true",
                    help="every engine on one thread, timed in process CPU seconds (a "
                         "per-core comparison that a loaded machine distorts less)")
    a = ap.parse_args(argv)
    cases = [c for c in CASES if (not a.only or c[0] in a.only.split(","))
             and a.match in c[1]]
    if a.quick:
        cases = [c for c in cases if "lenet" in c[1]] or cases[:1]
        a.rounds, a.reps = 1, 2
    engines = a.engines.split(",")
    watch = Watch()
    runs = {e: [] for e in engines}
    for _ in range(a.rounds):
        for e in engines:
            runs[e].append(run_engine(e, cases, a.reps, a.mxnet_python, a.cpu_time))
    seen = watch.done()
    seen["under_load"] = under_load([seen])
    keys = [k for r in runs.values() for rr in r for k in rr]
    for key in dict.fromkeys(keys):
        rec = {"case": key[0], "shape": key[1], "pass": key[2]}
        for e in engines:
            vals = [r[key] for r in runs[e] if key in r]
            if vals:
                rec[f"{e}_ms"] = round(float(np.median([v["ms"] for v in vals])), 3)
                rec[f"{e}_first_ms"] = round(float(np.median([v["first_ms"] for v in vals])), 2)
        if "mxnet_ms" in rec:
            for e in engines:
                if e != "mxnet" and f"{e}_ms" in rec:
                    rec[f"{e}_over_mxnet"] = round(rec[f"{e}_ms"] / rec["mxnet_ms"], 3)
            rec["target_over_mxnet"] = TARGET_OVER_MXNET
        rec.update(seen)
        rec["clock"] = "cpu, 1 thread" if a.cpu_time else "wall"
        print(json.dumps(rec), flush=True)
    for e in engines:
        vals = [next(iter(r.values()))["load_ms"] for r in runs[e] if r]
        if vals:
            print(json.dumps({"engine": e, "import_and_first_call_ms": round(
                float(np.median(vals)), 1)}))


if __name__ == "__main__":
    main()
