"""Record tests/fixtures/mxnet/sweep_ops.npz: every forward operator of the sweep run by
MXNet 1.9.1 on dense inputs, so the sweep compares each op's dense row with values it did
not compute itself::

    python tests/ops/make_mxnet_sweep_fixtures.py [--mxnet ~/mxref/bin/python]

The inputs are built here with the sweep's own builders (tests/ops/sweep_cases.py), written
to a temporary .npz and run by an MXNet child process (MXNet is never imported here). An
op MXNet rejects is left out and reported; test_op_sweep.py says why for each such op.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
OUT = os.path.join(os.path.dirname(HERE), "fixtures", "mxnet", "sweep_ops.npz")

CHILD = r"""
import json, sys
import numpy as np
import mxnet as mx
src, out = sys.argv[1], sys.argv[2]
# ops MXNet has under another name, or runs on sparse inputs only
NAMES = {"_sparse_retain": mx.nd.sparse.retain,
         "_sparse_adagrad_update": mx.nd.sparse.adagrad_update}
STYPES = {"_square_sum": ["row_sparse"],
          "_sparse_retain": ["row_sparse"], "_sparse_adagrad_update": [None, "row_sparse"]}
INPLACE = {"_sparse_adagrad_update"}  # MXNet: "kWriteInplace is expected"
data = np.load(src)
meta = json.loads(str(data["meta"]))
res, errors = {}, {}
for key, m in meta.items():
    name = m["name"]
    if name in NAMES:
        fn = NAMES[name]
    elif name.startswith("_linalg_"):
        fn = getattr(mx.nd.linalg, name[len("_linalg_"):], None)
    elif name.startswith("_contrib_"):
        fn = getattr(mx.nd.contrib, name[len("_contrib_"):], None)
    elif name.startswith("_"):
        fn = getattr(mx.nd._internal, name, None)
    else:
        fn = getattr(mx.nd, name, None)
    if fn is None:
        errors[key] = "not an MXNet operator"
        continue
    ins = [mx.nd.array(data[f"{key}/in{i}"], dtype=data[f"{key}/in{i}"].dtype)
           for i in range(m["n_in"])]
    for i, stype in enumerate(STYPES.get(name, ())):
        if stype:
            ins[i] = ins[i].tostype(stype)
    try:
        if name in INPLACE:
            r = fn(*ins, out=ins[0], **m["params"])
        else:
            r = fn(*ins, **m["params"])
        r = r if isinstance(r, (list, tuple)) else [r]
        for i, o in enumerate(r):
            res[f"{key}/out{i}"] = o.tostype("default").asnumpy()
        for i in m["mutates"]:
            res[f"{key}/mut{i}"] = ins[i].tostype("default").asnumpy()
    except Exception as err:  # recorded as "MXNet rejects"
        lines = [x for x in str(err).splitlines() if "Error" in x or "Check failed" in x]
        errors[key] = (lines[-1] if lines else type(err).__name__)[:200]
np.savez_compressed(out, errors=json.dumps(errors), **res)
"""


# random draws, and counts of stored entries (every entry of a dense input): no record
SKIP = ("_random_", "_sample_", "_shuffle", "Dropout", "_contrib_getnnz")


def forward_ops():
    """Forward ops to record: not random, and not listed as having no MXNet record (their
    inputs, like control flow's subgraphs, may not even pass to MXNet)."""
    from test_op_sweep import NO_MXNET_REFERENCE, _unique_ops
    return [op for op in _unique_ops()
            if op.name not in NO_MXNET_REFERENCE and (
                not op.name.startswith(("_backward", "_contrib_backward") + SKIP)
                or op.name.startswith("_random_pdf_"))]


def build_inputs():
    """(meta per case key, arrays): dense inputs of every sweep case of every forward op."""
    from sweep_cases import forward_cases
    from test_op_sweep import _build, _infer
    meta, arrays = {}, {}
    for op in forward_ops():
        n = 0
        for nin, case, attrs in forward_cases(op):
            done = _infer(op, attrs, case.shapes)
            if done is None:
                continue
            case.shapes = done[0]
            raws = _build(op, case, ("default",) * nin, "random", seed=n)
            key = f"{op.name}#{n}"
            meta[key] = {"name": op.name, "params": case.params, "n_in": nin,
                         "mutates": list(op.mutates)}
            for i, r in enumerate(raws):
                arrays[f"{key}/in{i}"] = np.asarray(r)
            n += 1
    return meta, arrays


def _jsonable(v):
    if isinstance(v, tuple):
        return list(v)
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mxnet", default=os.path.expanduser("~/mxref/bin/python"))
    args = ap.parse_args()
    meta, arrays = build_inputs()
    for m in meta.values():
        m["params"] = {k: _jsonable(v) for k, v in m["params"].items()}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(src, meta=json.dumps(meta), **arrays)
        subprocess.run([args.mxnet, "-c", CHILD, src, dst], check=True)
        got = np.load(dst)
        errors = json.loads(str(got["errors"]))
        outs = {k: got[k] for k in got.files if k != "errors"}
    kept = {k: m for k, m in meta.items() if k not in errors}
    keep_arrays = {k: v for k, v in arrays.items() if k.split("/")[0] in kept}
    np.savez_compressed(OUT, meta=json.dumps(kept), rejected=json.dumps(errors),
                        **keep_arrays, **outs)
    names = sorted({m["name"] for m in kept.values()})
    print(f"wrote {OUT}: {len(kept)} cases of {len(names)} operators")
    for k, e in sorted(errors.items()):
        print(f"  MXNet rejects {k}: {e}")


if __name__ == "__main__":
    main()
