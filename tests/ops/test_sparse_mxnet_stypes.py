"""Storage types and dispatch modes against MXNet 1.9.1, case by case.

tests/ops/mxnet_stypes.json was recorded by tests/ops/probe_mxnet_stypes.py with the MXNet
oracle: for each (op, params, input stypes) the output stypes and dispatch mode of the
imperative call, and for differentiable cases the gradient stypes of ``simple_bind``.

- Where MXNet runs a sparse or dense kernel, sparsym picks a row (no fallback) with the
  same output stypes.
- Where MXNet falls back, sparsym gives the same output stypes (a direct kernel or its
  own fallback).
- Where MXNet raises "Operator not implemented", sparsym computes an answer; each such
  place is listed in docs/sparse.md (checked here).
- Gradient stypes equal MXNet's.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx
from sparsym.ops.core.registry import get_op, has_op, resolve_dispatch

HERE = Path(__file__).resolve().parent
TABLE = json.loads((HERE / "mxnet_stypes.json").read_text())["cases"]
DOC = HERE.parents[1] / "docs" / "sparse.md"


def _key(c):
    p = ",".join(f"{k}={v}" for k, v in sorted(c["params"].items()))
    return f"{c['op']}({p})[{','.join(s[0].upper() for s in c['in'])}]"


FWD = [c for c in TABLE if has_op(c["op"]) and "error" not in c["fwd"]]
NI = [c for c in TABLE if has_op(c["op"]) and "not implemented" in
      c["fwd"].get("error", "").lower()]
BWD = [c for c in TABLE if has_op(c["op"]) and "bwd" in c and "grads" in c["bwd"]]


def _attrs(c):
    op = get_op(c["op"])
    params = dict(c["params"])
    if op.key_var_num_args:
        params[op.key_var_num_args] = len(c["in"])
    return op, op.params.parse(c["op"], params)


@pytest.mark.parametrize("case", FWD, ids=[_key(c) for c in FWD])
def test_forward_stypes_and_modes_match_mxnet(case):
    op, attrs = _attrs(case)
    row, outs, mode = resolve_dispatch(op, attrs, tuple(case["in"]))
    want = case["fwd"]
    assert list(outs) == want["out"], f"{_key(case)}: ours {outs}, MXNet {want['out']}"
    if want["mode"] in ("sparse", "dense"):
        assert mode == want["mode"], f"{_key(case)}: ours {mode}, MXNet {want['mode']}"


@pytest.mark.parametrize("case", NI, ids=[_key(c) for c in NI])
def test_mxnet_not_implemented_cases_compute_here(case):
    op, attrs = _attrs(case)
    row, outs, mode = resolve_dispatch(op, attrs, tuple(case["in"]))
    assert mode != "fallback", f"{_key(case)}: MXNet raises NI; we should have a kernel"
    nd_in = []
    rng = np.random.default_rng(0)
    for k, (shape, stype) in enumerate(zip(case["shapes"], case["in"])):
        if case["op"] == "_sparse_retain" and k == 1:
            nd_in.append(mx.nd.array([0, 2], dtype="int64"))
            continue
        x = rng.uniform(0.5, 1.5, size=shape) * (rng.random(shape) < 0.5)
        nd_in.append(mx.nd.array(x.astype(np.float32)).tostype(stype))
    fn = getattr(mx.nd, case["op"])
    res = fn(*nd_in, **case["params"])
    assert res.stype == outs[0]
    assert case["op"] in DOC.read_text(), f"docs/sparse.md does not list {case['op']}"


def _sym_fn(name):
    return getattr(mx.sym, name)


@pytest.mark.parametrize("case", BWD, ids=[_key(c) for c in BWD])
def test_gradient_stypes_match_mxnet(case):
    names = [f"x{i}" for i in range(len(case["shapes"]))]
    vs = [mx.sym.Variable(n, stype=s) for n, s in zip(names, case["in"])]
    out = _sym_fn(case["op"])(*vs, **case["params"])
    want = case["bwd"]["grads"]
    req = {n: ("write" if g is not None else "null") for n, g in zip(names, want)}
    exe = out.simple_bind(mx.cpu(), grad_req=req, stype_dict=dict(zip(names, case["in"])),
                          **{n: tuple(s) for n, s in zip(names, case["shapes"])})
    got = [exe.grad_dict[n].stype if n in exe.grad_dict else None for n in names]
    assert got == want, f"{_key(case)}: ours {got}, MXNet {want}"
