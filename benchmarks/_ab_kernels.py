"""Interleaved A/B of kernels against another checkout: this tree's csr products, SBNet tile
loops and block gather/scatter against the same functions of ``--base``.

    git worktree add /tmp/base <rev>
    python benchmarks/_ab_kernels.py --base /tmp/base [--reps 200] [--only csr,sbnet,blocks]

Both versions run in one process, call after call on the same arrays, so machine load hits
both alike (the shared machine's load swings end-to-end timings 2-5x between runs); each
prints the minimum ms over ``--reps`` pairs. The base's module files are copied to a
temporary directory and loaded from there, so their Numba cache never mixes with the base
checkout's. The csr products run twice: serial, and parallel with the gate off
(``_twins._ADAPTIVE = False``), so each mode is measured, not the gate's choice. Results
are checked equal before timing. Prints one JSON line per family.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sparsym.kernels import _twins, block_sparse, csr_dot  # noqa: E402
from sparsym.kernels.sbnet import _kernels as sbk  # noqa: E402
from sparsym.storage import CSR, RSP  # noqa: E402


def load_base(base, rel, tmp):
    """Module ``rel`` (a path under sparsym/kernels/) of the base checkout, from a copy."""
    src = os.path.join(base, "sparsym", "kernels", rel)
    dst = os.path.join(tmp, rel.replace("/", "_"))
    shutil.copy(src, dst)
    name = "sparsym.kernels._ab_" + os.path.splitext(os.path.basename(dst))[0]
    spec = importlib.util.spec_from_file_location(name, dst)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ab(old, new, reps, same=None):
    """{case: (base min ms, this tree's min ms)} over interleaved calls."""
    res = {}
    for k in old:
        x, y = old[k](), new[k]()
        if same is not None:
            same(k, x, y)
        ta, tb = [], []
        for _ in range(reps):
            t = time.perf_counter()
            old[k]()
            ta.append(time.perf_counter() - t)
            t = time.perf_counter()
            new[k]()
            tb.append(time.perf_counter() - t)
        res[k] = (round(1e3 * min(ta), 3), round(1e3 * min(tb), 3))
    return res


def _values(r):
    return r.data if isinstance(r, (CSR, RSP)) else r


def _check(k, x, y):
    if not np.allclose(_values(x), _values(y), rtol=1e-4, atol=1e-4):
        raise AssertionError(f"{k}: the two trees disagree")


def csr_cases(K):
    rng = np.random.default_rng(0)
    m, n, per = 8192, 200000, 15
    nnz = m * per
    a = CSR(rng.random(nnz).astype(np.float32), rng.integers(0, n, nnz).astype(np.int64),
            np.arange(0, nnz + 1, per, dtype=np.int64), (m, n))
    rows = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int64)
    big = 1000000
    rows_h = np.sort(rng.choice(big, 30000, replace=False)).astype(np.int64)
    ah = CSR(a.data, rng.choice(rows_h, nnz), a.indptr, (m, big))
    b1, b16 = rng.random(n).astype(np.float32), rng.random((n, 16)).astype(np.float32)
    w1 = RSP(rng.random((len(rows), 1)).astype(np.float32), rows, (n, 1))
    w16 = RSP(rng.random((len(rows), 16)).astype(np.float32), rows, (n, 16))
    wh = RSP(rng.random((len(rows_h), 16)).astype(np.float32), rows_h, (big, 16))
    d16, d64 = rng.random((m, 16)).astype(np.float32), rng.random((m, 64)).astype(np.float32)
    return {"csr.dns k1": lambda: K.dot_csr_dns(a, b1),
            "csr.dns k16": lambda: K.dot_csr_dns(a, b16),
            "csr.rsp map k1": lambda: K.dot_csr_rsp(a, w1),
            "csr.rsp map k16": lambda: K.dot_csr_rsp(a, w16),
            "csr.rsp hash k16": lambda: K.dot_csr_rsp(ah, wh),
            "csrT.dns k16": lambda: K.dot_csrT_dns_rsp(a, d16),
            "csrT.dns k64": lambda: K.dot_csrT_dns_rsp(a, d64)}


def sbnet_cases(K):
    rng = np.random.default_rng(0)
    n, oh, ow, f, bo, c, kh = 1, 200, 352, 48, 16, 24, 3
    mo = (rng.random((n, oh, ow)) < 0.5).astype(np.uint8)
    idx = np.ascontiguousarray(np.argwhere(rng.random((n, -(-oh // bo), -(-ow // bo))) < 0.5),
                               dtype=np.int32)
    t = len(idx)
    p = t * bo * bo
    out = rng.random((p, f)).astype(np.float32)
    bias = rng.random(f).astype(np.float32)
    y_cl, y_cf = np.zeros((n, oh, ow, f), np.float32), np.zeros((n, f, oh, ow), np.float32)
    g, g_cf = np.empty((p, f), np.float32), np.empty((f, p), np.float32)
    x = rng.random((n, oh, ow, c)).astype(np.float32)
    cols, dx = np.empty((p, kh * kh * c), np.float32), np.zeros_like(x)
    return {
        "scatter_out_cl": lambda: K.scatter_out_cl(out, idx, 0, t, y_cl, bo, bo, bias, mo, False),
        "scatter_out_cl add": lambda: K.scatter_out_cl(out, idx, 0, t, y_cl, bo, bo, bias, mo,
                                                       True),
        "scatter_out_cf": lambda: K.scatter_out_cf(out.T, idx, 0, t, y_cf, bo, bo, bias, mo,
                                                   False),
        "gather_out_cl": lambda: K.gather_out_cl(y_cl, idx, 0, t, g, bo, bo, mo),
        "gather_out_cf": lambda: K.gather_out_cf(y_cf, idx, 0, t, g_cf, bo, bo, mo),
        "im2col_cl": lambda: K.im2col_cl(x, idx, 0, t, cols, bo, bo, kh, kh, 1, 1, 1, 1),
        "col2im_add_cl": lambda: K.col2im_add_cl(cols, idx, 0, t, dx, bo, bo, kh, kh, 1, 1, 1,
                                                 1, oh, ow)}


def block_cases(B):
    rng = np.random.default_rng(0)
    x = rng.random((1, 200, 352, 24)).astype(np.float32)
    xf = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    idx = np.ascontiguousarray(np.argwhere(rng.random((1, 13, 22)) < 0.5), dtype=np.int32)
    geo = ((18, 18), (16, 16), (-1, -1))
    bl = B.sparse_gather(x, idx, *geo, False, "NHWC")
    bf = B.sparse_gather(xf, idx, *geo, True, "NCHW")
    yl, yf = x.copy(), xf.copy()
    return {
        "gather NHWC": lambda: B.sparse_gather(x, idx, *geo, False, "NHWC"),
        "gather NCHW": lambda: B.sparse_gather(xf, idx, *geo, True, "NCHW"),
        "scatter add NHWC": lambda: B.sparse_scatter_inplace(bl, idx, yl, *geo, True, False,
                                                             "NHWC"),
        "scatter add NCHW": lambda: B.sparse_scatter_inplace(bf, idx, yf, *geo, True, True,
                                                             "NCHW"),
        "scatter write NCHW disjoint": lambda: B.sparse_scatter_inplace(
            bf[:, :, :16, :16], idx, yf, (16, 16), (16, 16), (0, 0), False, True, "NCHW")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="a checkout of the revision to compare with")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--only", default="csr,sbnet,blocks")
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(json.dumps({"bench": "env", "loadavg": os.getloadavg()}))
    with tempfile.TemporaryDirectory() as tmp:
        if "csr" in only:
            old = load_base(args.base, "csr_dot.py", tmp)
            _twins._ADAPTIVE, _twins.COMPILE_AFTER_S = False, 0.0
            for mode, min_work in (("serial", 1 << 62), ("parallel", 0)):
                _twins.PAR_MIN_WORK = min_work
                res = ab(csr_cases(old), csr_cases(csr_dot), args.reps, _check)
                print(json.dumps({"bench": f"csr products, {mode}", "base_vs_this_ms": res}))
        if "sbnet" in only:
            res = ab(sbnet_cases(load_base(args.base, "sbnet/_kernels.py", tmp)),
                     sbnet_cases(sbk), args.reps)
            print(json.dumps({"bench": "sbnet tile loops", "base_vs_this_ms": res}))
        if "blocks" in only:
            res = ab(block_cases(load_base(args.base, "block_sparse.py", tmp)),
                     block_cases(block_sparse), args.reps, _check)
            print(json.dumps({"bench": "block gather/scatter", "base_vs_this_ms": res}))


if __name__ == "__main__":
    main()
