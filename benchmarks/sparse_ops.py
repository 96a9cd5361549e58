"""Sparse operator benchmarks through the public API, side by side with scipy and MXNet 1.9.1.

Run from the repo root::

    python benchmarks/sparse_ops.py [--repeat N] [--only NAME[,NAME]] [--no-mxnet]

Prints one JSON object per line: ``{"bench", shape/params..., "sparsym_ms", "scipy_ms",
"mxnet_ms", "vs_scipy", "vs_mxnet", "sparsym_median_ms", "scipy_median_ms"}`` (ratios > 1
mean sparsym is faster; times are the minimum over ``--repeat`` calls after a warm-up call;
sparsym and scipy calls alternate, so both see the same machine load; MXNet and
sparsym/scipy take turns ``--rounds`` times and each keeps its best, since the speed of a
shared VM drifts over seconds; the medians are the lowest per-round ones). The same arrays are
fed to every library: they are generated here, written to a temporary .npz and read by an
MXNet child process (``~/mxref/bin/python``, or ``$MXNET_PYTHON``); MXNet is never imported
here.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sparsym as mx  # noqa: E402

MXNET_PYTHON = os.environ.get("MXNET_PYTHON", os.path.expanduser("~/mxref/bin/python"))


def timed(fns, repeat):
    """[(min, median) wall time (s)] per function over ``repeat`` rounds after a warm-up call;
    each round calls every function once, so on a shared machine they see the same load."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return [(min(ts), float(np.median(ts))) for ts in times]


