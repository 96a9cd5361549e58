"""Adaptive optimizers: Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax, Nadam, FTML.

Formulas are MXNet 1.9's (its ops and its Python optimizers, quirks included, see each
class). Which rows a row_sparse gradient updates follows MXNet too:

- Adam (``lazy_update=True``), AdaGrad and Ftrl (row_sparse weight) update only the
  gradient's rows, as MXNet's sparse kernels do;
- the others run dense kernels in MXNet (a row_sparse gradient falls back to a full
  update). They take ``lazy_update=False`` here; ``True`` is a sparsym extension that
  updates only the gradient's rows.
"""
from __future__ import annotations

import math

from .optimizer import Optimizer, apply_update, register, state_zeros

__all__ = ["Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam", "FTML"]


def nadam_schedule(t: int, m_schedule: float, beta1: float = 0.9,
                   schedule_decay: float = 0.004) -> tuple[float, float, float, float]:
    """Advance Nadam's momentum schedule for step ``t`` (1-based).

    Returns ``(momentum_t, momentum_t_1, m_schedule, m_schedule_next)``; the caller keeps
    the returned ``m_schedule`` (MXNet keeps one per optimizer, shared by all params).
    """
    mom_t = beta1 * (1.0 - 0.5 * 0.96 ** (t * schedule_decay))
    mom_t1 = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * schedule_decay))
    m_schedule = m_schedule * mom_t
    return mom_t, mom_t1, m_schedule, m_schedule * mom_t1


