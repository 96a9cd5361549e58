"""More update operators of MXNet 1.9.1: the multi-precision SGD family (mp_sgd_update,
mp_sgd_mom_update, mp_nag_mom_update), AdamW (_adamw_update, _mp_adamw_update), the LAMB
phases (lamb_update_phase1/2 and their mp_ forms) and multi_lars.

Dense updates: states (mom, mean, var, the float32 master weight32) are updated in place,
the op returns the new weight (cast to the weight's dtype from weight32 in the mp_ forms).
"""
from __future__ import annotations

import numpy as np

from ..core import rules
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from . import service

_LR = Field("float", doc="learning rate")
_CLIP = dict(rescale_grad=Field("float", 1.0), clip_gradient=Field("float", -1.0))


def _cg(a):
    c = a.clip_gradient
    return None if c is None or c < 0 else c


def scaled_grad(g, rescale, clip):
    """rescale * g, clipped to [-clip, clip] when clip is not None (float16 in float32)."""
    g = np.asarray(g, np.float32 if g.dtype == np.float16 else g.dtype) * rescale
    return np.clip(g, -clip, clip) if clip is not None else g


def _scaled(a, g, rescale):
    """rescale_grad * g, clipped to [-clip_gradient, clip_gradient] when that is >= 0."""
    return scaled_grad(g, rescale, _cg(a))


