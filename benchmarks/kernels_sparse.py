"""Sparse kernel benchmarks: sparsym kernels vs scipy. Prints one JSON object per line.

Run: PYTHONPATH=. python benchmarks/kernels_sparse.py [--repeat N]  (from the repo root)
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numba
import numpy as np
import scipy.sparse as sp

from sparsym.kernels import csr as kc
from sparsym.kernels import csr_dot as kd
from sparsym.kernels import rsp as kr
from sparsym.storage import CSR, IDX, RSP


def best_of(fn, repeat):
    """(min, median) wall time in seconds after one warm-up call (JIT compile, page faults)."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times))


def emit(name, ours, ref=None, **meta):
    """One JSON line; speedup = scipy / sparsym on the minimum times (least noise)."""
    rec = {"bench": name, **meta, "sparsym_ms": round(ours[0] * 1e3, 3),
           "sparsym_median_ms": round(ours[1] * 1e3, 3)}
    if ref is not None:
        rec["scipy_ms"] = round(ref[0] * 1e3, 3)
        rec["scipy_median_ms"] = round(ref[1] * 1e3, 3)
        rec["speedup"] = round(ref[0] / ours[0], 2)
    print(json.dumps(rec), flush=True)


def _layer():
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        return None


def rand_csr(m, n, per_row, rng, dtype=np.float32):
    indptr = np.arange(m + 1, dtype=IDX) * per_row
    indices = np.sort(rng.integers(0, n, (m, per_row)), axis=1).reshape(-1).astype(IDX)
    data = rng.random(m * per_row).astype(dtype)
    s = sp.csr_matrix((data, indices, indptr), shape=(m, n))
    s.sum_duplicates()
    a = CSR(s.data, s.indices.astype(IDX), s.indptr.astype(IDX), s.shape)
    # scipy side uses its own (int32) index arrays: the fastest configuration for it
    return a, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30, help="timed calls per small kernel")
    args = ap.parse_args()
    rep = args.repeat
    rep_big = max(3, rep // 4)  # the 512 x 100,000 dense casts move ~200 MB per call
    rng = np.random.default_rng(0)
    print(json.dumps({"bench": "env", "numba_threads": numba.get_num_threads(),
                      "threading_layer": _layer(), "loadavg": list(os.getloadavg())}), flush=True)

    m, n, per = 8192, 200_000, 15
    a, s = rand_csr(m, n, per, rng)
    meta = dict(shape=[m, n], nnz_per_row=per, dtype="float32")
    for k in (1, 16, 64):
        b = rng.standard_normal((n, k)).astype(np.float32)
        emit("dot_csr_dns", best_of(lambda: kd.dot_csr_dns(a, b), rep),
             best_of(lambda: s @ b, rep), k=k, **meta)
    for k in (1, 16, 64):
        b = rng.standard_normal((m, k)).astype(np.float32)
        emit("dot_csrT_dns_rsp", best_of(lambda: kd.dot_csrT_dns_rsp(a, b), rep),
             best_of(lambda: s.T @ b, rep), k=k, **meta)
    for k, frac in ((16, 1.0), (16, 0.5), (64, 0.5)):
        rows = np.flatnonzero(rng.random(n) < frac).astype(IDX)
        w = RSP(rng.standard_normal((len(rows), k)).astype(np.float32), rows, (n, k))
        wd = kr.rsp_to_dense(w)
        emit("dot_csr_rsp", best_of(lambda: kd.dot_csr_rsp(a, w), rep),
             best_of(lambda: s @ wd, rep), k=k, rows_present=frac,
             note="scipy ref multiplies the densified weight", **meta)

    for nr, frac, k in ((1_000_000, 0.05, 64), (200_000, 0.5, 16)):
        def mk(seed):
            r = np.random.default_rng(seed)
            rows = np.flatnonzero(r.random(nr) < frac).astype(IDX)
            return RSP(r.standard_normal((len(rows), k)).astype(np.float32), rows, (nr, k))
        x, y = mk(1), mk(2)
        emit("add_rsp_rsp", best_of(lambda: kr.add_rsp_rsp(x, y), rep), None,
             shape=[nr, k], rows_present=frac, nnr=[len(x.indices), len(y.indices)])

    m2, n2 = 512, 100_000
    for density in (1e-2, 1e-3, 1e-4):
        d = np.zeros((m2, n2), np.float32)
        nnz = int(m2 * n2 * density)
        d.reshape(-1)[rng.integers(0, m2 * n2, nnz)] = rng.random(nnz).astype(np.float32) + 0.1
        c = kc.dense_to_csr(d)
        sc = sp.csr_matrix(d)
        cm = dict(shape=[m2, n2], density=density, dtype="float32")
        emit("dense_to_csr", best_of(lambda: kc.dense_to_csr(d), rep_big),
             best_of(lambda: sp.csr_matrix(d), rep_big), **cm)
        emit("csr_to_dense", best_of(lambda: kc.csr_to_dense(c), rep_big),
             best_of(lambda: sc.toarray(), rep_big), **cm)
        # row-sparse: keep ~density of rows fully populated
        dr = np.zeros((m2, n2), np.float32)
        rows = rng.random(m2) < max(density * 10, 2.0 / m2)
        dr[rows] = 1.0
        r = kr.dense_to_rsp(dr)
        emit("dense_to_rsp", best_of(lambda: kr.dense_to_rsp(dr), rep_big), None,
             rows_present=len(r.indices), **cm)
        emit("dense_to_rsp", best_of(lambda: kr.dense_to_rsp(d), rep_big), None,
             note="scattered input: every row present, so the whole array is copied", **cm)
        emit("rsp_to_dense", best_of(lambda: kr.rsp_to_dense(r), rep_big), None,
             rows_present=len(r.indices), **cm)


if __name__ == "__main__":
    main()