def _state_stype(weight, lazy):
    return weight.stype if lazy else "default"


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba) with MXNet's bias correction folded into the learning rate.

    ``G = clip(rescale_grad*g + wd*w)``; ``m = b1*m + (1-b1)*G``; ``v = b2*v + (1-b2)*G**2``;
    ``w -= lr*sqrt(1-b2**t)/(1-b1**t) * m/(sqrt(v) + epsilon)``.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1, beta2, epsilon : float
    lazy_update : bool, default True
        With a row_sparse gradient, update only its rows of w, m and v (MXNet's lazy update).

    Examples
    --------
    >>> import sparsym as mx
    >>> opt = mx.optimizer.create('adam', learning_rate=0.1)
    >>> w, g = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    >>> upd = mx.optimizer.get_updater(opt)
    >>> upd(0, g, w)
    >>> round(float(w.asnumpy()[0, 0]), 4)
    0.9
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        stype = _state_stype(weight, self.lazy_update)
        return (state_zeros(weight, stype), state_zeros(weight, stype))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        apply_update("adam", self.lazy_update,
                     weight, grad, state, lr, self.beta1, self.beta2, self.epsilon, wd,
                     self.rescale_grad, self._op_clip())


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.) as MXNet's Python optimizer computes it.

    ``G = clip(rescale_grad*g)``; ``h += G**2``; ``w -= lr*(G/sqrt(h + eps) + wd*w)``.
    A row_sparse gradient updates only its rows (MXNet's ``sparse.adagrad_update``), and
    unlike MXNet, whose sparse op rejects it, ``wd`` is supported there too.

    Parameters
    ----------
    eps : float, default 1e-7
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return state_zeros(weight, weight.stype)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if grad.stype == "row_sparse":
            cg = self._op_clip()  # MXNet's sparse path: `if self.clip_gradient`
        else:
            cg = self.clip_gradient  # dense path: `is not None` (0 clips to 0)
        apply_update("adagrad", True, weight, grad,
                     (state,), lr, self.float_stable_eps, wd, self.rescale_grad, cg,
                     decoupled_wd=True, rule="always")


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton (``centered=False``) or Graves (``centered=True``).

    ``G = clip(rescale_grad*g + wd*w)``. Plain: ``n = g1*n + (1-g1)*G**2``;
    ``w -= lr*G/sqrt(n + epsilon)`` (MXNet 1.9 puts epsilon inside the root). Centered:
    ``g = g1*g + (1-g1)*G``; ``delta = g2*delta - lr*G/sqrt(n - g**2 + epsilon)``;
    ``w += delta``. ``clip_weights`` bounds the weights after the step.

    Parameters
    ----------
    learning_rate : float, default 0.001
    gamma1, gamma2, epsilon : float
    centered : bool
    clip_weights : float, optional
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, lazy_update=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered, self.clip_weights = centered, clip_weights
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        n = 3 if self.centered else 1
        return tuple(state_zeros(weight, weight.stype) for _ in range(n))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        cw = float(self.clip_weights) if self.clip_weights else None
        if self.centered:
            apply_update("rmspropalex",
                         self.lazy_update, weight, grad, state, lr, self.gamma1, self.gamma2,
                         self.epsilon, wd, self.rescale_grad, self._op_clip(), cw)
        else:
            apply_update("rmsprop", self.lazy_update,
                         weight, grad, state, lr, self.gamma1, self.epsilon, wd,
                         self.rescale_grad, self._op_clip(), cw)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler) as MXNet's Python optimizer computes it (no learning rate).

    ``G = clip(rescale_grad*g)``; ``acc_g = rho*acc_g + (1-rho)*G**2``;
    ``d = sqrt(acc_delta + eps)/sqrt(acc_g + eps)*G``; ``acc_delta = rho*acc_delta +
    (1-rho)*d**2``; ``w -= d + wd*w``. MXNet scales the caller's gradient in place; sparsym
    leaves it untouched.

    Parameters
    ----------
    rho, epsilon : float
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, lazy_update=False, **kwargs):
        super().__init__(**kwargs)
        self.rho, self.epsilon, self.lazy_update = rho, epsilon, lazy_update

    def create_state(self, index, weight):
        return (state_zeros(weight, "default"), state_zeros(weight, "default"))

    def update(self, index, weight, grad, state):
        wd = self._get_wd(index)
        self._update_count(index)
        apply_update("adadelta", self.lazy_update, weight,
                     grad, state, self.rho, self.epsilon, wd, self.rescale_grad,
                     self.clip_gradient)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al.).

    ``G = clip(rescale_grad*g)``; ``z += G - (sqrt(n + G**2) - sqrt(n))*w/lr``;
    ``n += G**2``; ``w = (sign(z)*lamda1 - z)/((beta + sqrt(n))/lr + wd) * (|z| > lamda1)``.
    A row_sparse weight with a row_sparse gradient updates only the gradient's rows
    (MXNet's sparse ftrl_update); a dense weight updates every row.

    Parameters
    ----------
    lamda1 : float, default 0.01
    learning_rate : float, default 0.1
    beta : float, default 1
    lazy_update : bool, default True
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.lamda1, self.beta = lamda1, beta
        self.lr = learning_rate
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (state_zeros(weight, weight.stype), state_zeros(weight, weight.stype))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        wd, lr = self._get_wd(index), self._get_lr(index)
        # lazy only when the weight and its states are row_sparse (MXNet's sparse ftrl)
        apply_update("ftrl", self.lazy_update, weight, grad, state, lr, self.lamda1,
                     self.beta, wd, self.rescale_grad, self._op_clip(), rule="all_rsp")


@register
class Adamax(Optimizer):
    """AdaMax (Kingma & Ba, section 7).

    ``G = clip(rescale_grad*g + wd*w)``; ``m = b1*m + (1-b1)*G``; ``u = max(b2*u, |G|)``;
    ``w -= lr/(1 - b1**t) * m/u``.

    Parameters
    ----------
    learning_rate : float, default 0.002
    beta1, beta2 : float
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows.
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, lazy_update=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.lazy_update = beta1, beta2, lazy_update

    def create_state(self, index, weight):
        return (state_zeros(weight, "default"), state_zeros(weight, "default"))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1 ** t
        apply_update("adamax", self.lazy_update, weight,
                     grad, state, lr, self.beta1, self.beta2, wd, self.rescale_grad,
                     self.clip_gradient)


@register
class Nadam(Optimizer):
    """Nadam (Dozat): Adam with Nesterov momentum and a warming momentum schedule.

    ``mom_t = b1*(1 - 0.5*0.96**(t*schedule_decay))``; the product of the ``mom_t``
    (``m_schedule``) is one value per optimizer, shared by all parameters, as in MXNet.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1, beta2, epsilon, schedule_decay : float
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, lazy_update=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0
        self._progress_attrs = ("m_schedule",)
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (state_zeros(weight, "default"), state_zeros(weight, "default"))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        mom_t, mom_t1, self.m_schedule, m_next = nadam_schedule(
            t, self.m_schedule, self.beta1, self.schedule_decay)
        apply_update("nadam", self.lazy_update, weight, grad,
                     state, lr, self.beta1, self.beta2, self.epsilon, wd, self.rescale_grad,
                     self.clip_gradient, t, mom_t, mom_t1, self.m_schedule, m_next)


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok).

    ``G = clip(rescale_grad*g + wd*w)``; ``v = b2*v + (1-b2)*G**2``;
    ``d_t = (1-b1**t)/lr*(sqrt(v/(1-b2**t)) + eps)``; ``z = b1*z + (1-b1)*G -
    (d_t - b1*d)*w``; ``w = -z/d_t``.

    Parameters
    ----------
    beta1, beta2, epsilon : float
    lazy_update : bool, default False
        sparsym extension: with a row_sparse gradient, update only its rows.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, lazy_update=False, **kwargs):
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return tuple(state_zeros(weight, "default") for _ in range(3))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        apply_update("ftml", self.lazy_update, weight, grad,
                     state, lr, self.beta1, self.beta2, self.epsilon, t, wd, self.rescale_grad,
                     self._op_clip())
