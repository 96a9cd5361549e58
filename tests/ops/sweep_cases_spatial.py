"""Sweep builders for the spatial, attention and sequence-loss ops of issue 17 (opsnn).

Entries go into sweep_cases_nn's ``FORWARD`` (cases with an independent NumPy reference)
and ``GRADIENT`` (float64 numeric gradient checks) tables; sweep_cases imports this module
before merging them.
"""
from __future__ import annotations

import numpy as np
from sweep_cases import Case
from sweep_cases_nn import FORWARD, GRADIENT

_rng = np.random.RandomState(17)


def _r(*shape):
    return _rng.uniform(-1, 1, shape)


# ----------------------------------------------------------------------------- attention
def _heads(x, heads, parts):
    """(seq, batch, heads*parts*hd) -> parts x (batch, heads, seq, hd), by explicit loops."""
    s, b, e = x.shape
    hd = e // (heads * parts)
    out = np.zeros((parts, b, heads, s, hd))
    for j in range(parts):
        for h in range(heads):
            lo = (h * parts + j) * hd
            out[j, :, h] = x[:, :, lo:lo + hd].transpose(1, 0, 2)
    return out


def _scores(q, k):
    hd = q.shape[-1]
    b, h = q.shape[:2]
    return np.einsum("bhqd,bhkd->bhqk", q / np.sqrt(hd), k).reshape(b * h, q.shape[2], -1)


def _weighted(att, v):
    b, h, s, hd = v.shape
    y = np.einsum("bhqk,bhkd->bhqd", att.reshape(b, h, -1, s), v)
    return y.transpose(2, 0, 1, 3).reshape(y.shape[2], b, h * hd)


def _selfatt_qk_ref(a, xs, raws):
    q, k, _ = _heads(xs[0].astype(np.float64), a["heads"], 3)
    return _scores(q, k)


def _selfatt_valatt_ref(a, xs, raws):
    v = _heads(xs[0].astype(np.float64), a["heads"], 3)[2]
    return _weighted(xs[1].astype(np.float64), v)


def _encdec_qk_ref(a, xs, raws):
    (q,) = _heads(xs[0].astype(np.float64), a["heads"], 1)
    k, _ = _heads(xs[1].astype(np.float64), a["heads"], 2)
    return _scores(q, k)


def _encdec_valatt_ref(a, xs, raws):
    v = _heads(xs[0].astype(np.float64), a["heads"], 2)[1]
    return _weighted(xs[1].astype(np.float64), v)


_ATT = {  # name: (input shapes, reference), heads = 2, head_dim = 3, batch 2
    "selfatt_qk": (((4, 2, 18),), _selfatt_qk_ref),
    "selfatt_valatt": (((4, 2, 18), (4, 4, 4)), _selfatt_valatt_ref),
    "encdec_qk": (((3, 2, 6), (4, 2, 12)), _encdec_qk_ref),
    "encdec_valatt": (((4, 2, 12), (4, 3, 4)), _encdec_valatt_ref),
}
_ATT_NAMES = {"selfatt_qk": ("queries_keys_values",),
              "selfatt_valatt": ("queries_keys_values", "attention"),
              "encdec_qk": ("queries", "keys_values"),
              "encdec_valatt": ("keys_values", "attention")}
for _k, (_shapes, _ref) in _ATT.items():
    FORWARD[f"_contrib_interleaved_matmul_{_k}"] = (
        lambda shapes, ref: lambda op, nin: [Case({"heads": 2}, shapes, ref=ref)])(_shapes, _ref)
    GRADIENT[f"_contrib_interleaved_matmul_{_k}"] = [
        ({"heads": 2}, {n: _r(*s) for n, s in zip(_ATT_NAMES[_k], _shapes)}, None)]
