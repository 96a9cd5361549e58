"""Layer-wise adaptive optimizers for large batches: LARS and LAMB (MXNet 1.9 formulas).

Both scale each tensor's step by a trust ratio of norms. They take MXNet's multi-tensor
form too: ``update(indices, weights, grads, states)`` with lists, as Gluon's Trainer and
MXNet's aggregated updates call them.
"""
from __future__ import annotations

import os

import numpy as np

from .. import storage as st
from ..ops.optim.service import lamb_step, lazy_update_applies, run_update
from .optimizer import (
    MultiTensor,
    Optimizer,
    _real,
    full_rows,
    grad_parts,
    register,
    state_zeros,
    update_master,
    update_mp_first_state,
)

__all__ = ["LARS", "LAMB"]


def _as_lists(index, weight, grad, state):
    """(indices, weights, grads, states) lists from one tensor or MXNet's list form."""
    if isinstance(index, (list, tuple)):
        return list(index), list(weight), list(grad), list(state)
    return [index], [weight], [grad], [state]


def _sum_sq(raw):
    """Sum of squares in float32 (MXNet's multi_sum_sq / norm accumulate in float)."""
    x = st.todense(raw).astype(np.float32, copy=False)
    return float(np.dot(x.ravel(), x.ravel()))


@register
class LARS(MultiTensor, Optimizer):
    """LARS (You et al., "Large Batch Training of Convolutional Networks").

    SGD with momentum whose learning rate is scaled per tensor, except for tensors whose
    name ends in ``gamma``, ``beta`` or ``bias``:
    ``lr_layer = lr * eta * |w| / (rescale_grad * |g| + wd * |w| + eps)`` when both norms
    are positive (``|g|`` is the raw gradient's norm, before clipping). With
    ``momentum_correction`` the momentum is scaled by ``lr / previous lr`` when a scheduler
    changes the learning rate (Goyal et al.).

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool, default True
        Lazy updates for row_sparse weight and gradient, as SGD.
    eta : float, default 0.001
        LARS coefficient.
    eps : float, default 0
    momentum_correction : bool, default True

    Examples
    --------
    >>> import sparsym as mx
    >>> opt = mx.optimizer.create('lars', learning_rate=0.1, eta=0.5)
    >>> w, g = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> print(w.asnumpy())   # lr * eta * |w| / |g| = 0.05
    [[0.95 0.95]
     [0.95 0.95]]
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _real("momentum", momentum)
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = _real("eta", eta)
        self.eps = _real("eps", eps)
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        # the learning rates before and after this step, for the momentum correction
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.learning_rate
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return super()._get_lrs(indices)

    @staticmethod
    def _no_wd(name):
        """MXNet's LARS: no weight decay on names that do not end in _weight (_gamma too)."""
        return not name.endswith("_weight")

    create_state_multi_precision = Optimizer._create_state_mp_first_state

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return state_zeros(weight, weight.stype if self.lazy_update else "default")

    def _skips_lars(self, index):
        name = self.idx2name.get(index, str(index))
        return name.endswith(("gamma", "beta", "bias"))

    def _lars_lr(self, index, weight, grad, lr, wd):
        if self._skips_lars(index):
            return lr
        w2 = _sum_sq(weight._raw)
        g2 = _sum_sq(grad_parts(grad)[1]) * float(self.rescale_grad) ** 2
        if w2 > 0.0 and g2 > 0.0:
            wn, gn = np.sqrt(w2), np.sqrt(g2)
            return lr * self.eta * wn / (gn + wd * wn + self.eps)
        return lr

    def _update_impl(self, index, weight, grad, state, multi_precision):
        indices, weights, grads, states = _as_lists(index, weight, grad, state)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        mom = self.momentum
        if mom > 0 and self.momentum_correction and self.last_lr != 0:
            mom = self.momentum * (self.cur_lr / self.last_lr)
        cg = self._op_clip()
        for i, w, g, s, lr, wd in zip(indices, weights, grads, states, lrs, wds):
            lr = self._lars_lr(i, w, g, lr, wd)
            if multi_precision:
                update_mp_first_state(w, g, s, lambda w32, g32, s0, lr=lr, wd=wd:
                                      self._sgd_step(w32, g32, s0, lr, wd, mom, cg))
            else:
                self._sgd_step(w, g, s, lr, wd, mom, cg)

    def _sgd_step(self, weight, grad, mom_state, lr, wd, mom, cg):
        is_rsp, g = grad_parts(grad)
        w = full_rows(weight)
        lazy = is_rsp and lazy_update_applies("param", "row_sparse", self.lazy_update,
                                              weight.stype, ())
        if mom_state is None or mom <= 0:
            run_update("sgd", lazy, w, g, (), lr, wd, self.rescale_grad, cg)
        else:
            run_update("sgd_mom", lazy, w, g, (full_rows(mom_state),), lr, mom, wd,
                       self.rescale_grad, cg)


