"""Dense Convolution in both layouts at SBNet's sizes vs MXNet 1.9.1, forward and backward.

(benchmarks/conv.py covers NCHW shapes against the BLAS ceiling; this one the NHWC/NCHW
stripe paths at the batch-1 sizes of benchmarks/sbnet.py.)

Prints one JSON line per (size, layout, pass) with the median milliseconds of ``--reps``
runs; sparsym's NCHW/NHWC passes are interleaved so that load from other processes hits
both alike, and MXNet (NCHW; its CPU Convolution has no NHWC) runs in a subprocess
between sparsym rounds.

- ``fwd``: y = conv(x, w), 3x3 SAME (``--kernel``), C -> C, batch 1, no bias.
- ``bwd``: (dx, dw) from dy (MXNet: autograd backward of the same conv).

Usage: python benchmarks/conv_layouts.py [--sizes 400x704x24,200x352x48] [--kernel 3] [--reps 5]
       [--mxnet-python ~/mxref/bin/python] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _median_ms(fns, reps):
    """Median milliseconds of each callable, run round-robin (sbnet.py's timer)."""
    from sbnet import _median_times
    return [round(t * 1e3, 3) for t in _median_times(fns, reps)]


def sparsym_times(h, w, c, k, reps):
    """{(layout, pass): ms} for sparsym's dense conv kernels."""
    from sparsym.kernels.conv import conv_backward, conv_forward
    rng = np.random.default_rng(0)
    p = k // 2
    xc = rng.standard_normal((1, h, w, c), dtype=np.float32)
    wc = rng.standard_normal((c, k, k, c), dtype=np.float32)
    dyc = rng.standard_normal((1, h, w, c), dtype=np.float32)
    xf, wf, dyf = (np.ascontiguousarray(a.transpose(0, 3, 1, 2)) for a in (xc, wc, dyc))
    geo = ((1, 1), (p, p), (1, 1), 1)
    fns = {
        ("NCHW", "fwd"): lambda: conv_forward(xf, wf, None, *geo),
        ("NHWC", "fwd"): lambda: conv_forward(xc, wc, None, *geo, layout="NHWC"),
        ("NCHW", "bwd"): lambda: conv_backward(xf, wf, dyf, *geo, need_bias=False),
        ("NHWC", "bwd"): lambda: conv_backward(xc, wc, dyc, *geo, need_bias=False,
                                               layout="NHWC"),
    }
    return dict(zip(fns, _median_ms(list(fns.values()), reps)))


def mxnet_times(py, h, w, c, k, reps):
    """{'fwd': ms, 'bwd': ms} for MXNet's NCHW Convolution, or None without MXNet."""
    code = f"""
import time, json, numpy as np, mxnet as mx
x = mx.nd.array(np.random.rand(1, {c}, {h}, {w}).astype('float32'))
wt = mx.nd.array(np.random.rand({c}, {c}, {k}, {k}).astype('float32'))
dy = mx.nd.array(np.random.rand(1, {c}, {h}, {w}).astype('float32'))
x.attach_grad(); wt.attach_grad()
conv = lambda: mx.nd.Convolution(x, wt, kernel=({k}, {k}), num_filter={c},
                                  pad=({k // 2}, {k // 2}), no_bias=True)
def fwd():
    conv().wait_to_read()
def bwd():
    with mx.autograd.record():
        y = conv()
    y.backward(dy)
    x.grad.wait_to_read(); wt.grad.wait_to_read()
out = {{}}
for name, f in (("fwd", fwd), ("bwd", bwd)):
    f(); ts = []
    for _ in range({reps}):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    out[name] = float(np.median(ts)) * 1e3
print(json.dumps(out))
"""
    if not py:
        return None
    try:
        res = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=600)
        return json.loads(res.stdout.strip().splitlines()[-1])
    except Exception:   # noqa: BLE001  (MXNet is optional; report its absence)
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="400x704x24,200x352x48", help="HxWxC list")
    ap.add_argument("--kernel", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2, help="sparsym/MXNet alternations")
    default_mx = os.path.expanduser("~/mxref/bin/python")
    ap.add_argument("--mxnet-python", default=default_mx if os.path.exists(default_mx) else "")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (CI smoke run)")
    args = ap.parse_args(argv)
    sizes = "40x48x8" if args.quick else args.sizes
    for size in sizes.split(","):
        h, w, c = (int(v) for v in size.split("x"))
        ours, theirs = [], []
        for _ in range(max(1, args.rounds)):
            ours.append(sparsym_times(h, w, c, args.kernel, args.reps))
            mx_ms = mxnet_times(args.mxnet_python, h, w, c, args.kernel, args.reps)
            if mx_ms is not None:
                theirs.append(mx_ms)
        for (layout, pas) in ours[0]:
            ms = float(np.median([o[(layout, pas)] for o in ours]))
            mxm = float(np.median([t[pas] for t in theirs])) if theirs else None
            print(json.dumps({
                "size": size, "kernel": args.kernel, "layout": layout, "pass": pas,
                "sparsym_ms": round(ms, 3),
                "mxnet_nchw_ms": None if mxm is None else round(mxm, 3),
                "sparsym_over_mxnet": None if mxm is None else round(ms / mxm, 3)}))


if __name__ == "__main__":
    main()
