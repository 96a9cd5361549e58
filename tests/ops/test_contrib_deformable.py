"""Deformable convolutions (DCN v1 and the modulated v2) against MXNet 1.9.1's values
(tests/fixtures/mxnet/deformable_conv.npz, made by make_mxnet_deformable_fixtures.py), and
v2's gradients numerically (MXNet's CPU build has no v2 backward)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "deformable_conv.npz"
REC = np.load(FIXTURE)
META = json.loads(str(REC["meta"]))


def _params(p):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in p.items()}


@pytest.mark.parametrize("i", range(len(META)))
def test_matches_mxnet(i):
    m = META[i]
    vals = [REC[f"{i}/in{j}"] for j in range(m["n_in"])]
    arrs = [mx.nd.array(v, dtype=np.float64) for v in vals]
    fn = mx.nd.contrib.ModulatedDeformableConvolution if m["modulated"] else \
        mx.nd.contrib.DeformableConvolution
    for a in arrs:
        a.attach_grad()
    with mx.autograd.record():
        y = fn(*arrs, **_params(m["params"]))
    np.testing.assert_allclose(y.asnumpy(), REC[f"{i}/out"], rtol=1e-10, atol=1e-12)
    if f"{i}/ograd" in REC.files:
        y.backward(mx.nd.array(REC[f"{i}/ograd"], dtype=np.float64))
        for j, a in enumerate(arrs):
            np.testing.assert_allclose(a.grad.asnumpy(), REC[f"{i}/grad{j}"], rtol=1e-9,
                                       atol=1e-12, err_msg=f"input {j}")


def test_modulated_numeric_gradient():
    rng = np.random.RandomState(1)
    names = ("data", "offset", "mask", "weight", "bias")
    sym = mx.sym.contrib.ModulatedDeformableConvolution(
        *[mx.sym.var(n) for n in names], kernel=(2, 2), pad=(1, 1), num_filter=2,
        num_deformable_group=2)
    # offsets away from integers: the bilinear sample is not differentiable at grid lines
    off = rng.uniform(0.1, 0.4, (1, 16, 4, 4)) * rng.choice([-1, 1], (1, 16, 4, 4))
    values = {"data": rng.rand(1, 2, 3, 3), "offset": off, "mask": rng.rand(1, 8, 4, 4),
              "weight": rng.randn(2, 2, 2, 2), "bias": rng.randn(2)}
    check_numeric_gradient(sym, values, numeric_eps=1e-6, rtol=1e-5, atol=1e-7,
                           dtype=np.float64)


def test_shapes_and_errors():
    sym = mx.sym.contrib.ModulatedDeformableConvolution(
        *[mx.sym.var(n) for n in ("d", "o", "m", "w")], kernel=(3, 3), num_filter=4,
        no_bias=True, num_deformable_group=2)
    args, outs, _ = sym.infer_shape(d=(2, 4, 7, 6))
    assert args == [(2, 4, 7, 6), (2, 36, 5, 4), (2, 18, 5, 4), (4, 4, 3, 3)]
    assert outs == [(2, 4, 5, 4)]
    with pytest.raises(mx.MXNetError, match="2-D"):
        mx.sym.contrib.DeformableConvolution(mx.sym.var("d"), mx.sym.var("o"), mx.sym.var("w"),
                                             kernel=(3, 3, 3), num_filter=2)
