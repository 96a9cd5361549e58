"""The interleaved multi-head attention products through mx.nd.contrib / mx.sym.contrib."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx


def _attention_by_hand(x, heads):
    """Self-attention of an interleaved (seq, batch, heads*3*hd) projection, head by head."""
    s, b, e = x.shape
    hd = e // (3 * heads)
    out = np.zeros((s, b, heads * hd))
    scores = np.zeros((b * heads, s, s))
    for n in range(b):
        for h in range(heads):
            blk = x[:, n, h * 3 * hd:(h + 1) * 3 * hd]
            q, k, v = blk[:, :hd], blk[:, hd:2 * hd], blk[:, 2 * hd:]
            sc = q @ k.T / np.sqrt(hd)
            scores[n * heads + h] = sc
            out[:, n, h * hd:(h + 1) * hd] = sc @ v
    return scores, out


def test_selfatt_matches_per_head_loops_and_backpropagates():
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (5, 2, 18))
    want_sc, want_out = _attention_by_hand(x, 3)
    xa = mx.nd.array(x, dtype="float64")
    xa.attach_grad()
    with mx.autograd.record():
        sc = mx.nd.contrib.interleaved_matmul_selfatt_qk(xa, heads=3)
        out = mx.nd.contrib.interleaved_matmul_selfatt_valatt(xa, sc, heads=3)
    np.testing.assert_allclose(sc.asnumpy(), want_sc, rtol=1e-10)
    np.testing.assert_allclose(out.asnumpy(), want_out, rtol=1e-10)
    out.backward(mx.nd.ones(out.shape, dtype="float64"))
    # d sum(out) / dx by central differences on a few entries
    for idx in [(0, 0, 0), (2, 1, 7), (4, 0, 17), (3, 1, 12)]:
        e = np.zeros_like(x)
        e[idx] = 1e-6
        num = (_attention_by_hand(x + e, 3)[1].sum()
               - _attention_by_hand(x - e, 3)[1].sum()) / 2e-6
        assert xa.grad.asnumpy()[idx] == pytest.approx(num, rel=1e-5, abs=1e-8)


def test_encdec_shapes_inferred_from_symbols():
    q, kv = mx.sym.var("q"), mx.sym.var("kv")
    sc = mx.sym.contrib.interleaved_matmul_encdec_qk(q, kv, heads=2)
    out = mx.sym.contrib.interleaved_matmul_encdec_valatt(kv, mx.sym.softmax(sc), heads=2)
    _, (shape,), _ = out.infer_shape(q=(3, 4, 8), kv=(6, 4, 16))
    assert shape == (3, 4, 8)
    assert sc.infer_shape(q=(3, 4, 8), kv=(6, 4, 16))[1] == [(8, 3, 6)]


def test_interleaved_input_must_divide_into_heads():
    with pytest.raises(mx.base.ShapeError, match="multiple of heads"):
        mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.ones((2, 1, 10)), heads=2)
