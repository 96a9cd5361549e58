"""Sweep builders for the dense nn / linalg / random / optimizer families added for issue 17.

``FORWARD``: op name -> candidate Cases whose ``ref`` is an independent NumPy/SciPy
reference (merged into sweep_cases.OVERRIDES, so the registry sweep checks the op's dense
row against it). ``GRADIENT``: op name -> [(params, {input: value}, grad_nodes)], checked
numerically in float64 by tests/ops/test_op_grad_sweep.py.
"""
from __future__ import annotations

import numpy as np
from sweep_cases import Case

FORWARD: dict = {}
GRADIENT: dict = {}
_rng = np.random.RandomState(3)


def _r(*shape):
    return _rng.uniform(-1, 1, shape)


def _p(*shape):
    return _rng.uniform(0.2, 0.9, shape)


# ----------------------------------------------------------------------------- normalisation
def _affine_ref(x, red, gamma, beta, eps, pax):
    mean = x.mean(axis=red, keepdims=True)
    var = x.var(axis=red, keepdims=True)
    bs = [1] * x.ndim
    bs[pax] = -1
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(bs) + beta.reshape(bs)


def _ln_ref(a, xs, raws):
    x, g, b = (v.astype(np.float64) for v in xs)
    ax = a["axis"] % x.ndim
    return _affine_ref(x, (ax,), g, b, a["eps"], ax)


def _in_ref(a, xs, raws):
    x, g, b = (v.astype(np.float64) for v in xs)
    return _affine_ref(x, tuple(range(2, x.ndim)), g, b, a["eps"], 1)


def _gn_ref(a, xs, raws):
    x, g, b = (v.astype(np.float64) for v in xs)
    ng = a["num_groups"]
    v = x.reshape((x.shape[0], ng, -1))
    return _affine_ref(v, (2,), g, b, a["eps"], 1).reshape(x.shape)


def _l2_ref(a, xs, raws):
    x = xs[0].astype(np.float64)
    red = {"instance": tuple(range(1, x.ndim)), "channel": (1,),
           "spatial": tuple(range(2, x.ndim))}[a["mode"]]
    return x / np.sqrt((x ** 2).sum(axis=red, keepdims=True) + a["eps"])


def _lrn_ref(a, xs, raws):
    x = xs[0].astype(np.float64)
    n, h = a["nsize"], (a["nsize"] - 1) // 2
    sq = np.pad(x ** 2, ((0, 0), (h, h), (0, 0), (0, 0)))
    s = sum(sq[:, i:i + x.shape[1]] for i in range(2 * h + 1))
    return x * (a["knorm"] + a["alpha"] / n * s) ** -a["beta"]


FORWARD["LayerNorm"] = lambda op, nin: [Case({"axis": ax, "eps": 1e-3}, ((3, 4, 5), None, None),
                                             ref=_ln_ref) for ax in (-1, 1, 0)]
FORWARD["InstanceNorm"] = lambda op, nin: [Case({}, ((2, 3, 4, 2), None, None), ref=_in_ref)]
FORWARD["GroupNorm"] = lambda op, nin: [Case({"num_groups": 2}, ((2, 4, 3), None, None),
                                             ref=_gn_ref)]
FORWARD["L2Normalization"] = lambda op, nin: [Case({"mode": m}, ((2, 3, 4),), ref=_l2_ref)
                                              for m in ("instance", "channel", "spatial")]
FORWARD["LRN"] = lambda op, nin: [Case({"nsize": n, "alpha": 0.3}, ((2, 5, 3, 2),), ref=_lrn_ref)
                                  for n in (3, 5)]

GRADIENT["LayerNorm"] = [({"axis": ax}, {"data": _r(2, 3, 4), "gamma": _r(3 if ax == 1 else 4),
                                         "beta": _r(3 if ax == 1 else 4)}, None)
                         for ax in (1, -1)]
GRADIENT["InstanceNorm"] = [({}, {"data": _r(2, 3, 4), "gamma": _r(3), "beta": _r(3)}, None)]
GRADIENT["GroupNorm"] = [({"num_groups": 2}, {"data": _r(2, 4, 3), "gamma": _r(2),
                                              "beta": _r(2)}, None)]
