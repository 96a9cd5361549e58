"""Modules written in Python: PythonModule (no parameters) and PythonLossModule."""
from __future__ import annotations

import logging

import numpy as np

from ..base import MXNetError
from ..initializer import Uniform
from ..ndarray.ndarray import NDArray, wrap
from .base_module import BaseModule, _StoredIO

__all__ = ["PythonModule", "PythonLossModule"]


def _names(descs):
    return [d[0] for d in descs]


class PythonModule(_StoredIO, BaseModule):
    """A module computed in Python, with no parameters and no optimizer.

    Subclasses implement ``_compute_output_shapes``, ``forward``, ``backward``,
    ``get_outputs`` and ``get_input_grads``. Parameter and optimizer calls are accepted and
    do nothing, so such a module can sit in a :class:`SequentialModule` next to symbolic
    ones (typically as its loss).

    Parameters
    ----------
    data_names : list of str
    label_names : list of str or None
    output_names : list of str
    logger : Logger
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = None if label_names is None else list(label_names)
        self._output_names = list(output_names)
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        """No parameters: ``({}, {})``."""
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """No parameters to initialize."""
        self.params_initialized = True

    def update(self):
        """No parameters to update."""

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """No optimizer is needed."""
        self.optimizer_initialized = True

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Evaluate the outputs against ``labels`` (skipped when bound without labels)."""
        if self._label_shapes is None:
            return  # a module that takes no labels has nothing to score
        if pre_sliced:
            raise MXNetError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Record the input shapes and compute the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise MXNetError(f"Python module only support write gradient, got "
                             f"grad_req={grad_req!r}")
        if _names(data_shapes) != self._data_names:
            raise MXNetError(f"{type(self).__name__}: data_shapes name {_names(data_shapes)} "
                             f"but the module's data_names are {self._data_names}")
        if label_shapes is not None:
            if self._label_names is None or _names(label_shapes) != self._label_names:
                raise MXNetError(f"{type(self).__name__}: label_shapes name "
                                 f"{_names(label_shapes)} but the module's label_names are "
                                 f"{self._label_names}")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(name, shape)]`` of the outputs, from ``self._data_shapes``."""
        raise NotImplementedError()


class PythonLossModule(PythonModule):
    """A loss computed in Python: passes its scores through and back-propagates
    ``grad_func(scores, labels)``.

    Parameters
    ----------
    name : str
        The output is named ``name + '_output'``.
    data_names, label_names : tuple of str
        One of each.
    logger : Logger
    grad_func : callable, optional
        ``grad_func(scores, labels)`` returns the gradient of the loss with respect to
        the scores (an NDArray or anything ``mx.nd.array`` takes).

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> loss = mx.mod.PythonLossModule(grad_func=lambda s, l: s - l.reshape((-1, 1)))
    >>> loss.bind([('data', (2, 1))], [('softmax_label', (2,))])
    >>> loss.forward(mx.io.DataBatch([mx.nd.array([[1.], [3.]])], [mx.nd.array([0., 1.])]))
    >>> loss.backward()
    >>> loss.get_input_grads()[0].asnumpy().ravel().tolist()
    [1.0, 2.0]
    """

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        if len(self._data_names) != 1 or len(self._label_names) != 1:
            raise MXNetError(f"PythonLossModule takes one data and one label, got "
                             f"data_names={list(data_names)}, label_names={list(label_names)}")
        if grad_func is not None and not callable(grad_func):
            raise TypeError(f"PythonLossModule: grad_func must be callable, got "
                            f"{type(grad_func).__name__}")
        self._name = name
        self._grad_func = grad_func
        self._scores = None
        self._labels = None
        self._scores_grad = None

    def _compute_output_shapes(self):
        return [(self._name + "_output", tuple(self._data_shapes[0][1]))]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        if not merge_multi_context:
            raise MXNetError("PythonLossModule: only merge_multi_context=True is supported")
        return [self._scores]

    def backward(self, out_grads=None):
        """Compute the scores' gradient with ``grad_func``."""
        if out_grads is not None:
            raise MXNetError("For a loss module, out_grads should be None")
        if not self.for_training:
            raise MXNetError("PythonLossModule.backward: the module is not bound for training")
        self._backward_impl()

    def _backward_impl(self):
        """The scores' gradient; subclasses without ``grad_func`` override this."""
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule needs grad_func (or a subclass "
                                      "overriding _backward_impl)")
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, NDArray):
            grad = wrap(np.asarray(grad, dtype=np.float32))
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        if not merge_multi_context:
            raise MXNetError("PythonLossModule: only merge_multi_context=True is supported")
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError("PythonLossModule has no executor to monitor")
