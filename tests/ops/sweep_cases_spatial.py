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


# ----------------------------------------------------------------------------- spatial
def _sample_loop(data, grid):
    """Bilinear sampling with zero padding, one output point at a time."""
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for i in range(n):
        for p in range(grid.shape[2]):
            for q in range(grid.shape[3]):
                x = (grid[i, 0, p, q] + 1) * (w - 1) / 2
                y = (grid[i, 1, p, q] + 1) * (h - 1) / 2
                x0, y0 = int(np.floor(x)), int(np.floor(y))
                for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
                    if 0 <= yy < h and 0 <= xx < w:
                        wt = (1 - abs(x - xx)) * (1 - abs(y - yy))
                        out[i, :, p, q] += wt * data[i, :, yy, xx]
    return out


def _affine_loop(theta, h, w):
    out = np.zeros((theta.shape[0], 2, h, w))
    for i in range(theta.shape[0]):
        t = theta[i].reshape(2, 3)
        for p in range(h):
            for q in range(w):
                src = t @ np.array([-1 + 2 * q / (w - 1), -1 + 2 * p / (h - 1), 1.0])
                out[i, :, p, q] = src
    return out


def _gg_ref(a, xs, raws):
    x = xs[0].astype(np.float64)
    if a["transform_type"] == "affine":
        return _affine_loop(x, *a["target_shape"])
    _, _, h, w = x.shape
    px, py = np.meshgrid(np.arange(w), np.arange(h))
    return np.stack([(x[:, 0] + px) * 2 / (w - 1) - 1, (x[:, 1] + py) * 2 / (h - 1) - 1], 1)


_GRID = _rng.uniform(-1.2, 1.2, (2, 2, 3, 4)).astype(np.float32)
_THETA = _rng.uniform(-1, 1, (2, 6)).astype(np.float32)
FORWARD["GridGenerator"] = lambda op, nin: [
    Case({"transform_type": "affine", "target_shape": (3, 4)}, ((2, 6),), ref=_gg_ref),
    Case({"transform_type": "warp"}, ((2, 2, 3, 4),), ref=_gg_ref)]
FORWARD["BilinearSampler"] = lambda op, nin: [
    Case({}, ((2, 3, 4, 5), (2, 2, 3, 4)), values={1: _GRID},
         ref=lambda a, xs, raws: _sample_loop(xs[0].astype(np.float64), xs[1]))]
FORWARD["SpatialTransformer"] = lambda op, nin: [
    Case({"target_shape": (3, 4), "transform_type": "affine", "sampler_type": "bilinear"},
         ((2, 3, 4, 5), (2, 6)), values={1: _THETA},
         ref=lambda a, xs, raws: _sample_loop(xs[0].astype(np.float64),
                                              _affine_loop(xs[1], 3, 4)))]
GRADIENT["GridGenerator"] = [
    ({"transform_type": "affine", "target_shape": (3, 4)}, {"data": _r(2, 6)}, None),
    ({"transform_type": "warp"}, {"data": _r(2, 2, 3, 4)}, None)]
GRADIENT["BilinearSampler"] = [({}, {"data": _r(2, 3, 4, 5), "grid": _GRID}, None)]
GRADIENT["SpatialTransformer"] = [
    ({"target_shape": (3, 4), "transform_type": "affine", "sampler_type": "bilinear"},
     {"data": _r(2, 3, 4, 5), "loc": _THETA}, None)]


# ----------------------------------------------------------------------------- CTC
def _ctc_brute(a, xs, raws):
    """CTC loss by enumerating every path of the (short) sequences."""
    import itertools
    data, label = xs[0].astype(np.float64), xs[1].astype(np.int64)
    T, N, K = data.shape
    blank = 0 if a.get("blank_label", "first") == "first" else K - 1
    pad = 0 if blank == 0 else -1
    p = np.exp(data - data.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    tlen = xs[2].astype(int) if a.get("use_data_lengths") else [T] * N
    llen = xs[-1].astype(int) if a.get("use_label_lengths") else None
    out = np.zeros(N)
    for n in range(N):
        want = ([int(c) for c in label[n] if c != pad] if llen is None
                else [int(c) for c in label[n, :llen[n]]])
        total = 0.0
        for path in itertools.product(range(K), repeat=int(tlen[n])):
            col = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
            if col == want:
                total += np.prod([p[t, n, c] for t, c in enumerate(path)])
        out[n] = -np.log(total)
    return out


_CTC_LAB = np.array([[1, 2, 0], [3, 3, 0]], np.float32)
_CTC_LAB_LAST = np.array([[0, 1, -1], [2, -1, -1]], np.float32)
_LENS = {2: {}, 3: {"use_data_lengths": True}, 4: {"use_data_lengths": True,
                                                   "use_label_lengths": True}}
FORWARD["CTCLoss"] = lambda op, nin: [
    Case(dict(_LENS[nin]), ((5, 2, 4), (2, 3)) + ((2,),) * (nin - 2),
         values={1: _CTC_LAB, 2: np.array([5, 3], np.float32), 3: np.array([2, 1], np.float32)},
         ref=_ctc_brute),
    Case(dict(_LENS[nin], blank_label="last"), ((4, 2, 4), (2, 3)) + ((2,),) * (nin - 2),
         values={1: _CTC_LAB_LAST, 2: np.array([4, 2], np.float32),
                 3: np.array([2, 1], np.float32)}, ref=_ctc_brute)]
GRADIENT["CTCLoss"] = [({}, {"data": _r(5, 2, 4), "label": _CTC_LAB}, ["data"]),
                       ({"blank_label": "last"}, {"data": _r(4, 2, 4), "label": _CTC_LAB_LAST},
                        ["data"])]
