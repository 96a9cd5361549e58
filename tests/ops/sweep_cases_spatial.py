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


# ----------------------------------------------------------------------------- Correlation
def _corr_ref(a, xs, raws):
    """Correlation point by point: one patch comparison per output entry."""
    x1, x2 = (v.astype(np.float64) for v in xs)
    k, md, s1, s2, p = (a[n] for n in ("kernel_size", "max_displacement", "stride1",
                                       "stride2", "pad_size"))
    mult = a["is_multiply"]
    n, c, h, w = x1.shape
    p1 = np.pad(x1, ((0, 0), (0, 0), (p, p), (p, p)))
    p2 = np.pad(x2, ((0, 0), (0, 0), (p, p), (p, p)))
    border = md + (k - 1) // 2
    th = int(np.ceil((h + 2 * p - 2 * border) / s1))
    tw = int(np.ceil((w + 2 * p - 2 * border) / s1))
    rad = md // s2
    g = 2 * rad + 1
    out = np.zeros((n, g * g, th, tw))
    for i in range(th):
        for j in range(tw):
            y1, x1_ = i * s1 + md, j * s1 + md
            for ch in range(g * g):
                y2 = y1 + (ch // g - rad) * s2
                x2_ = x1_ + (ch % g - rad) * s2
                u = p1[:, :, y1:y1 + k, x1_:x1_ + k]
                v = p2[:, :, y2:y2 + k, x2_:x2_ + k]
                out[:, ch, i, j] = ((u * v) if mult else np.abs(u - v)).sum(axis=(1, 2, 3))
    return out / (k * k * c)


_CORR = [dict(kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=1,
              is_multiply=False),
         dict(kernel_size=1, max_displacement=1, stride1=1, stride2=1, pad_size=1),
         dict(kernel_size=3, max_displacement=1, stride1=1, stride2=1, pad_size=2)]
FORWARD["Correlation"] = lambda op, nin: [Case(p, ((2, 3, 5, 6), (2, 3, 5, 6)), ref=_corr_ref)
                                          for p in _CORR]
# the absolute difference's kink is avoided by well separated inputs (and the zero padding)
GRADIENT["Correlation"] = [
    (_CORR[0], {"data1": _r(2, 2, 5, 6) + 5.0, "data2": _r(2, 2, 5, 6) + 2.0}, None),
    (_CORR[2], {"data1": _r(1, 2, 4, 5), "data2": _r(1, 2, 4, 5)}, None)]


# ----------------------------------------------------------------------------- ROI pooling
def _c_round(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _roipool_ref(a, xs, raws):
    """ROIPooling bin by bin, pixel by pixel."""
    data, rois = xs[0].astype(np.float64), xs[1]
    ph, pw = a["pooled_size"]
    s = a["spatial_scale"]
    n, c, h, w = data.shape
    out = np.zeros((len(rois), c, ph, pw))
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (int(_c_round(v * s)) for v in roi[1:])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph):
            hs = min(max(int(np.floor(i * rh / ph)) + y1, 0), h)
            he = min(max(int(np.ceil((i + 1) * rh / ph)) + y1, 0), h)
            for j in range(pw):
                ws = min(max(int(np.floor(j * rw / pw)) + x1, 0), w)
                we = min(max(int(np.ceil((j + 1) * rw / pw)) + x1, 0), w)
                for ch in range(c):
                    vals = [data[int(roi[0]), ch, y, x] for y in range(hs, he)
                            for x in range(ws, we)]
                    out[r, ch, i, j] = max(vals) if vals else 0.0
    return out


def _psroipool_ref(a, xs, raws):
    """PSROIPooling bin by bin, pixel by pixel."""
    data, rois = xs[0].astype(np.float64), xs[1]
    p, s, od = a["pooled_size"], a["spatial_scale"], a["output_dim"]
    grp = a.get("group_size") or p
    n, c, h, w = data.shape
    out = np.zeros((len(rois), od, p, p))
    for r, roi in enumerate(rois):
        x1, y1 = _c_round(roi[1]) * s, _c_round(roi[2]) * s
        x2, y2 = (_c_round(roi[3]) + 1) * s, (_c_round(roi[4]) + 1) * s
        bh, bw = max(y2 - y1, 0.1) / p, max(x2 - x1, 0.1) / p
        for i in range(p):
            hs = min(max(int(np.floor(i * bh + y1)), 0), h)
            he = min(max(int(np.ceil((i + 1) * bh + y1)), 0), h)
            for j in range(p):
                ws = min(max(int(np.floor(j * bw + x1)), 0), w)
                we = min(max(int(np.ceil((j + 1) * bw + x1)), 0), w)
                if he <= hs or we <= ws:
                    continue
                gi, gj = min(i * grp // p, grp - 1), min(j * grp // p, grp - 1)
                for k in range(od):
                    ch = (k * grp + gi) * grp + gj
                    out[r, k, i, j] = data[int(roi[0]), ch, hs:he, ws:we].mean()
    return out


_ROIS = np.array([[0, 1.1, 1.1, 6.2, 5.2], [1, 6.5, 2.5, 10.4, 7.6], [1, -2, -3, 20, 30],
                  [0, 5, 5, 2, 1], [1, 3, 3, 3, 3]], np.float32)
_RDATA = (2, 8, 7, 11)
FORWARD["ROIPooling"] = lambda op, nin: [
    Case({"pooled_size": ps, "spatial_scale": sc}, (_RDATA, _ROIS.shape), values={1: _ROIS},
         ref=_roipool_ref) for ps, sc in (((3, 2), 1.0), ((2, 2), 0.5))]
FORWARD["_contrib_PSROIPooling"] = lambda op, nin: [
    Case(p, (_RDATA, _ROIS.shape), values={1: _ROIS}, ref=_psroipool_ref)
    for p in ({"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 2},
              {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 3, "group_size": 2})]
# distinct values a step apart keep every bin's maximum clear of a tie under the differences
_DISTINCT = _rng.permutation(2 * 8 * 7 * 11).reshape(_RDATA) * 0.01
GRADIENT["ROIPooling"] = [({"pooled_size": (3, 2), "spatial_scale": 1.0},
                           {"data": _DISTINCT, "rois": _ROIS}, ["data"])]
GRADIENT["_contrib_PSROIPooling"] = [
    ({"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 3, "group_size": 2},
     {"data": _r(*_RDATA), "rois": _ROIS}, ["data"])]


# ----------------------------------------------------------------------------- resizing
def _resize_ref(a, xs, raws):
    """Bilinear resizing point by point (MXNet's source coordinates)."""
    x = xs[0].astype(np.float64)
    n, c, h, w = x.shape
    oh, ow = (xs[1].shape[2:] if a.get("mode") == "like" else
              (a["height"], a["width"]))
    align = a.get("align_corners", True)

    def src(d, n_in, n_out):
        if n_out == 1:
            return 0.0
        if align:
            return d * (n_in - 1) / (n_out - 1)
        return max((d + 0.5) * n_in / n_out - 0.5, 0.0)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        sy = src(i, h, oh)
        y0 = int(sy)
        y1, ly = min(y0 + 1, h - 1), sy - y0
        for j in range(ow):
            sx = src(j, w, ow)
            x0 = int(sx)
            x1, lx = min(x0 + 1, w - 1), sx - x0
            out[:, :, i, j] = ((1 - ly) * ((1 - lx) * x[:, :, y0, x0] + lx * x[:, :, y0, x1])
                               + ly * ((1 - lx) * x[:, :, y1, x0] + lx * x[:, :, y1, x1]))
    return out


_RS = (2, 3, 5, 7)
FORWARD["_contrib_BilinearResize2D"] = lambda op, nin: (
    [Case({"mode": "like"}, (_RS, (1, 1, 3, 11)), ref=_resize_ref)]
    + [Case({"height": h, "width": w, "align_corners": al}, (_RS,), ref=_resize_ref)
       for h, w, al in ((3, 4, True), (9, 2, False), (1, 1, False), (8, 13, False))])
GRADIENT["_contrib_BilinearResize2D"] = [
    ({"height": 7, "width": 3, "align_corners": False}, {"data": _r(1, 2, 4, 5)}, None),
    ({"scale_height": 1.5, "scale_width": 2.0, "mode": "odd_scale"}, {"data": _r(1, 2, 4, 5)},
     None),
    ({"mode": "like"}, {"data": _r(1, 2, 4, 5), "like": _r(1, 1, 6, 3)}, ["data"])]


def _upsample_bilinear_ref(a, xs, raws):
    """Bilinear UpSampling as a scatter of each input pixel through its channel's kernel."""
    x, wt = (v.astype(np.float64) for v in xs)
    s = a["scale"]
    k, p = 2 * s - s % 2, s // 2
    n, c, h, w = x.shape
    full = np.zeros((n, c, (h - 1) * s + k, (w - 1) * s + k))
    for i in range(h):
        for j in range(w):
            full[:, :, i * s:i * s + k, j * s:j * s + k] += \
                x[:, :, i, j][:, :, None, None] * wt[None, :, 0]
    return full[:, :, p:p + h * s, p:p + w * s]


def _upsample_nearest_ref(a, xs, raws):
    """Nearest UpSampling pixel by pixel (concatenated on channels)."""
    n, _, h, w = xs[0].shape
    oh, ow = h * a["scale"], w * a["scale"]
    parts = []
    for x in xs:
        f = oh // x.shape[2]
        out = np.zeros(x.shape[:2] + (oh, ow))
        for i in range(oh):
            for j in range(ow):
                out[:, :, i, j] = x[:, :, i // f, j // f]
        parts.append(out)
    return np.concatenate(parts, axis=1)


FORWARD["UpSampling"] = lambda op, nin: (
    [Case({"scale": s, "sample_type": "bilinear", "num_args": 2, "num_filter": 3},
          ((2, 3, 4, 5), None),
          ref=_upsample_bilinear_ref) for s in (2, 3)]
    + [Case({"scale": 2, "sample_type": "nearest", "num_args": 1}, ((2, 3, 4, 5),),
            ref=_upsample_nearest_ref),
       Case({"scale": 2, "sample_type": "nearest", "num_args": 3},
            ((1, 2, 4, 4), (1, 1, 2, 2), (1, 3, 8, 8)), ref=_upsample_nearest_ref)])
GRADIENT["UpSampling"] = [({"scale": 2, "sample_type": "bilinear", "num_args": 2},
                           {"data": _r(1, 2, 3, 4), "weight": _r(2, 1, 4, 4)}, None)]


# ----------------------------------------------------------------------------- v1 records
def _pool_ref(a, xs, raws):
    """Pooling window by window over any number of spatial dims ('valid'/'full'; avg
    counts the padding, as Pooling_v1 does)."""
    import itertools
    x = xs[0].astype(np.float64)
    nd = x.ndim - 2
    k, s = a["kernel"], a.get("stride") or (1,) * nd
    p = a.get("pad") or (0,) * nd
    full = a.get("pooling_convention") == "full"
    out_sp = [(-(-(x.shape[2 + i] + 2 * p[i] - k[i]) // s[i]) if full else
               (x.shape[2 + i] + 2 * p[i] - k[i]) // s[i]) + 1 for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(out_sp))
    for pos in itertools.product(*(range(o) for o in out_sp)):
        lo = [pos[i] * s[i] - p[i] for i in range(nd)]
        hi_pad = [min(lo[i] + k[i], x.shape[2 + i] + p[i]) for i in range(nd)]
        win = x[(slice(None), slice(None)) + tuple(
            slice(max(lo[i], 0), min(lo[i] + k[i], x.shape[2 + i])) for i in range(nd))]
        t = a.get("pool_type", "max")
        if t == "max":
            v = win.max(axis=tuple(range(2, 2 + nd)))
        else:
            v = win.sum(axis=tuple(range(2, 2 + nd)))
            if t == "avg":
                v = v / np.prod([hi_pad[i] - lo[i] for i in range(nd)])
        out[(slice(None), slice(None)) + pos] = v
    return out


def _conv_ref(a, xs, raws):
    """Convolution as a sum over kernel offsets of shifted slices (stride, pad)."""
    import itertools
    x, w = xs[0].astype(np.float64), xs[1].astype(np.float64)
    nd = x.ndim - 2
    s = a.get("stride") or (1,) * nd
    p = a.get("pad") or (0,) * nd
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((q, q) for q in p))
    k = w.shape[2:]
    osp = [(xp.shape[2 + i] - k[i]) // s[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], w.shape[0]) + tuple(osp))
    for off in itertools.product(*(range(kk) for kk in k)):
        patch = xp[(slice(None), slice(None)) + tuple(
            slice(off[i], off[i] + (osp[i] - 1) * s[i] + 1, s[i]) for i in range(nd))]
        out += np.einsum("nc...,fc->nf...", patch, w[(slice(None), slice(None)) + off])
    if len(xs) > 2:
        out += xs[2].reshape((1, -1) + (1,) * nd)
    return out


def _bn_infer_ref(relu):
    def ref(a, xs, raws):
        x, g, b, mm, mv = (v.astype(np.float64) for v in xs)
        g = np.ones_like(g) if a.get("fix_gamma", True) else g
        bs = (1, -1) + (1,) * (x.ndim - 2)
        y = (x - mm.reshape(bs)) / np.sqrt(mv.reshape(bs) + a.get("eps", 1e-3)) \
            * g.reshape(bs) + b.reshape(bs)
        return np.maximum(y, 0) if relu else y
    return ref


_P3 = (2, 2, 4, 5, 6)
FORWARD["Pooling_v1"] = lambda op, nin: [
    Case({"kernel": (2, 3), "stride": (2, 1), "pad": (1, 1), "pool_type": t,
          "pooling_convention": c}, ((2, 3, 5, 6),), ref=_pool_ref)
    for t, c in (("max", "valid"), ("avg", "full"), ("sum", "valid"))] + [
    Case({"kernel": (2, 3, 2), "stride": (2, 2, 3), "pool_type": t}, (_P3,), ref=_pool_ref)
    for t in ("max", "avg")]
FORWARD["Convolution_v1"] = lambda op, nin: [
    Case({"kernel": (3, 2), "num_filter": 2, "stride": (2, 1), "pad": (1, 0),
          "no_bias": nin == 2}, ((2, 3, 5, 6),) + (None,) * (nin - 1), ref=_conv_ref)]
_BN_SHAPES = ((2, 3, 2, 2), (3,), (3,), (3,), (3,))  # MXNet: 4-D for the ReLU op
FORWARD["BatchNorm_v1"] = lambda op, nin: [
    Case({"fix_gamma": fg}, _BN_SHAPES, full=(4,), positive=True, ref=_bn_infer_ref(False))
    for fg in (True, False)]
FORWARD["_contrib_BatchNormWithReLU"] = lambda op, nin: [
    Case({"fix_gamma": fg}, _BN_SHAPES, full=(4,), positive=True, ref=_bn_infer_ref(True))
    for fg in (True, False)]
_BN_VALUES = {"data": _r(4, 3, 2), "gamma": _r(3) + 1.5, "beta": _r(3),
              "moving_mean": _r(3), "moving_var": _r(3) + 1.5}
GRADIENT["BatchNorm_v1"] = [({"fix_gamma": False}, _BN_VALUES, ["data", "gamma", "beta"])]
# ReLU's kink: the normalised data are kept away from zero by a large beta
GRADIENT["_contrib_BatchNormWithReLU"] = [
    ({"fix_gamma": False}, dict(_BN_VALUES, beta=np.array([3.0, -3.0, 3.0])),
     ["data", "gamma", "beta"])]
_DISTINCT3 = _rng.permutation(int(np.prod(_P3))).reshape(_P3) * 0.01
GRADIENT["Pooling_v1"] = [
    ({"kernel": (2, 3), "stride": (2, 1), "pad": (1, 1), "pool_type": "avg",
      "pooling_convention": "full"}, {"data": _r(2, 3, 5, 6)}, None),
    ({"kernel": (2, 3, 2), "stride": (2, 2, 3), "pool_type": "max"}, {"data": _DISTINCT3},
     None)]
GRADIENT["Convolution_v1"] = [
    ({"kernel": (3, 2), "num_filter": 2, "stride": (2, 1), "pad": (1, 0)},
     {"data": _r(2, 3, 5, 6), "weight": _r(2, 3, 3, 2), "bias": _r(2)}, None)]
GRADIENT["Pooling"] = [
    ({"kernel": (3, 2, 2), "stride": (2, 1, 2), "pad": (1, 0, 1), "pool_type": "avg",
      "count_include_pad": False}, {"data": _r(*_P3)}, None),
    ({"kernel": (2, 2, 3), "pool_type": "lp", "p_value": 2}, {"data": _r(*_P3)}, None),
    ({"kernel": (5,), "stride": (3,), "pool_type": "avg", "pooling_convention": "same"},
     {"data": _r(2, 3, 10)}, None)]


# ----------------------------------------------------------------------------- Crop
def _crop_ref(a, xs, raws):
    """Crop entry by entry."""
    x = xs[0]
    h, w = xs[1].shape[2:] if len(xs) == 2 else a["h_w"]
    H, W = x.shape[2:]
    top, left = ((H - h) // 2, (W - w) // 2) if a.get("center_crop") else a.get("offset",
                                                                                 (0, 0))
    out = np.zeros(x.shape[:2] + (h, w))
    for i in range(h):
        for j in range(w):
            out[:, :, i, j] = x[:, :, top + i, left + j]
    return out


FORWARD["Crop"] = lambda op, nin: [
    Case({"num_args": 1, "h_w": (3, 4), "offset": (2, 1)}, ((2, 3, 6, 7),), ref=_crop_ref),
    Case({"num_args": 1, "h_w": (3, 4), "center_crop": True}, ((2, 3, 6, 7),), ref=_crop_ref),
    Case({"num_args": 2, "center_crop": True}, ((2, 3, 6, 7), (1, 1, 2, 5)), ref=_crop_ref),
    Case({"num_args": 2, "offset": (3, 1)}, ((2, 3, 6, 7), (1, 1, 2, 5)), ref=_crop_ref)]
GRADIENT["Crop"] = [({"num_args": 1, "h_w": (3, 4), "offset": (2, 1)},
                     {"arg0": _r(2, 3, 6, 7)}, None),
                    ({"num_args": 2, "center_crop": True},
                     {"arg0": _r(1, 2, 6, 7), "arg1": _r(1, 1, 2, 5)}, ["arg0"])]


# ----------------------------------------------------------------------------- deformable
_DROIS = np.array([[0, 1.2, 2.1, 10.3, 12.4], [1, 0, 0, 15, 15], [1, -3, 4, 4, 30],
                   [0, 6, 6, 5, 5]], np.float32)
_DPS_P = {"spatial_scale": 0.5, "output_dim": 2, "group_size": 3, "pooled_size": 3,
          "part_size": 2, "sample_per_part": 2, "trans_std": 0.1}
# MXNet 1.9.1's values (sweep_ops.npz) are the reference of the forward
FORWARD["_contrib_DeformablePSROIPooling"] = lambda op, nin: [
    Case(_DPS_P, ((2, 18, 8, 9), (4, 5), (4, 4, 2, 2)), values={1: _DROIS}),
    Case(dict(_DPS_P, no_trans=True, sample_per_part=3), ((2, 18, 8, 9), (4, 5)),
         values={1: _DROIS})]
# ROIs inside the map, offsets off the pixel grid: the samples' slopes are defined
_DROIS_IN = np.array([[0, 2.0, 3.0, 11.0, 12.0], [1, 4.0, 2.0, 13.0, 9.0]])
GRADIENT["_contrib_DeformablePSROIPooling"] = [
    (_DPS_P, {"data": _r(2, 18, 8, 9), "rois": _DROIS_IN, "trans": _r(2, 4, 2, 2) * 0.3},
     ["data", "trans"])]
