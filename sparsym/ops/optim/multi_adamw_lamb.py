"""Fused multi-weight AdamW and LAMB updates of MXNet 1.9.1 (_multi_adamw_update,
_multi_mp_adamw_update, _multi_lamb_update, _multi_mp_lamb_update) and the row-wise
_contrib_group_adagrad_update.

The multi ops take the per-weight groups (weight, grad, mean, var[, weight32]) one after
another (the AdamW forms end with a (1,) ``rescale_grad`` array) and return the new weights
(MXNet's optimizers pass ``out=weights``); mean, var and weight32 are updated in place. Each
weight follows _adamw_update / lamb_update_phase1+2 with its own learning rate and weight
decay (mp_updates.py holds the per-weight steps). As in multi_sgd.py, the
outputs' shapes are inferred, so the ops also run without ``out`` and in symbols.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ParamError
from ..core import rules
from ..core.helpers import DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from . import service
from .mp_updates import adamw_step, scaled_grad
from .multi_sgd import group_shape, mutated_states


def _names(per, tail):
    group = ("weight", "grad", "mean", "var", "weight32")[:per]

    def names(a):
        n = a.num_weights if hasattr(a, "num_weights") else a.num_tensors
        return tuple(f"{g}_{i}" for i in range(n) for g in group) + tail
    return names


def _type(per, count, mp):
    """Grad like the weight; mean, var (and weight32) float32 in the mp_ forms, like the
    weight otherwise; output i like weight i."""
    def rule(a, ins, outs):
        for i in range(count(a)):
            w = ins[i * per]
            if w is None:
                continue
            rules.set_type(ins, i * per + 1, w)
            for k in range(2, per):
                rules.set_type(ins, i * per + k, np.dtype(np.float32) if mp else w)
            rules.set_type(outs, i, w, f"output {i}")
        for j in range(count(a) * per, len(ins)):
            if ins[j] is None:
                rules.set_type(ins, j, np.dtype(np.float32))
        return ins, outs
    return rule


def _per_weight(values, n, what):
    if len(values) < n:
        raise ParamError(f"{what}: {n} weights need {n} values, got {len(values)}")
    return values


def _clip(c):
    return c if c > 0 else None  # MXNet: clip_gradient <= 0 turns clipping off


# ----------------------------------------------------------------------------- AdamW
def _adamw(mp):
    per = 5 if mp else 4

    def kernel(a, xs):
        n = a.num_weights
        lrs, wds, etas = (_per_weight(v, n, f"_multi_adamw_update {k}")
                          for k, v in (("lrs", a.lrs), ("wds", a.wds), ("etas", a.etas)))
        rescale = float(np.asarray(xs[n * per]).reshape(-1)[0])
        return tuple(adamw_step(*xs[i * per:i * per + 4], xs[i * per + 4] if mp else None,
                                rescale, lrs[i], etas[i], wds[i], a.beta1, a.beta2,
                                a.epsilon, _clip(a.clip_gradient))
                     for i in range(n))
    return kernel


_ADAMW = Params(lrs=Field("floats", doc="learning rates, one per weight"),
                beta1=Field("float", 0.9), beta2=Field("float", 0.999),
                epsilon=Field("float", 1e-8),
                wds=Field("floats", doc="weight decays, one per weight"),
                etas=Field("floats", doc="learning-rate schedule multipliers, one per weight"),
                clip_gradient=Field("float", -1.0),
                num_weights=Field("int", 1, doc="number of updated weights"))

for _mp in (False, True):
    _per = 5 if _mp else 4
    _name = "_multi_mp_adamw_update" if _mp else "_multi_adamw_update"
    _how = (" on the float32 weight32 (in place), returned cast to the weight dtype"
            if _mp else "")
    register(OpDef(
        _name, params=_ADAMW, inputs=_names(_per, ("rescale_grad",)),
        num_outputs=lambda a: a.num_weights,
        output_names=lambda a: tuple(f"output{i}" for i in range(a.num_weights)),
        mutates=mutated_states(_per), dispatch=(Dispatch((DNS, "..."), (DNS,), _adamw(_mp)),),
        infer_shape=group_shape(_per, lambda a: a.num_weights, lambda n: ((1,),)),
        infer_type=_type(_per, lambda a: a.num_weights, _mp),
        doc=f"""AdamW of ``num_weights`` weights in one call{' (multi-precision)' if _mp else ''}.

    ``data`` is the groups (weight, grad, mean, var{', weight32' if _mp else ''}) one after
    another, then the (1,) ``rescale_grad`` array. Per weight i: ``g = clip(rescale_grad *
    grad)``, mean and var updated in place, ``w -= etas[i] * (lrs[i] * mean / (sqrt(var) +
    epsilon) + wds[i] * w)``{_how}.
    A rescale_grad of 0, inf or nan skips the update. Returns the new weights.
    """))


# ----------------------------------------------------------------------------- LAMB
def _lamb(mp):
    per = 5 if mp else 4

    def kernel(a, xs):
        n = a.num_tensors
        if n > 45:
            # MXNet's limit (the kernel's argument block has 45 slots)
            raise ParamError(f"Invalid number of tensors, the maximum value is 45, and got {n}")
        lrs, wds, steps = (_per_weight(v, n, f"_multi_lamb_update {k}") for k, v in
                           (("learning_rates", a.learning_rates), ("wds", a.wds),
                            ("step_count", a.step_count)))
        # MXNet documents a bound <= 0 as unset, but its kernel applies bounds >= 0 (an
        # upper_bound of 0 gives a trust ratio of 1): the kernel's rule is followed
        lower, upper = a.lower_bound, a.upper_bound
        outs = []
        for i in range(n):
            w, g, mean, var = xs[i * per:i * per + 4]
            # the mp form updates weight32 in place; the plain one returns a new weight
            target = xs[i * per + 4] if mp else np.array(w, copy=True)
            # MXNet's norm of a float16 weight reads the float16 weight and squares it in
            # float16 (multi_sum_sq), not the float32 master copy
            norm = (float(np.sqrt(np.square(w, dtype=np.float16).sum(dtype=np.float64)))
                    if mp and w.dtype == np.float16 else None)
            service.lamb_step(target, g, mean, var, t=steps[i], lr=lrs[i], wd=wds[i],
                              rescale_grad=a.rescale_grad,
                              clip_gradient=_clip(a.clip_gradient), beta1=a.beta1,
                              beta2=a.beta2, epsilon=a.epsilon,
                              bias_correction=a.bias_correction, lower_bound=lower,
                              upper_bound=upper, weight_norm=norm)
            outs.append(target.astype(w.dtype) if mp else target)
        return tuple(outs)
    return kernel


_LAMB = Params(learning_rates=Field("floats", doc="learning rates, one per tensor"),
               beta1=Field("float", 0.9), beta2=Field("float", 0.999),
               epsilon=Field("float", 1e-6),
               wds=Field("floats", doc="weight decays, one per tensor"),
               rescale_grad=Field("float", 1.0), lower_bound=Field("float", -1.0),
               upper_bound=Field("float", -1.0), clip_gradient=Field("float", -1.0),
               bias_correction=Field("bool", True),
               step_count=Field("shape", doc="the update step of each tensor"),
               num_tensors=Field("int", 1, doc="number of tensors"))

for _mp in (False, True):
    _per = 5 if _mp else 4
    _name = "_multi_mp_lamb_update" if _mp else "_multi_lamb_update"
    _kind = " (multi-precision)" if _mp else ""
    register(OpDef(
        _name, params=_LAMB, inputs=_names(_per, ()),
        num_outputs=lambda a: a.num_tensors,
        output_names=lambda a: tuple(f"output{i}" for i in range(a.num_tensors)),
        mutates=mutated_states(_per), dispatch=(Dispatch((DNS, "..."), (DNS,), _lamb(_mp)),),
        infer_shape=group_shape(_per, lambda a: a.num_tensors),
        infer_type=_type(_per, lambda a: a.num_tensors, _mp),
        doc=f"""LAMB (both phases) of ``num_tensors`` weights in one call{_kind}.

    ``data`` is the groups (weight, grad, mean, var{', weight32' if _mp else ''}) one after
    another. Per tensor i: mean and var updated in place from ``clip(rescale_grad * grad)``,
    ``r = m / (sqrt(v) + epsilon) + wds[i] * w`` (moments bias-corrected at
    ``step_count[i]``), ``w -= learning_rates[i] * (|w| / |r|) * r`` with |w| clipped to
    the bounds that are > 0 and a ratio of 1 when a norm is 0. Returns the new weights.
    """))


# ----------------------------------------------------------------------------- group AdaGrad
def _group_adagrad(a, xs):
    """Dense weight and history, dense or row_sparse grad: only the grad's rows change."""
    w, g, hist = xs
    if isinstance(g, st.RSP):
        rows, gv = g.indices, g.data
    else:
        rows, gv = np.arange(w.shape[0]), g
    new = np.array(w, copy=True)
    if len(rows) == 0:
        return (new,)
    gs = scaled_grad(gv, a.rescale_grad, _clip(a.clip_gradient)).astype(np.float64)
    flat = gs.reshape(len(rows), -1)
    h = hist.reshape(hist.shape[0], -1)
    h[rows, 0] += (flat * flat).mean(axis=1)
    div = flat / np.sqrt(h[rows, :1] + a.epsilon)
    new.reshape(w.shape[0], -1)[rows] -= (a.lr * div).astype(w.dtype)
    return (new,)