GRADIENT["L2Normalization"] = [({"mode": m}, {"data": _r(2, 3, 4)}, None)
                               for m in ("instance", "channel", "spatial")]
GRADIENT["LRN"] = [({"nsize": n, "alpha": 0.5}, {"data": _r(2, 5, 2, 2)}, None) for n in (3, 4)]


# ----------------------------------------------------------------------------- heads
def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _sa_ref(a, xs, raws):
    x = xs[0].astype(np.float64)
    # instance mode: the last axis, as MXNet 1.9.1 computes it (probed on a (2, 3, 4) input)
    return _softmax(x, 1 if a["mode"] == "channel" else -1)


def _sce_ref(a, xs, raws):
    x, lab = xs[0].astype(np.float64), xs[1].astype(np.int64)
    return np.array([-np.log(_softmax(x, 1)[np.arange(len(lab)), lab]).sum()])


_LAB = np.array([0, 3, 1, 5], np.float32)
FORWARD["SoftmaxActivation"] = lambda op, nin: [Case({"mode": m}, ((2, 3, 4),), ref=_sa_ref)
                                                for m in ("instance", "channel")]
FORWARD["softmax_cross_entropy"] = lambda op, nin: [Case({}, ((4, 6), (4,)), values={1: _LAB},
                                                         ref=_sce_ref)]
FORWARD["SVMOutput"] = lambda op, nin: [Case({}, ((4, 6), (4,)), values={1: _LAB},
                                             ref=lambda a, xs, raws: xs[0])]
GRADIENT["SoftmaxActivation"] = [({"mode": m}, {"data": _r(2, 3, 4)}, None)
                                 for m in ("instance", "channel")]
GRADIENT["softmax_cross_entropy"] = [({}, {"data": _r(4, 6), "label": _LAB}, ["data"])]