def _type_like_weight(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_type(outs, 0, ins[0], "output")
    return ins, outs


def _dense(inputs, kernel):
    """The one dispatch row of these updates: every input and the result dense."""
    return (Dispatch((DNS,) * len(inputs), (DNS,), kernel),)


def _mp_shape(attrs, ins, outs):
    """Every input is weight-shaped (scalar-array inputs are handled by their ops)."""
    return rules.same_shape(attrs, ins, outs)


def _mp_type(attrs, ins, outs):
    """weight32 (last input) is float32; the result has the weight's dtype."""
    rules.set_type(ins, len(ins) - 1, np.dtype(np.float32))
    return _type_like_weight(attrs, ins, outs)


# ----------------------------------------------------------------------------- mp SGD family
_SGD = dict(wd=Field("float", 0.0), **_CLIP)


def _mp(kind, n_states):
    """Run the service's dense ``kind`` update on the float32 weight32, return it cast to
    the weight's dtype."""
    def kernel(a, xs):
        w, g, states, w32 = xs[0], xs[1], xs[2:2 + n_states], xs[-1]
        kw = {k: a[k] for k in ("lr", "momentum", "wd", "rescale_grad") if k in a}
        service.run_update(kind, False, w32, np.asarray(g, np.float32), states,
                           clip_gradient=_cg(a), **kw)
        return (w32.astype(w.dtype),)
    return kernel


_MP_SGD_IN = ("weight", "grad", "weight32")
_MP_MOM_IN = ("weight", "grad", "mom", "weight32")
register(OpDef(
    "mp_sgd_update", inputs=_MP_SGD_IN,
    params=Params(lr=_LR, **_SGD, lazy_update=Field("bool", True)),
    dispatch=_dense(_MP_SGD_IN, _mp("sgd", 0)), mutates=(2,), infer_shape=rules.same_shape,
    infer_type=_mp_type,
    doc="Multi-precision SGD: the update runs on the float32 master copy ``weight32`` (in "
        "place); the result is it cast to the weight's dtype."))
register(OpDef(
    "mp_sgd_mom_update", inputs=_MP_MOM_IN,
    params=Params(lr=_LR, momentum=Field("float", 0.0), **_SGD,
                  lazy_update=Field("bool", True)),
    dispatch=_dense(_MP_MOM_IN, _mp("sgd_mom", 1)), mutates=(2, 3),
    infer_shape=rules.same_shape, infer_type=_mp_type,
    doc="Multi-precision SGD with momentum (``mom`` float32, updated in place with "
        "weight32)."))
register(OpDef(
    "mp_nag_mom_update", inputs=_MP_MOM_IN,
    params=Params(lr=_LR, momentum=Field("float", 0.0), **_SGD),
    dispatch=_dense(_MP_MOM_IN, _mp("nag_mom", 1)), mutates=(2, 3),
    infer_shape=rules.same_shape, infer_type=_mp_type,
    doc="Multi-precision Nesterov momentum SGD (as nag_mom_update, on weight32)."))


# ----------------------------------------------------------------------------- AdamW
_ADAMW = Params(lr=_LR, beta1=Field("float", 0.9), beta2=Field("float", 0.999),
                epsilon=Field("float", 1e-8), wd=Field("float", 0.0),
                eta=Field("float", doc="learning-rate multiplier (schedule)"),
                clip_gradient=Field("float", -1.0))


def adamw_step(w, g, mean, var, w32, rescale, lr, eta, wd, beta1, beta2, epsilon, clip):
    """One AdamW update of one weight: mean, var (and w32 when given) in place; returns the
    new weight in w's dtype. A ``rescale`` of 0, inf or nan skips the update (MXNet: how
    AMP's loss scaler skips a step after an overflow)."""
    target = w if w32 is None else w32
    if not np.isfinite(rescale) or rescale == 0:
        return target.astype(w.dtype)
    gs = scaled_grad(g, rescale, clip)
    mean *= beta1
    mean += (1 - beta1) * gs
    var *= beta2
    var += (1 - beta2) * gs * gs
    wf = target.astype(np.float64)
    new = wf - eta * (lr * mean / (np.sqrt(var) + epsilon) + wd * wf)
    if w32 is not None:
        w32[...] = new
    return new.astype(w.dtype)


def _adamw(mp):
    def kernel(a, xs):
        rescale = float(np.asarray(xs[-1]).reshape(-1)[0])
        return (adamw_step(*xs[:4], xs[4] if mp else None, rescale, a.lr, a.eta, a.wd,
                           a.beta1, a.beta2, a.epsilon, _cg(a)),)
    return kernel


def _adamw_shape(attrs, ins, outs):
    ins2, outs = rules.same_shape(attrs, ins[:-1], outs)
    ins[:-1] = ins2
    rules.set_shape(ins, len(ins) - 1, (1,))
    return ins, outs


def _adamw_type(mp):
    def rule(attrs, ins, outs):
        if mp:
            rules.set_type(ins, 4, np.dtype(np.float32))
        return _type_like_weight(attrs, ins, outs)
    return rule


_ADAMW_DOC = """AdamW (decoupled weight decay): ``g = clip(rescale_grad * grad)``, mean and var
    updated in place, ``w -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * w)``;
    ``rescale_grad`` is a (1,) array; 0, inf or nan skips the update (weight, mean and var
    unchanged)."""
_ADAMW_IN = ("weight", "grad", "mean", "var", "rescale_grad")
_MP_ADAMW_IN = ("weight", "grad", "mean", "var", "weight32", "rescale_grad")
register(OpDef(
    "_adamw_update", inputs=_ADAMW_IN, params=_ADAMW,
    dispatch=_dense(_ADAMW_IN, _adamw(False)), mutates=(2, 3), infer_shape=_adamw_shape,
    infer_type=_adamw_type(False), doc=_ADAMW_DOC))
register(OpDef(
    "_mp_adamw_update", inputs=_MP_ADAMW_IN, params=_ADAMW,
    dispatch=_dense(_MP_ADAMW_IN, _adamw(True)), mutates=(2, 3, 4), infer_shape=_adamw_shape,
    infer_type=_adamw_type(True), doc=_ADAMW_DOC + " Multi-precision: on float32 weight32."))


# ----------------------------------------------------------------------------- LAMB
_LAMB1 = Params(beta1=Field("float", 0.9), beta2=Field("float", 0.999),
                epsilon=Field("float", 1e-6), t=Field("int"),
                bias_correction=Field("bool", True), wd=Field("float"), **_CLIP)
_LAMB2 = Params(lr=_LR, lower_bound=Field("float", -1.0), upper_bound=Field("float", -1.0))


def lamb_direction(wf, g, mean, var, t, wd, rescale, clip, beta1, beta2, epsilon,
                   bias_correction):
    """LAMB phase 1 for one weight (``wf`` float64): mean and var in place; returns
    ``m / (sqrt(v) + epsilon) + wd * w`` with the moments bias-corrected at step ``t``."""
    gs = scaled_grad(g, rescale, clip)
    mean *= beta1
    mean += (1 - beta1) * gs
    var *= beta2
    var += (1 - beta2) * gs * gs
    m, v = mean.astype(np.float64), var.astype(np.float64)
    if bias_correction:
        m = m / (1 - beta1 ** t)
        v = v / (1 - beta2 ** t)
    return m / (np.sqrt(v) + epsilon) + wd * wf


def lamb_apply(wf, direction, r1, r2, lr, lower_bound, upper_bound):
    """LAMB phase 2: ``w - lr * (r1 / r2) * direction`` (float64), r1 clipped to the bounds
    that are >= 0, ratio 1 when r1 or r2 is 0."""
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    ratio = r1 / r2 if r1 != 0 and r2 != 0 else 1.0
    return wf - lr * ratio * direction


def _lamb1(mp):
    def kernel(a, xs):
        w, g, mean, var = xs[:4]
        wf = (xs[4] if mp else w).astype(np.float64)
        out = lamb_direction(wf, g, mean, var, a.t, a.wd, a.rescale_grad, _cg(a), a.beta1,
                             a.beta2, a.epsilon, a.bias_correction)
        return (out.astype(np.float32 if mp else w.dtype),)
    return kernel


def _lamb2(mp):
    def kernel(a, xs):
        w, g, r1, r2 = xs[:4]
        target = xs[4] if mp else w
        new = lamb_apply(target.astype(np.float64), g.astype(np.float64),
                         float(np.asarray(r1).reshape(-1)[0]),
                         float(np.asarray(r2).reshape(-1)[0]), a.lr, a.lower_bound,
                         a.upper_bound)
        if mp:
            target[...] = new
        return (new.astype(w.dtype),)
    return kernel


def _lamb2_shape(attrs, ins, outs):
    for i in (2, 3):
        rules.set_shape(ins, i, (1,))
    rest = [0, 1] + ([4] if len(ins) > 4 else [])
    sub, outs = rules.same_shape(attrs, [ins[i] for i in rest], outs)
    for i, s in zip(rest, sub):
        ins[i] = s
    return ins, outs


def _lamb1_type(mp):
    def rule(attrs, ins, outs):
        if mp:
            rules.set_type(ins, 4, np.dtype(np.float32))
            rules.set_type(outs, 0, np.dtype(np.float32), "output")
            return ins, outs
        return _type_like_weight(attrs, ins, outs)
    return rule


_LAMB1_IN = ("weight", "grad", "mean", "var")
_MP_LAMB1_IN = _LAMB1_IN + ("weight32",)
_LAMB2_IN = ("weight", "g", "r1", "r2")
_MP_LAMB2_IN = _LAMB2_IN + ("weight32",)
register(OpDef(
    "lamb_update_phase1", inputs=_LAMB1_IN, params=_LAMB1,
    dispatch=_dense(_LAMB1_IN, _lamb1(False)), mutates=(2, 3), infer_shape=rules.same_shape,
    infer_type=_lamb1_type(False),
    doc="""LAMB phase 1: mean and var updated in place (Adam moments of
    ``clip(rescale_grad * grad)``); returns ``m / (sqrt(v) + epsilon) + wd * weight`` with
    the bias-corrected moments (step ``t``) when ``bias_correction``."""))
register(OpDef(
    "mp_lamb_update_phase1", inputs=_MP_LAMB1_IN, params=_LAMB1,
    dispatch=_dense(_MP_LAMB1_IN, _lamb1(True)), mutates=(2, 3),
    infer_shape=rules.same_shape, infer_type=_lamb1_type(True),
    doc="LAMB phase 1 on the float32 master weight32 (float32 result)."))
register(OpDef(
    "lamb_update_phase2", inputs=_LAMB2_IN, params=_LAMB2,
    dispatch=_dense(_LAMB2_IN, _lamb2(False)), mutates=(), infer_shape=_lamb2_shape,
    infer_type=_type_like_weight,
    doc="""LAMB phase 2: ``weight - lr * (r1 / r2) * g`` with r1 (the weight norm) clipped to
    [lower_bound, upper_bound] when those are >= 0, ratio 1 when r1 or r2 is 0."""))
register(OpDef(
    "mp_lamb_update_phase2", inputs=_MP_LAMB2_IN, params=_LAMB2,
    dispatch=_dense(_MP_LAMB2_IN, _lamb2(True)), mutates=(4,), infer_shape=_lamb2_shape,
    infer_type=_type_like_weight,
    doc="LAMB phase 2 on the float32 master weight32 (updated in place)."))


# ----------------------------------------------------------------------------- multi_lars
_LARS = Params(eta=Field("float"), eps=Field("float"), rescale_grad=Field("float", 1.0))


def _lars(a, xs):
    lrs, wss, gss, wds = (np.asarray(x, np.float64) for x in xs)
    wn = np.sqrt(wss)
    gn = np.sqrt(gss) * a.rescale_grad
    ok = (wn > 0) & (gn > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        new = np.where(ok, lrs * a.eta * wn / (gn + wds * wn + a.eps), lrs)
    return (new.astype(xs[0].dtype),)


_LARS_IN = ("lrs", "weights_sum_sq", "grads_sum_sq", "wds")
register(OpDef(
    "multi_lars", inputs=_LARS_IN, params=_LARS, dispatch=_dense(_LARS_IN, _lars), mutates=(),
    infer_shape=rules.same_shape, infer_type=rules.same_type,
    doc="""LARS learning rates: ``lrs * eta * |w| / (|g| * rescale_grad + wd * |w| + eps)`` per
    weight from the sums of squares (the lr itself where a norm is 0)."""))
