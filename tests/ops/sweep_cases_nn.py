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
    if a["mode"] == "channel":
        return _softmax(x, 1)
    return _softmax(x.reshape(x.shape[0], -1), 1).reshape(x.shape)


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