def _group_adagrad_shape(a, ins, outs):
    w = ins[0] if ins[0] is not None else outs[0]
    if w is not None:
        rules.set_shape(ins, 0, w)
        rules.set_shape(ins, 1, w)
        rules.set_shape(ins, 2, (w[0], 1))
        rules.set_shape(outs, 0, w, "output")
    return ins, outs


register(OpDef(
    "_contrib_group_adagrad_update",
    params=Params(lr=Field("float", doc="learning rate"), rescale_grad=Field("float", 1.0),
                  clip_gradient=Field("float", -1.0), epsilon=Field("float", 1e-5)),
    inputs=("weight", "grad", "history"), mutates=(2,),
    dispatch=(Dispatch((DNS, RSP, DNS), (DNS,), _group_adagrad),
              Dispatch((DNS, DNS, DNS), (DNS,), _group_adagrad)),
    infer_shape=_group_adagrad_shape, aliases=("group_adagrad_update",),
    doc="""Group AdaGrad: one accumulated square per row of the weight.

    ``g = clip(rescale_grad * grad)``, ``history[row] += mean(g[row] ** 2)``,
    ``weight[row] -= lr * g[row] / sqrt(history[row] + epsilon)``; history has shape
    (rows, 1) and is updated in place. A row_sparse gradient updates only its rows (MXNet's
    one CPU form; the dense gradient, which MXNet has no CPU kernel for, updates every row).
    """))