@register
class LAMB(MultiTensor, Optimizer):
    """LAMB (You et al., "Large Batch Optimization for Deep Learning").

    ``G = clip(rescale_grad*g)``; ``m = b1*m + (1-b1)*G``; ``v = b2*v + (1-b2)*G**2``;
    with ``bias_correction`` m and v are divided by ``1 - b**t``;
    ``r = m/(sqrt(v) + epsilon) + wd*w``; ``w -= lr * (|w| / |r|) * r``, where ``|w|`` is
    clamped to ``[lower_bound, upper_bound]`` when they are given and the ratio is 1 when
    either norm is 0.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1, beta2 : float, default 0.9, 0.999
    epsilon : float, default 1e-6
    lower_bound, upper_bound : float, optional
    bias_correction : bool, default True

    Examples
    --------
    >>> import sparsym as mx
    >>> opt = mx.optimizer.LAMB(learning_rate=0.1)
    >>> w, g = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> print(w.asnumpy())   # r = 1, ratio |w|/|r| = 1
    [[0.9 0.9]
     [0.9 0.9]]
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _real("beta1", beta1)
        self.beta2 = _real("beta2", beta2)
        self.epsilon = _real("epsilon", epsilon)
        self.lower_bound = _real("lower_bound", lower_bound, allow_none=True)
        self.upper_bound = _real("upper_bound", upper_bound, allow_none=True)
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE",
                                                          "45"))))

    def create_state(self, index, weight):
        return (state_zeros(weight, weight.stype), state_zeros(weight, weight.stype))

    def _update_impl(self, index, weight, grad, state, multi_precision):
        for i, w, g, s in zip(*_as_lists(index, weight, grad, state)):
            self._update_count(i)
            lr, wd = self._get_lr(i), self._get_wd(i)
            t = self._index_update_count[i]
            if multi_precision:
                master, (mean, var) = s
                update_master(w, g, master, lambda w32, g32, mean=mean, var=var, lr=lr, wd=wd,
                              t=t: self._step(full_rows(w32), g32, mean, var, lr, wd, t))
            else:
                mean, var = s
                self._step(full_rows(w), g, mean, var, lr, wd, t)

    def _step(self, w, grad, mean, var, lr, wd, t):
        """Both phases of MXNet's lamb_update on the dense array ``w`` (updated in place)."""
        g = st.todense(grad_parts(grad)[1])
        # MXNet passes a bound to the update only when it is truthy (0 means unset)
        lamb_step(w, g, full_rows(mean), full_rows(var), t=t, lr=lr, wd=wd,
                  rescale_grad=self.rescale_grad, clip_gradient=self.clip_gradient or None,
                  beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                  bias_correction=self.bias_correction,
                  lower_bound=self.lower_bound if self.lower_bound else -1.0,
                  upper_bound=self.upper_bound if self.upper_bound else -1.0)