# ----------------------------------------------------------------------------- data
def rand_csr_parts(m, n, per_row, seed):
    """(data, indices, indptr) with exactly ``per_row`` sorted unique columns per row."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, n, (m, per_row + 4))
    rows = [np.unique(c)[:per_row] for c in cols]
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    indices = np.concatenate(rows).astype(np.int64)
    data = rng.random(len(indices)).astype(np.float32)
    return data, indices, indptr


def rand_rsp_parts(nrows, k, nnr, seed):
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(nrows, nnr, replace=False)).astype(np.int64)
    return rng.standard_normal((nnr, k)).astype(np.float32), idx


def cases(sel):
    """Yield (name, meta, arrays dict, sparsym fn(arrays) -> callable, scipy fn or None)."""
    m, n, per = 8192, 200_000, 15
    if sel("dot_csr_dns") or sel("dot_csr_rsp") or sel("dot_csrT_dns"):
        data, indices, indptr = rand_csr_parts(m, n, per, 0)
    if sel("dot_csr_dns"):
        for k in (1, 16, 64):
            b = np.random.default_rng(k).standard_normal((n, k)).astype(np.float32)
            yield ("dot_csr_dns", dict(shape=[m, n], nnz_per_row=per, k=k),
                   dict(data=data, indices=indices, indptr=indptr, shape=(m, n), b=b),
                   "dot(csr, dense) -> dense")
    if sel("dot_csr_rsp"):
        for k in (1, 16, 64):
            wd, wi = rand_rsp_parts(n, k, n // 2, 10 + k)
            yield ("dot_csr_rsp", dict(shape=[m, n], nnz_per_row=per, k=k, weight_rows=n // 2),
                   dict(data=data, indices=indices, indptr=indptr, shape=(m, n), wdata=wd,
                        widx=wi, wshape=(n, k)),
                   "dot(csr, row_sparse) -> dense")
    if sel("dot_csrT_dns"):
        for k in (1, 16, 64):
            b = np.random.default_rng(20 + k).standard_normal((m, k)).astype(np.float32)
            yield ("dot_csrT_dns", dict(shape=[m, n], nnz_per_row=per, k=k),
                   dict(data=data, indices=indices, indptr=indptr, shape=(m, n), b=b),
                   "dot(csr.T, dense) -> row_sparse")
    if sel("add_rsp_rsp"):
        for nrows, nnr, k in ((1_000_000, 50_000, 64), (200_000, 100_000, 16)):
            ad, ai = rand_rsp_parts(nrows, k, nnr, 1)
            bd, bi = rand_rsp_parts(nrows, k, nnr, 2)
            yield ("add_rsp_rsp", dict(shape=[nrows, k], nnr=nnr),
                   dict(adata=ad, aidx=ai, bdata=bd, bidx=bi, shape=(nrows, k)),
                   "elemwise_add(row_sparse, row_sparse) -> row_sparse")
    m2, n2 = 512, 100_000
    for density in (1e-2, 1e-3):
        if not any(sel(x) for x in ("cast_dns_csr", "cast_csr_dns", "cast_dns_rsp",
                                    "cast_rsp_dns")):
            break
        rng = np.random.default_rng(3)
        d = np.zeros((m2, n2), np.float32)
        nnz = int(m2 * n2 * density)
        d.reshape(-1)[rng.integers(0, m2 * n2, nnz)] = rng.random(nnz).astype(np.float32) + 0.1
        meta = dict(shape=[m2, n2], density=density)
        if sel("cast_dns_csr"):
            yield "cast_dns_csr", meta, dict(d=d), "cast_storage(dense -> csr)"
        if sel("cast_csr_dns"):
            yield "cast_csr_dns", meta, dict(d=d), "cast_storage(csr -> dense)"
        dr = np.zeros((m2, n2), np.float32)
        dr[rng.random(m2) < density * 10] = 1.0
        meta_r = dict(shape=[m2, n2], rows_present=int((dr[:, 0] != 0).sum()))
        if sel("cast_dns_rsp"):
            yield "cast_dns_rsp", meta_r, dict(d=dr), "cast_storage(dense -> row_sparse)"
        if sel("cast_rsp_dns"):
            yield "cast_rsp_dns", meta_r, dict(d=dr), "cast_storage(row_sparse -> dense)"
    nrows, k, touched = 1_000_000, 16, 5_000
    for opt in ("sgd_update", "adam_update"):
        if not sel(opt):
            continue
        rng = np.random.default_rng(5)
        w = rng.standard_normal((nrows, k)).astype(np.float32)
        gd, gi = rand_rsp_parts(nrows, k, touched, 6)
        yield (opt, dict(weight=[nrows, k], weight_stype="row_sparse", touched_rows=touched,
                         lazy_update=True),
               dict(w=w, gdata=gd, gidx=gi, shape=(nrows, k)),
               f"{opt}(row_sparse weight, row_sparse grad, out=weight)")


# ----------------------------------------------------------------------------- sparsym
def sparsym_fn(name, a):
    nd = mx.nd
    if name in ("dot_csr_dns", "dot_csr_rsp", "dot_csrT_dns"):
        x = nd.sparse.csr_matrix((a["data"], a["indices"], a["indptr"]), shape=a["shape"])
        if name == "dot_csr_rsp":
            w = nd.sparse.row_sparse_array((a["wdata"], a["widx"]), shape=a["wshape"])
            return lambda: nd.sparse.dot(x, w)
        b = nd.array(a["b"])
        if name == "dot_csrT_dns":
            return lambda: nd.sparse.dot(x, b, transpose_a=True)
        return lambda: nd.sparse.dot(x, b)
    if name == "add_rsp_rsp":
        x = nd.sparse.row_sparse_array((a["adata"], a["aidx"]), shape=a["shape"])
        y = nd.sparse.row_sparse_array((a["bdata"], a["bidx"]), shape=a["shape"])
        return lambda: nd.sparse.elemwise_add(x, y)
    if name in ("cast_dns_csr", "cast_dns_rsp"):
        d = nd.array(a["d"])
        stype = "csr" if name == "cast_dns_csr" else "row_sparse"
        return lambda: nd.cast_storage(d, stype=stype)
    if name in ("cast_csr_dns", "cast_rsp_dns"):
        s = nd.array(a["d"]).tostype("csr" if name == "cast_csr_dns" else "row_sparse")
        return lambda: nd.cast_storage(s, stype="default")
    if name in ("sgd_update", "adam_update"):
        w = nd.array(a["w"]).tostype("row_sparse")
        g = nd.sparse.row_sparse_array((a["gdata"], a["gidx"]), shape=a["shape"])
        if name == "sgd_update":
            return lambda: nd.sparse.sgd_update(w, g, lr=0.1, wd=1e-4, out=w)
        mean = nd.sparse.zeros("row_sparse", a["shape"])
        var = nd.sparse.zeros("row_sparse", a["shape"])
        return lambda: nd.sparse.adam_update(w, g, mean, var, lr=0.01, wd=1e-4, out=w)
    raise KeyError(name)


def scipy_fn(name, a):
    if name in ("dot_csr_dns", "dot_csrT_dns"):
        # scipy on its preferred int32 indices
        s = sp.csr_matrix((a["data"], a["indices"].astype(np.int32), a["indptr"].astype(np.int32)),
                          shape=a["shape"])
        b = a["b"]
        return (lambda: s.T @ b) if name == "dot_csrT_dns" else (lambda: s @ b)
    if name == "cast_dns_csr":
        d = a["d"]
        return lambda: sp.csr_matrix(d)
    if name == "cast_csr_dns":
        s = sp.csr_matrix(a["d"])
        return lambda: s.toarray()
    return None


# ----------------------------------------------------------------------------- MXNet child
MXNET_CHILD = textwrap.dedent(r'''
    import json, sys, time
    import numpy as np
    import mxnet as mx
    nd = mx.nd
    path, repeat = sys.argv[1], int(sys.argv[2])
    spec = json.load(open(path + ".json"))
    def best(fn):
        fn(); nd.waitall()
        ts = []
        for _ in range(repeat):
            t = time.perf_counter(); fn(); nd.waitall(); ts.append(time.perf_counter() - t)
        return min(ts)
    for i, (name, _) in enumerate(spec):
        a = dict(np.load(f"{path}_{i}.npz"))
        if name in ("dot_csr_dns", "dot_csr_rsp", "dot_csrT_dns"):
            x = nd.sparse.csr_matrix((a["data"], a["indices"], a["indptr"]),
                                     shape=tuple(a["shape"]))
            if name == "dot_csr_rsp":
                w = nd.sparse.row_sparse_array((a["wdata"], a["widx"]), shape=tuple(a["wshape"]))
                fn = lambda: nd.sparse.dot(x, w)
            else:
                b = nd.array(a["b"])
                fn = (lambda: nd.sparse.dot(x, b, transpose_a=True)) if name == "dot_csrT_dns" \
                    else (lambda: nd.sparse.dot(x, b))
        elif name == "add_rsp_rsp":
            x = nd.sparse.row_sparse_array((a["adata"], a["aidx"]), shape=tuple(a["shape"]))
            y = nd.sparse.row_sparse_array((a["bdata"], a["bidx"]), shape=tuple(a["shape"]))
            fn = lambda: nd.sparse.elemwise_add(x, y)
        elif name in ("cast_dns_csr", "cast_dns_rsp"):
            d = nd.array(a["d"])
            st = "csr" if name == "cast_dns_csr" else "row_sparse"
            fn = lambda: nd.cast_storage(d, stype=st)
        elif name in ("cast_csr_dns", "cast_rsp_dns"):
            s = nd.array(a["d"]).tostype("csr" if name == "cast_csr_dns" else "row_sparse")
            fn = lambda: nd.cast_storage(s, stype="default")
        elif name in ("sgd_update", "adam_update"):
            w = nd.array(a["w"]).tostype("row_sparse")
            g = nd.sparse.row_sparse_array((a["gdata"], a["gidx"]), shape=tuple(a["shape"]))
            if name == "sgd_update":
                fn = lambda: nd.sparse.sgd_update(w, g, lr=0.1, wd=1e-4, out=w)
            else:
                mean = nd.sparse.zeros("row_sparse", tuple(a["shape"]))
                var = nd.sparse.zeros("row_sparse", tuple(a["shape"]))
                fn = lambda: nd.sparse.adam_update(w, g, mean, var, lr=0.01, wd=1e-4, out=w)
        else:
            continue
        print(json.dumps({"i": i, "mxnet_ms": best(fn) * 1e3}), flush=True)
''')


def run_mxnet(specs, arrays, repeat):
    """Time every case in one MXNet child process; {case index: ms}."""
    if not os.path.exists(MXNET_PYTHON):
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "case")
        for i, arrs in enumerate(arrays):
            np.savez(f"{base}_{i}.npz", **{k: np.asarray(v) for k, v in arrs.items()})
        with open(base + ".json", "w") as f:
            json.dump(specs, f)
        env = dict(os.environ, MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0")
        proc = subprocess.run([MXNET_PYTHON, "-c", MXNET_CHILD, base, str(repeat)],
                              capture_output=True, text=True, env=env)
        out = {}
        for line in proc.stdout.splitlines():
            rec = json.loads(line)
            out[rec["i"]] = rec["mxnet_ms"]
        if proc.returncode != 0:
            print(json.dumps({"bench": "mxnet_error", "stderr": proc.stderr[-2000:]}),
                  flush=True)
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3,
                    help="MXNet and sparsym/scipy take turns this many times; each keeps its "
                         "best time (the machine's speed drifts over seconds on a shared VM)")
    ap.add_argument("--only", default="", help="comma-separated bench names")
    ap.add_argument("--no-mxnet", action="store_true")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))

    def sel(name):
        return not only or name in only

    import numba
    print(json.dumps({"bench": "env", "numba_threads": numba.get_num_threads(),
                      "threading_layer": _threading_layer(),
                      "loadavg": [round(x, 2) for x in os.getloadavg()],
                      "python": sys.version.split()[0]}), flush=True)
    all_cases = list(cases(sel))
    fns = []
    for name, _, arrays, _ in all_cases:
        ref = scipy_fn(name, arrays)
        fns.append([sparsym_fn(name, arrays)] + ([ref] if ref is not None else []))
    mx_ms, ours = {}, [None] * len(all_cases)
    for _ in range(args.rounds):
        if not args.no_mxnet:
            got = run_mxnet([(c[0], c[3]) for c in all_cases], [c[2] for c in all_cases],
                            args.repeat)
            for i, ms in got.items():
                mx_ms[i] = min(ms, mx_ms.get(i, ms))
        for i, f in enumerate(fns):
            res = timed(f, args.repeat)  # sparsym and scipy interleaved call by call
            ours[i] = res if ours[i] is None else [
                (min(a[0], b[0]), min(a[1], b[1])) for a, b in zip(ours[i], res)]
    for i, (name, meta, _arrays, what) in enumerate(all_cases):
        rec = {"bench": name, "op": what, **meta, "rounds": args.rounds}
        res = ours[i]
        rec["sparsym_ms"] = round(res[0][0] * 1e3, 3)
        rec["sparsym_median_ms"] = round(res[0][1] * 1e3, 3)
        if len(res) > 1:
            rec["scipy_ms"] = round(res[1][0] * 1e3, 3)
            rec["scipy_median_ms"] = round(res[1][1] * 1e3, 3)
            rec["vs_scipy"] = round(res[1][0] / res[0][0], 2)
        if i in mx_ms:
            rec["mxnet_ms"] = round(mx_ms[i], 3)
            rec["vs_mxnet"] = round(mx_ms[i] / (res[0][0] * 1e3), 2)
        print(json.dumps(rec), flush=True)


def _threading_layer():
    """The threading layer Numba picks in this process (started by one tiny parallel loop)."""
    import numba

    @numba.njit(parallel=True)
    def touch(x):
        for i in numba.prange(x.shape[0]):
            x[i] += 1.0
    touch(np.zeros(4))
    return numba.threading_layer()


if __name__ == "__main__":
    main()
