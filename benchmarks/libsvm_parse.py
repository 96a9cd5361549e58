"""LibSVM parsing throughput (MB/s): sparsym's kernel and reader vs MXNet's LibSVMIter.

Generates an Avazu-shaped file (benchmarks/gen_avazu.py), then prints JSON lines:

- ``sparsym.parse_libsvm_chunk[numpy]``: the NumPy parser a fresh process uses until Numba
  is set up, on the whole file already in memory;
- ``sparsym.parse_libsvm_chunk``: the Numba kernel on the same;
- ``sparsym.LibSVMReader``: streaming from disk in ``--chunk-mb`` chunks;
- ``mxnet.LibSVMIter``: a full pass of MXNet 1.9's iterator (batch 8192), run in the oracle
  venv (``~/mxref/bin/python``) as a subprocess when it exists.

Usage::

    python benchmarks/libsvm_parse.py --rows 200000 [--repeat 3] [--mxnet-python PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gen_avazu import generate  # noqa: E402

from sparsym.kernels.libsvm import (  # noqa: E402
    LibSVMReader,
    numba_ready,
    parse_libsvm_chunk,
    warm_numba,
)

_MX_SCRIPT = r"""
import json, sys, time
import mxnet as mx
path, nf, batch, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
best = None
rows = 0
for _ in range(repeat):
    t0 = time.perf_counter()
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(nf,), batch_size=batch)
    rows = 0
    for b in it:
        b.data[0].wait_to_read()
        rows += batch - b.pad
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
print(json.dumps({"seconds": best, "rows": rows, "version": mx.__version__}))
"""


def _best(fn, repeat):
    best = None
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunk-mb", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--file", default=None, help="use this file instead of generating one")
    ap.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    args = ap.parse_args(argv)

    tmp = None
    path = args.file
    if path is None:
        tmp = tempfile.TemporaryDirectory()
        path = os.path.join(tmp.name, "avazu.libsvm")
        generate(path, args.rows, args.features)
    size = os.path.getsize(path)
    mb = size / 1e6
    base = {"file_MB": round(mb, 1), "features": args.features}

    with open(path, "rb") as f:
        buf = f.read()
    # a fresh process parses with NumPy until Numba is set up (kernels/_libsvm_np.py)
    if not numba_ready():
        dt, (_, x, _) = _best(lambda: parse_libsvm_chunk(buf, args.features), args.repeat)
        print(json.dumps({"bench": "libsvm_parse", "impl": "sparsym.parse_libsvm_chunk[numpy]",
                          "rows": x.shape[0], "nnz": x.nnz, "seconds": round(dt, 4),
                          "MB_per_s": round(mb / dt, 1), **base}), flush=True)
    warm_numba(force=True)  # Numba's set-up, and its kernels compiled or loaded from cache
    dt, (_, x, _) = _best(lambda: parse_libsvm_chunk(buf, args.features), args.repeat)
    rows = x.shape[0]
    print(json.dumps({"bench": "libsvm_parse", "impl": "sparsym.parse_libsvm_chunk",
                      "rows": rows, "nnz": x.nnz, "seconds": round(dt, 4),
                      "MB_per_s": round(mb / dt, 1), **base}), flush=True)
    buf = x = None  # free memory before streaming

    def stream():
        n = 0
        for _, c in LibSVMReader(path, args.features, chunk_bytes=args.chunk_mb << 20):
            n += c.shape[0]
        return n

    dt, n = _best(stream, args.repeat)
    print(json.dumps({"bench": "libsvm_parse", "impl": "sparsym.LibSVMReader",
                      "chunk_MB": args.chunk_mb, "rows": n, "seconds": round(dt, 4),
                      "MB_per_s": round(mb / dt, 1), **base}), flush=True)

    if os.path.exists(args.mxnet_python):
        # MXNet's pip build (no USE_INT64_TENSOR_SIZE) refuses a CSR batch whose dense shape
        # has 2**31 elements or more: shrink the batch for it
        batch = min(args.batch, (2**31 - 2) // args.features)
        try:
            res = subprocess.run(
                [args.mxnet_python, "-c", _MX_SCRIPT, path, str(args.features),
                 str(batch), str(args.repeat)],
                capture_output=True, text=True, timeout=1800, check=True)
            r = json.loads(res.stdout.strip().splitlines()[-1])
            print(json.dumps({"bench": "libsvm_parse", "impl": "mxnet.LibSVMIter",
                              "mxnet": r["version"], "batch": batch, "rows": r["rows"],
                              "seconds": round(r["seconds"], 4),
                              "MB_per_s": round(mb / r["seconds"], 1), **base}), flush=True)
        except (subprocess.SubprocessError, ValueError, KeyError, IndexError) as e:
            err = getattr(e, "stderr", "") or str(e)
            print(json.dumps({"bench": "libsvm_parse", "impl": "mxnet.LibSVMIter",
                              "error": err.strip().splitlines()[-1:] if err else str(e)}))
    else:
        print(json.dumps({"bench": "libsvm_parse", "impl": "mxnet.LibSVMIter",
                          "skipped": f"{args.mxnet_python} not found"}))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
