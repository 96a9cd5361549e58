"""Momentum-family optimizers: NAG, Signum, SGLD, DCASGD, LBSGD (MXNet 1.9 formulas)."""
from __future__ import annotations

import logging
import math

import numpy as np

from .. import storage as st
from .optimizer import (
    Optimizer,
    apply_update,
    full_rows,
    grad_parts,
    register,
    state_zeros,
    update_mp_first_state,
)

__all__ = ["NAG", "Signum", "SGLD", "DCASGD", "LBSGD"]


def _dense_grad(grad):
    """Gradient as a dense float64 ndarray (rsp/csr densified)."""
    _, g = grad_parts(grad)
    return st.todense(g).astype(np.float64)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient, as MXNet 1.9's ``nag_mom_update(..., out=weight)``.

    With ``G = clip(rescale_grad*g) + wd*w``: ``w' = w + mu*(mu*m - lr*G) - lr*G`` and
    ``m = mu*m - lr*(clip(rescale_grad*g) + wd*w')`` (MXNet's in-place kernel reads the new
    weight for the momentum). ``momentum=0`` is plain SGD.

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows (MXNet's
        nag_mom_update is dense only).
    """

    def __init__(self, momentum=0.0, lazy_update=False, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    # MXNet's NAG layout under multi_precision: (momentum, float32 master)
    create_state_multi_precision = Optimizer._create_state_mp_first_state

    def create_state(self, index, weight):
        return state_zeros(weight, "default") if self.momentum != 0.0 else None

    def update_multi_precision(self, index, weight, grad, state):
        if self.multi_precision and np.dtype(weight.dtype) == np.float16 \
                and isinstance(state, (tuple, list)):
            update_mp_first_state(weight, grad, state,
                                  lambda w32, g32, mom: self.update(index, w32, g32, mom))
            return
        self.update(index, weight, grad, state)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        cg = self._op_clip()
        if state is None:
            # MXNet calls sgd_update, whose lazy_update defaults to True
            apply_update("sgd", True, weight, grad, (), lr, wd,
                         self.rescale_grad, cg)
            return
        apply_update("nag_mom", self.lazy_update, weight,
                     grad, (state,), lr, self.momentum, wd, self.rescale_grad, cg)


@register
class Signum(Optimizer):
    """Signum / signSGD (Bernstein et al.).

    ``m = mu*m - (1-mu)*(wd*w + clip(rescale_grad*g))``; ``w = (1 - lr*wd_lh)*w +
    lr*sign(m)``. With ``momentum=0``: ``w = (1 - lr*wd)*w - lr*sign(clip(rescale_grad*g))``.

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
    wd_lh : float, default 0 (decoupled weight decay)
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, lazy_update=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum, self.wd_lh, self.lazy_update = momentum, wd_lh, lazy_update

    def create_state(self, index, weight):
        return state_zeros(weight, weight.stype) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        cg = self._op_clip()
        if state is None:
            apply_update("signsgd", self.lazy_update,
                         weight, grad, (), lr, wd, self.rescale_grad, cg)
            return
        mu = self.momentum if self.momentum > 0 else 0.0
        apply_update("signum", self.lazy_update, weight,
                     grad, (state,), lr, mu, wd, self.rescale_grad, cg, self.wd_lh or 0.0)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics.

    ``G = clip(rescale_grad*g)``; ``w += -lr/2*(G + wd*w) + N(0, sqrt(lr))`` (noise drawn
    from sparsym's seeded generator, see ``mx.random.seed``).
    """

    def update(self, index, weight, grad, state):
        from ..random import rng
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = _dense_grad(grad) * self.rescale_grad
        if self.clip_gradient is not None:
            np.clip(g, -self.clip_gradient, self.clip_gradient, out=g)
        w = full_rows(weight)
        step = -lr / 2 * (g + wd * w) + rng().normal(0, math.sqrt(lr), w.shape)
        w += step.astype(w.dtype)


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al.).

    ``G = clip(rescale_grad*g)``; ``m = mu*m - lr*(G + wd*w + lamda*G**2*(w - w_prev))``;
    ``w_prev = w``; ``w += m`` (without momentum, ``m`` is that step alone).

    Parameters
    ----------
    momentum : float, default 0
    lamda : float, default 0.04
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum, self.lamda = momentum, lamda
        self.weight_previous = {}

    def create_state(self, index, weight):
        prev = state_zeros(weight, "default")
        prev._raw[...] = st.todense(weight._raw)
        mom = state_zeros(weight, "default") if self.momentum != 0.0 else None
        return (mom, prev)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = _dense_grad(grad) * self.rescale_grad
        if self.clip_gradient is not None:
            np.clip(g, -self.clip_gradient, self.clip_gradient, out=g)
        mom, prev = state
        w = full_rows(weight)
        p = full_rows(prev)
        step = -lr * (g + wd * w + self.lamda * g * g * (w - p))
        if mom is not None:
            m = full_rows(mom)
            m *= self.momentum
            m += step.astype(m.dtype)
            step = m
        p[...] = w
        w += np.asarray(step, dtype=w.dtype)


@register
class LBSGD(Optimizer):
    """Large-batch SGD: gradients of ``batch_scale`` steps are averaged, then an SGD
    (momentum) step runs with the learning rate scaled by a warmup schedule ('linear',
    'power2', 'sqrt') or by LARS (``warmup_strategy='lars'``), as MXNet 1.9's LBSGD.

    Parameters
    ----------
    momentum : float
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}
    warmup_epochs, batch_scale, updates_per_epoch, begin_epoch, num_epochs : int
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(multi_precision=multi_precision, **kwargs)
        logging.getLogger("sparsym").info(
            "Running Large-Batch SGD Algorithm (Batch_scale=%f, warmup_epochs=%d, "
            "warmup_strategy=%s, updates_per_epoch=%d)", batch_scale, warmup_epochs,
            warmup_strategy, updates_per_epoch)
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.cumgrads = {}

    def create_state(self, index, weight):
        return state_zeros(weight, weight.stype) if self.momentum != 0.0 else None

    def _get_lbmult(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    @staticmethod
    def _get_lars(w, g, wd):
        w2, g2 = float((w * w).sum()), float((g * g).sum())
        return min(100.0, max(0.01, math.sqrt(w2 / (g2 + wd * w2 + 1e-18))))

    def update(self, index, weight, grad, state):
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        # accumulated as NDArrays, as MXNet does: a row_sparse gradient stays row_sparse and
        # so takes sgd(_mom)_update's lazy path (their lazy_update defaults to True)
        c = self.cumgrads.get(index)
        if c and c["num_cums"] > 0:
            c = {"cum_grad": c["cum_grad"] + grad, "num_cums": c["num_cums"] + 1}
        else:
            c = {"cum_grad": grad, "num_cums": self.init_updates + 1}
        self.cumgrads[index] = c
        if c["num_cums"] % self.batch_scale != 0:
            return  # MXNet runs sgd_update with lr=0, wd=0 here: a no-op
        g = c["cum_grad"] / self.batch_scale if self.batch_scale != 1 else c["cum_grad"]
        if self.warmup_strategy == "lars":
            lr *= self._get_lars(full_rows(weight), _dense_grad(g), wd)
        else:
            lr *= self._get_lbmult(c["num_cums"])
        cg = self._op_clip()
        if state is None:
            apply_update("sgd", True, weight, g, (), lr, wd,
                         self.rescale_grad, cg)
        else:
            apply_update("sgd_mom", True, weight, g,
                         (state,), lr, self.momentum, wd, self.rescale_grad, cg)
        c["cum_grad"] = 0
