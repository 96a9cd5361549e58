"""mx.contrib.autograd: MXNet's earlier autograd API (train_section, compute_gradient...),
kept for old code; it runs on :mod:`sparsym.autograd`."""
from __future__ import annotations

import functools

from .. import autograd as _ag
from ..ndarray import zeros_like  # noqa: F401  (MXNet's module exports it)
from ..ndarray.ndarray import NDArray, wrap

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]


def set_is_training(is_train):
    """Turn training mode and recording on or off together; returns the previous state."""
    _ag.set_training(is_train)
    return _ag.set_recording(is_train)


class TrainingStateScope:
    """Scope setting training mode and recording (see :func:`set_is_training`)."""

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section():
    """Scope in which calls are recorded and run in training mode.

    Examples
    --------
    >>> import sparsym as mx
    >>> from sparsym.contrib import autograd
    >>> x = mx.nd.array([1.0, 2.0])
    >>> dx = mx.nd.zeros_like(x)
    >>> autograd.mark_variables([x], [dx])
    >>> with autograd.train_section():
    ...     y = x * 3
    >>> autograd.compute_gradient([y])
    >>> dx.asnumpy().tolist()
    [3.0, 3.0]
    """
    return TrainingStateScope(True)


def test_section():
    """Scope in which calls are not recorded and run in inference mode."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write"):
    """See :func:`sparsym.autograd.mark_variables`."""
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """Gradients of ``outputs`` into the marked variables' buffers."""
    _ag.backward(outputs, out_grads, retain_graph=retain_graph)


def compute_gradient(outputs):
    """Deprecated spelling of :func:`backward`."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so that it returns (gradients of its arguments, its output).

    argnum: the index (or list of indices) of the arguments to differentiate; all by
    default.
    """
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            idx = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in idx]
        for x in variables:
            if not isinstance(x, NDArray):
                raise TypeError("type of autograd input should NDArray.")
        grads = [_zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def _zeros_like(x):
    from .. import storage as st
    return wrap(st.zeros_raw(x.stype, x.shape, x._raw.dtype), x._ctx)


def grad(func, argnum=None):
    """Wrap ``func`` so that it returns the gradients of its arguments."""
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args):
        return grad_with_loss_func(*args)[0]
    return wrapped
