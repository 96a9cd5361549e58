"""MXNet 1.9.1's fused multi-weight SGD updates: multi_sgd_update, multi_sgd_mom_update, their
multi_mp_ forms and the preloaded_multi_* forms (learning rates and weight decays as arrays).

``data`` holds the per-weight groups one after another: (weight, grad), (weight, grad, mom),
(weight, grad, weight32) or (weight, grad, mom, weight32); the preloaded forms end with the
``lrs`` and ``wds`` arrays. Outputs are the ``num_weights`` new weights (MXNet's optimizers
pass ``out=weights``); mom and weight32 are updated in place. Each weight follows
``sgd_update`` / ``sgd_mom_update`` with its own lr and wd; the mp_ forms update the float32
master copy and return it cast to the weight's dtype. Unlike MXNet, the outputs' shapes are
inferred from the weights, so the ops also run without ``out`` and in symbols.
"""
from __future__ import annotations

import numpy as np

from ..core import rules
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from . import service


def _group(mom, mp):
    return ("weight", "grad") + (("mom",) if mom else ()) + (("weight32",) if mp else ())


def _inputs(mom, mp, preloaded):
    def names(a):
        per = _group(mom, mp)
        out = tuple(f"{n}_{i}" for i in range(a.num_weights) for n in per)
        return out + (("lrs", "wds") if preloaded else ())
    return names


def mutated_states(per, first=2):
    """Indices of the state inputs (updated in place) of up to 64 weights whose groups have
    ``per`` inputs, the states from position ``first`` (OpDef.mutates is a static tuple)."""
    return tuple(i * per + k for i in range(64) for k in range(first, per))


def group_shape(per, count, tail=lambda n: ()):
    """Shape rule of a fused multi-weight update: each of the ``count(attrs)`` groups of
    ``per`` inputs is shaped like its weight, output i like weight i; ``tail(n)`` gives the
    shapes of the inputs after the groups."""
    def rule(a, ins, outs):
        n = count(a)
        for i in range(n):
            grp = list(ins[i * per:(i + 1) * per])
            shp = next((s for s in grp if s is not None), None)
            if shp is None and outs[i] is not None:
                shp = outs[i]
            if shp is None:
                continue
            for k in range(per):
                rules.set_shape(ins, i * per + k, shp)
            rules.set_shape(outs, i, shp, f"output {i}")
        for j, shp in enumerate(tail(n)):
            rules.set_shape(ins, n * per + j, shp)
        return ins, outs
    return rule


def _shape(mom, mp, preloaded):
    return group_shape(len(_group(mom, mp)), lambda a: a.num_weights,
                       (lambda n: ((n,), (n,))) if preloaded else (lambda n: ()))


def _type(mom, mp, preloaded):
    per = len(_group(mom, mp))

    def rule(a, ins, outs):
        n = a.num_weights
        for i in range(n):
            w = ins[i * per]
            if w is None:
                continue
            rules.set_type(ins, i * per + 1, w)
            if mom:
                rules.set_type(ins, i * per + 2, np.dtype(np.float32) if mp else w)
            if mp:
                rules.set_type(ins, i * per + per - 1, np.dtype(np.float32))
            rules.set_type(outs, i, w, f"output {i}")
        if preloaded:
            for j in (n * per, n * per + 1):
                if ins[j] is None:
                    rules.set_type(ins, j, np.dtype(np.float32))
        return ins, outs
    return rule


def _kernel(mom, mp, preloaded):
    per = len(_group(mom, mp))

    def kernel(a, xs):
        n = a.num_weights
        if preloaded:
            lrs = np.asarray(xs[n * per], np.float64).reshape(-1)
            wds = np.asarray(xs[n * per + 1], np.float64).reshape(-1)
        else:
            lrs, wds = a.lrs, a.wds
        if len(lrs) < n or len(wds) < n:
            from ...base import ParamError
            raise ParamError(f"multi-weight SGD: {n} weights need {n} learning rates and "
                             f"weight decays, got {len(lrs)} and {len(wds)}")
        clip = a.clip_gradient if a.clip_gradient > 0 else None
        outs = []
        for i in range(n):
            grp = xs[i * per:(i + 1) * per]
            w, g = grp[0], grp[1]
            target = grp[-1] if mp else np.array(w, order="C", copy=True)
            gg = np.ascontiguousarray(g, dtype=target.dtype)
            kw = dict(lr=float(lrs[i]), wd=float(wds[i]), rescale_grad=a.rescale_grad,
                      clip_gradient=clip)
            if mom:
                service.run_update("sgd_mom", False, target, gg, (grp[2],),
                                   momentum=a.momentum, **kw)
            else:
                service.run_update("sgd", False, target, gg, (), **kw)
            outs.append(target.astype(w.dtype) if mp else target)
        return tuple(outs)
    return kernel


_COMMON = dict(rescale_grad=Field("float", 1.0, doc="gradient scale"),
               clip_gradient=Field("float", -1.0, doc="clip to [-c, c] when c > 0"),
               num_weights=Field("int", 1, doc="number of updated weights"))


def _params(mom, preloaded):
    fields = {}
    if not preloaded:
        fields["lrs"] = Field("floats", doc="learning rates, one per weight")
        fields["wds"] = Field("floats", doc="weight decays, one per weight")
    if mom:
        fields["momentum"] = Field("float", 0.0, doc="momentum")
    return Params(**fields, **_COMMON)


def _doc(name, mom, mp, preloaded):
    grp = ", ".join(_group(mom, mp))
    rates = ("the last two inputs are the ``lrs`` and ``wds`` arrays" if preloaded
             else "``lrs`` and ``wds`` give one learning rate and weight decay per weight")
    rule = "sgd_mom_update" if mom else "sgd_update"
    return f"""Fused {rule} of ``num_weights`` weights ({name}).

    ``data`` is the groups ({grp}) one after another; {rates}. Returns the new weights
    (pass ``out=weights`` to update in place){'; mom is updated in place' if mom else ''}
    {'; the float32 weight32 is updated in place and returned cast to the weight dtype'
     if mp else ''}.
    """


for _mom in (False, True):
    for _mp in (False, True):
        for _pre in (False, True):
            _name = (("preloaded_" if _pre else "") + "multi_" + ("mp_" if _mp else "")
                     + "sgd_" + ("mom_" if _mom else "") + "update")
            register(OpDef(
                _name, params=_params(_mom, _pre), inputs=_inputs(_mom, _mp, _pre),
                num_outputs=lambda a: a.num_weights,
                output_names=lambda a: tuple(f"output{i}" for i in range(a.num_weights)),
                mutates=mutated_states(len(_group(_mom, _mp))) if (_mom or _mp) else (),
                dispatch=(Dispatch((DNS, "..."), (DNS,), _kernel(_mom, _mp, _pre)),),
                infer_shape=_shape(_mom, _mp, _pre), infer_type=_type(_mom, _mp, _pre),
                doc=_doc(_name, _mom, _mp, _pre)))
