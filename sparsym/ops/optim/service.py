"""The update service: the one lazy-update policy and the one door to the update kernels
for the layers above ``ops``.

The update operators (``updates.py``, ``multi_adamw_lamb.py``) and the optimizers
(``sparsym/optimizer``) take their kernels from ``UPDATES`` and decide between a lazy and
a standard update with :func:`lazy_update_applies`. The optimizers never import
``kernels``: a step runs through :func:`run_update`, the fused SGD step of a training loop
through :func:`sgd_step` and a LAMB step through :func:`lamb_step`. The optimizers do
not call the registered update operators themselves because several of their updates
(AdaDelta, Adamax, Nadam, the lazy forms of NAG, RMSProp, Signum, FTML) have no MXNet
operator, and a step of a small tensor costs several times its kernel through ``nd.*``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ... import storage as st
from ...kernels import lamb as klamb
from ...kernels import optim as kopt
from ..core.helpers import RSP


class UpdateKernels(NamedTuple):
    """The in-place kernels of one update rule (``kernels/optim.py`` forms)."""

    dense: Callable
    lazy: Callable | None  # only the row_sparse gradient's rows
    std_rsp: Callable | None  # every row, from a row_sparse gradient (missing rows: zero)


UPDATES: dict[str, UpdateKernels] = {
    "sgd": UpdateKernels(kopt.sgd_update, kopt.sgd_update_lazy, kopt.sgd_update_std_rsp),
    "sgd_mom": UpdateKernels(kopt.sgd_mom_update, kopt.sgd_mom_update_lazy,
                             kopt.sgd_mom_update_std_rsp),
    "nag_mom": UpdateKernels(kopt.nag_mom_update, kopt.nag_mom_update_lazy, None),
    "adam": UpdateKernels(kopt.adam_update, kopt.adam_update_lazy, kopt.adam_update_std_rsp),
    "ftrl": UpdateKernels(kopt.ftrl_update, kopt.ftrl_update_lazy, None),
    "adagrad": UpdateKernels(kopt.adagrad_update, kopt.adagrad_update_lazy, None),
    "rmsprop": UpdateKernels(kopt.rmsprop_update, kopt.rmsprop_update_lazy, None),
    "rmspropalex": UpdateKernels(kopt.rmspropalex_update, kopt.rmspropalex_update_lazy,
                                 None),
    "adadelta": UpdateKernels(kopt.adadelta_update, kopt.adadelta_update_lazy, None),
    "adamax": UpdateKernels(kopt.adamax_update, kopt.adamax_update_lazy, None),
    "nadam": UpdateKernels(kopt.nadam_update, kopt.nadam_update_lazy, None),
    "signsgd": UpdateKernels(kopt.signsgd_update, kopt.signsgd_update_lazy, None),
    "signum": UpdateKernels(kopt.signum_update, kopt.signum_update_lazy, None),
    "ftml": UpdateKernels(kopt.ftml_update, kopt.ftml_update_lazy, None),
}

# How a rule decides on a row_sparse gradient (every other gradient: a standard update)
LAZY_RULES: dict[str, str] = {
    "param": "lazy when lazy_update is set",
    "states": "lazy when lazy_update is set and every state has the weight's stype",
    "all_rsp": "lazy when lazy_update is set and the weight and every state are row_sparse",
    "always": "always lazy",
    "never": "never lazy",
}


def lazy_update_applies(rule: str, grad_stype: str, lazy_update: bool, weight_stype: str,
                        state_stypes: Sequence[str]) -> bool:
    """Whether an update touches only the row_sparse gradient's rows (MXNet's lazy update,
    weight decay included) rather than every row; ``rule`` is a key of ``LAZY_RULES``."""
    if grad_stype != RSP or rule == "never":
        return False
    if rule == "always":
        return True
    if rule not in LAZY_RULES:
        raise ValueError(f"lazy_update_applies: unknown rule {rule!r}, expected one of "
                         f"{sorted(LAZY_RULES)}")
    if not lazy_update:
        return False
    if rule == "states":
        return all(s == weight_stype for s in state_stypes)
    if rule == "all_rsp":
        return weight_stype == RSP and all(s == RSP for s in state_stypes)
    return True


def run_update(kind: str, lazy: bool, w: np.ndarray, g: np.ndarray | st.RSP,
               states: Sequence[np.ndarray], *scalars, std_rsp: bool = False,
               **kwargs) -> None:
    """One in-place step of the update ``kind`` (a key of ``UPDATES``) on raw arrays.

    ``w`` and the states are dense C-contiguous arrays holding every row; ``g`` is an
    array or an RSP. A row_sparse ``g`` takes the lazy kernel when ``lazy``, else the
    standard row_sparse kernel when ``std_rsp`` and the rule has one, else it is densified
    for the dense kernel. The scalars follow the kernel's signature.
    """
    k = UPDATES[kind]
    if isinstance(g, st.RSP):
        if lazy:
            k.lazy(w, g, *states, *scalars, **kwargs)
            return
        if std_rsp and k.std_rsp is not None:
            k.std_rsp(w, g, *states, *scalars, **kwargs)
            return
        g = st.todense(g)
    k.dense(w, g, *states, *scalars, **kwargs)


def sgd_step(w: np.ndarray, g: np.ndarray | st.RSP, mom: np.ndarray | None, lazy: bool,
             lr: float, momentum: float, wd: float, rescale_grad: float,
             clip_gradient: float | None) -> bool:
    """SGD (``mom`` None) or SGD with momentum, dense, or lazy on a row_sparse ``g`` when
    ``lazy``, with the checks inlined (a training step's one kernel call per parameter).
    Returns False, having done nothing, when an operand is not of the common form or a
    row_sparse ``g`` is not ``lazy``: the caller then takes :func:`run_update`."""
    if g.__class__ is st.RSP:
        return lazy and kopt.sgd_lazy_rsp(w, g, mom, lr, momentum, wd, rescale_grad,
                                          clip_gradient)
    return kopt.sgd_dense(w, g, mom, lr, momentum, wd, rescale_grad, clip_gradient)


def lamb_step(w: np.ndarray, g: np.ndarray, mean: np.ndarray, var: np.ndarray, *, t: int,
              lr: float, wd: float, rescale_grad: float, clip_gradient: float | None,
              beta1: float, beta2: float, epsilon: float, bias_correction: bool,
              lower_bound: float, upper_bound: float,
              weight_norm: float | None = None) -> None:
    """Both LAMB phases on ``w`` in place (mean and var too): the direction ``r`` at step
    ``t``, then ``w -= lr * (|w| / |r|) * r``; ``weight_norm`` replaces ``|w|`` in the
    trust ratio, bounds < 0 are unset and the ratio is 1 when a norm is 0."""
    r, r1, r2 = klamb.lamb_direction(w, g, mean, var, t, wd, rescale_grad, clip_gradient,
                                     beta1, beta2, epsilon, bias_correction)
    if weight_norm is not None:
        r1 = weight_norm
    klamb.lamb_apply(w, r, lr, klamb.trust_ratio(r1, r2, lower_bound, upper_bound))