# ----------------------------------------------------------------------------- linalg
def _spd(n, batch=()):
    b = _rng.uniform(-1, 1, batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def _T(x):
    return np.swapaxes(x, -1, -2)


def _gemm_ref(a, xs, raws):
    A, B = (x.astype(np.float64) for x in xs[:2])
    A = _T(A) if a["transpose_a"] else A
    B = _T(B) if a["transpose_b"] else B
    out = a["alpha"] * np.einsum("...ij,...jk->...ik", A, B)
    return out + a["beta"] * xs[2] if len(xs) > 2 else out


def _gemm_cases(op, nin):
    out = []
    for ta in (False, True):
        for tb in (False, True):
            sa = (2, 4, 3) if ta else (2, 3, 4)
            sb = (2, 5, 4) if tb else (2, 4, 5)
            p = {"transpose_a": ta, "transpose_b": tb, "alpha": 0.5}
            if nin == 3:
                p["beta"] = 2.0
            out.append(Case(p, (sa, sb, (2, 3, 5))[:nin], ref=_gemm_ref))
    return out


def _tri_ref(kind):
    def ref(a, xs, raws):
        A, B = (x.astype(np.float64) for x in xs)
        M = np.tril(A) if a["lower"] else np.triu(A)
        M = _T(M) if a["transpose"] else M
        if kind == "trsm":
            M = np.linalg.inv(M)
        return a["alpha"] * (B @ M if a["rightside"] else M @ B)
    return ref


def _tri_cases(kind):
    def cases(op, nin):
        return [Case({"transpose": tr, "rightside": rs, "lower": lo, "alpha": 0.5},
                     ((3, 3), (2, 3) if rs else (3, 2)), values={0: _spd(3)},
                     ref=_tri_ref(kind))
                for tr in (False, True) for rs in (False, True) for lo in (False, True)]
    return cases


def _one(fn):
    return lambda a, xs, raws: fn(a, xs[0].astype(np.float64))


_SPD = _spd(3, (2,))
_LOW = np.linalg.cholesky(_SPD)
FORWARD["_linalg_gemm"] = _gemm_cases
FORWARD["_linalg_gemm2"] = _gemm_cases
FORWARD["_linalg_trsm"] = _tri_cases("trsm")
FORWARD["_linalg_trmm"] = _tri_cases("trmm")
FORWARD["_linalg_potrf"] = lambda op, nin: [
    Case({"lower": lo}, ((2, 3, 3),), values={0: _SPD}, ref=_one(
        lambda a, x: np.linalg.cholesky(x) if a["lower"] else
        np.swapaxes(np.linalg.cholesky(x), -1, -2))) for lo in (True, False)]
FORWARD["_linalg_potri"] = lambda op, nin: [
    Case({"lower": lo}, ((2, 3, 3),), values={0: _LOW if lo else np.swapaxes(_LOW, -1, -2)},
         ref=lambda a, xs, r: np.linalg.inv(_SPD)) for lo in (True, False)]
FORWARD["_linalg_inverse"] = lambda op, nin: [Case({}, ((2, 3, 3),), values={0: _SPD},
                                                   ref=_one(lambda a, x: np.linalg.inv(x)))]
FORWARD["_linalg_det"] = lambda op, nin: [Case({}, ((2, 3, 3),), values={0: _SPD},
                                               ref=_one(lambda a, x: np.linalg.det(x)))]
FORWARD["_linalg_slogdet"] = lambda op, nin: [Case({}, ((3, 3),), values={0: -_SPD[0]},
                                                   ref=lambda a, xs, r: np.array([-1.0]))]
FORWARD["_linalg_sumlogdiag"] = lambda op, nin: [
    Case({}, ((2, 3, 3),), values={0: _SPD},
         ref=_one(lambda a, x: np.log(np.einsum("...ii->...i", x)).sum(-1)))]
FORWARD["_linalg_syrk"] = lambda op, nin: [
    Case({"transpose": tr, "alpha": 0.5}, ((2, 3, 4),),
         ref=_one(lambda a, x: 0.5 * (_T(x) @ x if a["transpose"] else x @ _T(x))))
    for tr in (False, True)]
FORWARD["_linalg_extractdiag"] = lambda op, nin: [
    Case({"offset": o}, ((2, 4, 4),), ref=_one(lambda a, x: np.stack(
        [np.diag(m, a["offset"]) for m in x]))) for o in (0, 1, -2)]
FORWARD["_linalg_makediag"] = lambda op, nin: [
    Case({"offset": o}, ((2, 3),), ref=_one(lambda a, x: np.stack(
        [np.diag(v, a["offset"]) for v in x]))) for o in (0, 2, -1)]


def _trian_ref(a, x):
    n, o = x.shape[-1], a["offset"]
    if o < 0 or (o == 0 and a["lower"]):   # lower triangle, row by row
        return np.stack([np.array([m[i, j] for i in range(n) for j in range(i + o + 1)
                                   if j >= 0]) for m in x])
    return np.stack([np.array([m[i, j] for j in range(n) for i in range(j - o + 1)])
                     for m in x])        # upper triangle, column by column


FORWARD["_linalg_extracttrian"] = lambda op, nin: [
    Case({"offset": o, "lower": lo}, ((2, 4, 4),), ref=_one(_trian_ref))
    for o, lo in ((0, True), (0, False), (1, True), (-1, False))]
FORWARD["khatri_rao"] = lambda op, nin: [
    Case({"num_args": 2}, ((2, 3), (4, 3)), ref=lambda a, xs, r: np.einsum(
        "ik,jk->ijk", xs[0], xs[1]).reshape(8, 3))]

GRADIENT["_linalg_gemm"] = [({"transpose_a": ta, "transpose_b": tb, "alpha": 0.5, "beta": 2.0},
                             {"A": _r(2, 4, 3) if ta else _r(2, 3, 4),
                              "B": _r(2, 5, 4) if tb else _r(2, 4, 5), "C": _r(2, 3, 5)}, None)
                            for ta in (False, True) for tb in (False, True)]
GRADIENT["_linalg_gemm2"] = [({"axis": -3}, {"A": _r(2, 3, 2, 4), "B": _r(2, 4, 2, 3)}, None)]
GRADIENT["_linalg_trsm"] = [({"transpose": tr, "rightside": rs, "lower": lo, "alpha": 0.5},
                             {"A": _spd(3), "B": _r(2, 3) if rs else _r(3, 2)}, None)
                            for tr in (False, True) for rs in (False, True) for lo in (False, True)]
GRADIENT["_linalg_trmm"] = [({"transpose": tr, "rightside": rs, "lower": lo, "alpha": 0.5},
                             {"A": _r(3, 3), "B": _r(2, 3) if rs else _r(3, 2)}, None)
                            for tr in (False, True) for rs in (False, True) for lo in (False, True)]
GRADIENT["_linalg_potri"] = [({"lower": lo}, {"A": _LOW if lo else np.swapaxes(_LOW, -1, -2)},
                              None) for lo in (True, False)]
GRADIENT["_linalg_inverse"] = [({}, {"A": _SPD + _r(2, 3, 3)}, None)]
GRADIENT["_linalg_det"] = [({}, {"A": _SPD + _r(2, 3, 3)}, None)]
GRADIENT["_linalg_slogdet"] = [({}, {"A": -_SPD[0] + _r(3, 3)}, None)]
GRADIENT["_linalg_sumlogdiag"] = [({}, {"A": _SPD}, None)]
GRADIENT["_linalg_syrk"] = [({"transpose": tr, "alpha": 0.5}, {"A": _r(2, 3, 4)}, None)
                            for tr in (False, True)]
GRADIENT["_linalg_gelqf"] = [({}, {"A": _r(2, 3, 5)}, None)]
for _n, _shape in (("extractdiag", (2, 4, 4)), ("makediag", (2, 3)), ("extracttrian", (4, 4)),
                   ("maketrian", (2, 6))):
    GRADIENT["_linalg_" + _n] = [({"offset": o}, {"A": _r(*_shape)}, None) for o in (0, 1, -1)
                                 if not (_n == "maketrian" and o)]
# symmetric inputs: the op reads one triangle and MXNet's gradient is symmetric, so the
# numeric check goes through A -> (A + A^T) / 2 (see test_op_grad_sweep.SYMMETRIC)
GRADIENT["_linalg_potrf"] = [({"lower": lo}, {"A": _spd(3)}, None) for lo in (True, False)]
GRADIENT["_linalg_syevd"] = [({}, {"A": _spd(3) - 3 * np.eye(3)}, None)]
SYMMETRIC = ("_linalg_potrf", "_linalg_syevd")


# ----------------------------------------------------------------------------- random pdfs
def _pdf_ref(dist):
    import scipy.stats as ss

    def ref(a, xs, raws):
        x = xs[0].astype(np.float64)
        ps = [p.astype(np.float64).reshape(p.shape + (1,) * (x.ndim - p.ndim)) for p in xs[1:]]
        fn = {"normal": lambda x, m, s: ss.norm.logpdf(x, m, s),
              "uniform": lambda x, lo, hi: ss.uniform.logpdf(x, lo, hi - lo),
              "gamma": lambda x, al, be: ss.gamma.logpdf(x, al, 0, 1 / be),
              "exponential": lambda x, lam: ss.expon.logpdf(x, 0, 1 / lam),
              "poisson": lambda x, lam: ss.poisson.logpmf(x, lam),
              "negative_binomial": lambda x, k, p: ss.nbinom.logpmf(x, k, p),
              "generalized_negative_binomial": lambda x, mu, al: ss.nbinom.logpmf(
                  x, 1 / al, 1 / (mu * al + 1))}[dist]
        out = fn(x, *ps)
        return out if a["is_log"] else np.exp(out)
    return ref


_PDF_PARAMS = {"normal": (_r(2, 2), _p(2, 2) + 0.5), "uniform": (_r(2, 2) - 2, _p(2, 2) + 2),
               "gamma": (_p(2, 2) + 1, _p(2, 2) + 0.5), "exponential": (_p(2, 2) + 0.5,),
               "poisson": (_p(2, 2) * 5,), "negative_binomial": (_p(2, 2) * 5 + 1, _p(2, 2)),
               "generalized_negative_binomial": (_p(2, 2) * 3, _p(2, 2))}
_DISCRETE = ("poisson", "negative_binomial", "generalized_negative_binomial")
for _d, _ps in _PDF_PARAMS.items():
    _x = (np.floor(_p(2, 2, 3) * 6) if _d in _DISCRETE else _p(2, 2, 3) + 0.3)
    _vals = {0: _x, **{i + 1: v for i, v in enumerate(_ps)}}
    _names = {"normal": ("mu", "sigma"), "uniform": ("low", "high"), "gamma": ("alpha", "beta"),
              "exponential": ("lam",), "poisson": ("lam",), "negative_binomial": ("k", "p"),
              "generalized_negative_binomial": ("mu", "alpha")}[_d]
    FORWARD["_random_pdf_" + _d] = (lambda vals, d: lambda op, nin: [
        Case({"is_log": lg}, tuple(v.shape for v in vals.values()), values=vals,
             ref=_pdf_ref(d)) for lg in (False, True)])(_vals, _d)
    GRADIENT["_random_pdf_" + _d] = [
        ({"is_log": lg}, dict(zip(("sample",) + _names, _vals.values())),
         list(_names) if _d in _DISCRETE or _d == "uniform" else None) for lg in (False, True)]
_DIR_ALPHA = _p(2, 3) + 0.5
_DIR_X = _p(2, 4, 3)
_DIR_X /= _DIR_X.sum(-1, keepdims=True)
GRADIENT["_random_pdf_dirichlet"] = [({"is_log": lg}, {"sample": _DIR_X, "alpha": _DIR_ALPHA},
                                      ["alpha"]) for lg in (False, True)]



def _dirichlet_ref(a, xs, raws):
    import scipy.stats as ss
    x, al = xs[0].astype(np.float64), xs[1].astype(np.float64)
    out = np.array([[ss.dirichlet.logpdf(x[i, j], al[i]) for j in range(x.shape[1])]
                    for i in range(x.shape[0])])
    return out if a["is_log"] else np.exp(out)


FORWARD["_random_pdf_dirichlet"] = lambda op, nin: [
    Case({"is_log": lg}, ((2, 4, 3), (2, 3)), values={0: _DIR_X, 1: _DIR_ALPHA},
         ref=_dirichlet_ref) for lg in (False, True)]


# ----------------------------------------------------------------------------- signal, fills
# fft/ifft/count_sketch (GPU-only in MXNet 1.9.1) against NumPy written out independently
def _dft(x, sign):
    d = x.shape[-1]
    k = np.arange(d)
    return x @ np.exp(sign * 2j * np.pi * np.outer(k, k) / d)


def _fft_ref(a, xs, raws):
    z = _dft(xs[0].astype(np.float64), -1)
    return np.stack([z.real, z.imag], axis=-1).reshape(z.shape[:-1] + (-1,))


def _ifft_ref(a, xs, raws):
    x = xs[0].astype(np.float64)
    return _dft(x[..., 0::2] + 1j * x[..., 1::2], 1).real


_H = np.array([[0, 2, 2, 1, 3, 0]], np.float32)
_S = np.array([[1, -1, 1, 1, -1, -1]], np.float32)


def _sketch_ref(a, xs, raws):
    x, h, s = (v.astype(np.float64) for v in xs)
    out = np.zeros(x.shape[:-1] + (a["out_dim"],))
    for j in range(x.shape[-1]):
        out[..., int(h[0, j])] += x[..., j] * s[0, j]
    return out


FORWARD["_contrib_fft"] = lambda op, nin: [Case({}, ((3, 5),), ref=_fft_ref),
                                           Case({}, ((2, 1, 2, 4),), ref=_fft_ref)]
FORWARD["_contrib_ifft"] = lambda op, nin: [Case({}, ((3, 10),), ref=_ifft_ref)]
FORWARD["_contrib_count_sketch"] = lambda op, nin: [
    Case({"out_dim": 4}, ((3, 6), (1, 6), (1, 6)), values={1: _H, 2: _S}, ref=_sketch_ref)]
FORWARD["_backward_contrib_count_sketch"] = lambda op, nin: [
    Case({"out_dim": 4}, ((3, 4), (3, 6), (1, 6), (1, 6)), values={2: _H, 3: _S},
         ref=lambda a, xs, r: xs[0][:, _H[0].astype(int)] * _S[0])]
FORWARD["_set_value"] = lambda op, nin: [Case({"src": 2.5}, (), ref=lambda a, xs, r: 2.5)]
GRADIENT["_contrib_fft"] = [({}, {"data": _r(3, 5)}, None)]
GRADIENT["_contrib_ifft"] = [({}, {"data": _r(2, 3, 8)}, None)]
GRADIENT["_contrib_count_sketch"] = [({"out_dim": 4}, {"data": _r(3, 6), "h": _H, "s": _S},
                                      ["data"])]


# fused optimizers: one step of NumPy's AdamW / LAMB / group AdaGrad per weight (the
# references update the states of their inputs too: the sweep compares them)
def _write_states(xs, base, m, v, w32):
    xs[base + 2][...] = m
    xs[base + 3][...] = v
    if w32 is not None:
        xs[base + 4][...] = w32


def _adamw_ref(mp):
    per = 5 if mp else 4

    def ref(a, xs, raws):
        rescale = float(xs[-1].reshape(-1)[0])
        outs = []
        for i in range(a["num_weights"]):
            w, g, m, v = (x.astype(np.float64) for x in xs[i * per:i * per + 4])
            if mp:  # the update runs on the float32 master copy
                w = xs[i * per + 4].astype(np.float64)
            g = np.clip(g * rescale, -a["clip_gradient"], a["clip_gradient"])
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            new = w - a["etas"][i] * (a["lrs"][i] * m / (np.sqrt(v) + 1e-8) + a["wds"][i] * w)
            _write_states(xs, i * per, m, v, new if mp else None)
            outs.append(new)
        return tuple(outs)
    return ref


def _lamb_ref(mp):
    per = 5 if mp else 4

    def ref(a, xs, raws):
        outs = []
        for i in range(a["num_tensors"]):
            w, g, m, v = (x.astype(np.float64) for x in xs[i * per:i * per + 4])
            if mp:  # the update runs on the float32 master copy
                w = xs[i * per + 4].astype(np.float64)
            t = a["step_count"][i]
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            r = (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-6) + a["wds"][i] * w
            r1, r2 = np.sqrt((w * w).sum()), np.sqrt((r * r).sum())
            r1 = min(max(r1, a["lower_bound"]), a["upper_bound"])
            new = w - a["learning_rates"][i] * r1 / r2 * r
            _write_states(xs, i * per, m, v, new if mp else None)
            outs.append(new)
        return tuple(outs)
    return ref


for _mp in (False, True):
    _pw = 5 if _mp else 4
    FORWARD["_multi_mp_adamw_update" if _mp else "_multi_adamw_update"] = (
        lambda op, nin, _m=_mp, _q=_pw: [Case(
            {"lrs": (0.1, 0.2), "wds": (0.01, 0.0), "etas": (1.0, 0.5), "clip_gradient": 0.7,
             "num_weights": 2}, ((3, 4),) * _q + ((5,),) * _q + ((1,),), positive=True,
            values={2 * _q: np.array([0.5])}, ref=_adamw_ref(_m))])
    FORWARD["_multi_mp_lamb_update" if _mp else "_multi_lamb_update"] = (
        lambda op, nin, _m=_mp, _q=_pw: [Case(
            {"learning_rates": (0.1, 0.2), "wds": (0.01, 0.0), "step_count": (1, 3),
             "lower_bound": 0.5, "upper_bound": 2.0, "num_tensors": 2},
            ((3, 4),) * _q + ((5,),) * _q, positive=True, ref=_lamb_ref(_m))])


def _group_adagrad_ref(a, xs, raws):
    w, g, h = (x.astype(np.float64) for x in xs)
    if getattr(raws[1], "stype", "default") == "row_sparse":  # lazy: only stored rows
        rows = np.zeros(len(w), bool)
        rows[raws[1].indices] = True
    else:
        rows = np.ones(len(w), bool)
    h2 = np.where(rows[:, None], h + (g * g).mean(axis=1, keepdims=True), h)
    xs[2][...] = h2
    return np.where(rows[:, None], w - a["lr"] * g / np.sqrt(h2 + 1e-5), w)


FORWARD["_contrib_group_adagrad_update"] = lambda op, nin: [
    Case({"lr": 0.1}, ((4, 6), (4, 6), (4, 1)), positive=True, ref=_group_adagrad_ref)]
