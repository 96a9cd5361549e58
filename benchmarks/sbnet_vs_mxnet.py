"""SBNet's block-sparse 3x3 convolution against MXNet 1.9.1's dense convolution on the same
tensor: forward, and forward + backward under autograd (data and weight gradients).

sparsym runs the public op ``mx.nd.contrib.SparseBlockConvolution`` (mask included, tile
autotuned on first use, dispatch on) on a mask of random disks covering ``--density`` of
the pixels; MXNet runs ``mx.nd.Convolution`` densely (its CPU conv is oneDNN's). Each
round runs one fresh process per engine and layout, alternating; one JSON line per
(layout, pass) gives the median milliseconds over rounds, the speedup over MXNet and the
1-minute load average around the rounds, then one line for the first call of each engine
(library load, primitive creation and JIT, tile autotuning).

Usage: python benchmarks/sbnet_vs_mxnet.py [--size 400x704x24] [--density 10]
       [--layouts NCHW,NHWC] [--rounds 3] [--reps 7] [--cpu-time]
       [--mxnet-python ~/mxref/bin/python]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, sys, time
t_start = time.perf_counter()
import numpy as np
pkg, layout, h, w, c, density, reps, cpu = sys.argv[1:9]
h, w, c, density, reps = int(h), int(w), int(c), float(density) / 100, int(reps)
clock = time.process_time if cpu == "1" else time.perf_counter
if pkg == "sparsym":
    sys.path.insert(0, {root!r})
    import sparsym as mx
else:
    import mxnet as mx
rng = np.random.default_rng(0)
m = np.zeros((1, h, w), np.float32)
yy, xx = np.mgrid[:h, :w]
while m.mean() < density:   # random disks until the density is reached
    r = rng.uniform(0.02, 0.08) * min(h, w)
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    m[0][(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = 1
nhwc = layout == "NHWC"
x = mx.nd.array(rng.standard_normal((1, h, w, c) if nhwc else (1, c, h, w)).astype("f4"))
wt = mx.nd.array(rng.standard_normal((c, 3, 3, c) if nhwc else (c, c, 3, 3)).astype("f4"))
mask = mx.nd.array(m)
x.attach_grad()
wt.attach_grad()
kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=c, no_bias=True)
if pkg == "sparsym":
    op = lambda: mx.nd.contrib.SparseBlockConvolution(x, mask, wt, layout=layout, **kw)
else:
    op = lambda: mx.nd.Convolution(x, wt, **kw)
def fwd():
    op().wait_to_read()
def fwd_bwd():
    with mx.autograd.record():
        y = op()
    y.backward()
    x.grad.wait_to_read()
    wt.grad.wait_to_read()
out = {{}}
for name, f in (("fwd", fwd), ("fwd+bwd", fwd_bwd)):
    t = clock(); f(); first = clock() - t
    if name == "fwd":
        out["first_call_ms"] = first * 1e3
        out["import_to_first_result_ms"] = (time.perf_counter() - t_start) * 1e3
    f()
    ts = []
    for _ in range(reps):
        t = clock(); f(); ts.append(clock() - t)
    out[name] = float(np.median(ts)) * 1e3
out["density"] = float(m.mean())
print(json.dumps(out))
"""


def _run(py, pkg, layout, a):
    h, w, c = a.size.split("x")
    code = CHILD.format(root=os.path.dirname(HERE))
    env = dict(os.environ)
    if a.cpu_time:  # one thread everywhere: CPU seconds compare per core whatever the load
        for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                  "NUMBA_NUM_THREADS"):
            env[v] = "1"
    res = subprocess.run([py, "-c", code, pkg, layout, h, w, c, str(a.density), str(a.reps),
                          "1" if a.cpu_time else "0"],
                         capture_output=True, text=True, timeout=1800, env=env)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        sys.stderr.write(f"{pkg} {layout} failed: {res.stderr[-1500:]}\n")
        return None
    return json.loads(lines[-1])


def main(argv=None):
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="400x704x24", help="HxWxC")
    ap.add_argument("--density", type=float, default=10.0, help="percent of active pixels")
    ap.add_argument("--layouts", default="NCHW,NHWC")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cpu-time", action="store_true",
                    help="every engine on one thread, timed in process CPU seconds")
    default_mx = os.path.expanduser("~/mxref/bin/python")
    ap.add_argument("--mxnet-python", default=default_mx if os.path.exists(default_mx) else "")
    a = ap.parse_args(argv)
    layouts = a.layouts.split(",")
    load0 = os.getloadavg()[0]
    ours = {lay: [] for lay in layouts}
    theirs = []
    for _ in range(a.rounds):
        for lay in layouts:
            r = _run(sys.executable, "sparsym", lay, a)
            if r:
                ours[lay].append(r)
            if a.mxnet_python and lay == layouts[0]:
                r = _run(a.mxnet_python, "mxnet", "NCHW", a)
                if r:
                    theirs.append(r)
    load1 = os.getloadavg()[0]
    med = lambda rs, k: round(float(np.median([r[k] for r in rs])), 2) if rs else None
    for lay in layouts:
        for pas in ("fwd", "fwd+bwd"):
            s, m = med(ours[lay], pas), med(theirs, pas)
            print(json.dumps({"size": a.size, "density": a.density, "layout": lay, "pass": pas,
                              "sparsym_ms": s, "mxnet_dense_ms": m,
                              "speedup": round(m / s, 2) if s and m else None,
                              "clock": "cpu, 1 thread" if a.cpu_time else "wall",
                              "load": [round(load0, 2), round(load1, 2)]}))
    print(json.dumps({"first_call_ms": {lay: med(ours[lay], "first_call_ms") for lay in layouts}
                      | {"mxnet": med(theirs, "first_call_ms")},
                      "import_to_first_result_ms": {
                          lay: med(ours[lay], "import_to_first_result_ms") for lay in layouts}
                      | {"mxnet": med(theirs, "import_to_first_result_ms")}}))


if __name__ == "__main__":
    main()
