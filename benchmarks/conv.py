"""Dense conv kernel throughput vs a plain GEMM of the same (M, N, K), measured in one run.

Prints one JSON line per shape.  M = num_filter/group, K = C/group*kh*kw, N = batch*OH*OW;
the GEMM is one np.matmul on preallocated contiguous operands (the BLAS ceiling the
im2col + GEMM conv is compared against).  Conv and GEMM runs are interleaved so that noise
from other processes hits both; medians and best-of are reported.

With ``--mxnet-python`` (default ~/mxref/bin/python when it exists) every shape is also
timed on MXNet 1.9.1's mx.nd.Convolution (forward, and forward+backward via autograd) in a
subprocess right after ours; ``mxnet_conv_ms`` / ``mxnet_bwd_ms`` appear in the record.

Usage: python benchmarks/conv.py [--reps 15] [--dtype float32] [--mxnet-python PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SHAPES = [
    # (N, C, H, W, F, k, stride, pad, group)
    (1, 64, 128, 128, 64, 3, 1, 1, 1),
    (1, 32, 256, 256, 32, 3, 1, 1, 1),
    (8, 64, 56, 56, 64, 3, 1, 1, 1),
    (1, 128, 64, 64, 256, 1, 1, 0, 1),
    (1, 64, 128, 128, 128, 3, 2, 1, 1),
]


def bench(shape, reps, dtype, backward):
    # imported here: the MXNet child process (--mxnet-shape) must not need sparsym
    from sparsym.kernels.conv import conv_backward, conv_forward
    n, c, h, w, f, k, s, p, g = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((f, c // g, k, k)).astype(dtype)
    oh = (h + 2 * p - k) // s + 1
    ow = (w + 2 * p - k) // s + 1
    M, K, N = f // g, c // g * k * k, n * oh * ow
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    out = np.empty((M, N), dtype=dtype)
    dy = rng.standard_normal((n, f, oh, ow)).astype(dtype)

    def conv():
        conv_forward(x, wt, None, (s, s), (p, p), (1, 1), g)

    def gemm():
        for _ in range(g):
            np.matmul(a, b, out=out)

    def bwd():
        conv_backward(x, wt, dy, (s, s), (p, p), (1, 1), g, True)

    fns = {"conv": conv, "gemm": gemm}
    if backward:
        fns["bwd"] = bwd
    times = {key: [] for key in fns}
    for fn in fns.values():  # warm-up (numba compile, workspace allocation)
        fn()
        fn()
    for _ in range(reps):
        for key, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    flops = 2.0 * M * K * N * g
    med = {key: float(np.median(v)) for key, v in times.items()}
    best = {key: float(np.min(v)) for key, v in times.items()}
    rec = {
        "shape": {"N": n, "C": c, "H": h, "W": w, "F": f, "k": k, "stride": s, "pad": p,
                  "group": g},
        "dtype": np.dtype(dtype).name, "M": M, "N": N, "K": K,
        "conv_ms": round(med["conv"] * 1e3, 3), "gemm_ms": round(med["gemm"] * 1e3, 3),
        "conv_gflops": round(flops / med["conv"] / 1e9, 2),
        "gemm_gflops": round(flops / med["gemm"] / 1e9, 2),
        "ratio": round(med["gemm"] / med["conv"], 3),
        "ratio_best": round(best["gemm"] / best["conv"], 3),
    }
    if backward:
        rec["bwd_ms"] = round(med["bwd"] * 1e3, 3)
        rec["bwd_gflops"] = round(2 * flops / med["bwd"] / 1e9, 2)
        rec["bwd_ratio"] = round(2 * med["gemm"] / med["bwd"], 3)
    return rec


def bench_mxnet(shape, reps, dtype):
    """Run inside MXNet's interpreter: median ms of Convolution forward and fwd+bwd."""
    import mxnet as mx
    n, c, h, w, f, k, s, p, g = shape
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((n, c, h, w)), dtype=dtype)
    wt = mx.nd.array(rng.standard_normal((f, c // g, k, k)), dtype=dtype)
    kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), num_filter=f, num_group=g, no_bias=True)
    x.attach_grad()
    wt.attach_grad()

    def fwd():
        mx.nd.Convolution(x, wt, **kw).wait_to_read()

    def bwd():
        with mx.autograd.record():
            y = mx.nd.Convolution(x, wt, **kw)
        y.backward()
        mx.nd.waitall()

    out = {}
    for key, fn in (("mxnet_conv_ms", fwd), ("mxnet_fwd_bwd_ms", bwd)):
        fn()
        fn()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        out[key] = round(float(np.median(ts)) * 1e3, 3)
    return out


def _mxnet_python(arg):
    if arg:
        return arg if arg != "none" else None
    cand = os.path.expanduser("~/mxref/bin/python")
    return cand if os.path.exists(cand) else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--no-backward", action="store_true")
    ap.add_argument("--mxnet-python", default="", help="MXNet interpreter ('none' to skip)")
    ap.add_argument("--mxnet-shape", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mxnet_shape:  # child mode, inside MXNet's interpreter
        print(json.dumps(bench_mxnet(json.loads(args.mxnet_shape), args.reps, args.dtype)))
        return
    mxpy = _mxnet_python(args.mxnet_python)
    for shape in SHAPES:
        rec = bench(shape, args.reps, np.dtype(args.dtype), not args.no_backward)
        if mxpy:
            res = subprocess.run([mxpy, os.path.abspath(__file__), "--reps", str(args.reps),
                                  "--dtype", args.dtype, "--mxnet-shape", json.dumps(shape)],
                                 capture_output=True, text=True, check=False)
            if res.returncode == 0:
                mx_rec = json.loads(res.stdout.strip().splitlines()[-1])
                rec.update(mx_rec)
                rec["speedup_vs_mxnet"] = round(mx_rec["mxnet_conv_ms"] / rec["conv_ms"], 3)
            else:
                rec["mxnet_error"] = res.stderr.strip().splitlines()[-1:]
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
