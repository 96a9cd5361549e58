"""SequentialModule: a chain of modules, each fed the outputs of the previous one."""
from __future__ import annotations

import copy
import logging

from ..base import MXNetError
from ..initializer import Uniform
from ..io.io import DataDesc
from .base_module import BaseModule

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """Chain modules: module i+1's data are module i's outputs (MXNet's SequentialModule).

    ``add(module, take_labels=True)`` marks a module that receives the batch's labels (and
    updates the metric); ``auto_wiring=True`` renames the previous outputs to the module's
    data names.

    Examples
    --------
    >>> import sparsym as mx
    >>> seq = mx.mod.SequentialModule()
    >>> net1 = mx.sym.relu(mx.sym.Variable('data'))
    >>> net2 = mx.sym.LinearRegressionOutput(mx.sym.Variable('x'), name='lro')
    >>> _ = seq.add(mx.mod.Module(net1, label_names=None))
    >>> _ = seq.add(mx.mod.Module(net2, data_names=['x'], label_names=['lro_label']),
    ...             take_labels=True, auto_wiring=True)
    >>> seq.bind(data_shapes=[('data', (2, 3))], label_shapes=[('lro_label', (2, 3))])
    >>> seq.output_shapes
    [('lro_output', (2, 3))]
    """

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append ``module`` (meta keys: take_labels, auto_wiring); returns self."""
        for key in kwargs:
            if key not in self._meta_keys:
                raise MXNetError(f'Unknown meta "{key}", a typo?')
        self._modules.append(module)
        self._metas.append(kwargs)
        # a new module invalidates the chain's state
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    # ------------------------------------------------------------------ properties
    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._check_bound()
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._check_bound()
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check_bound()
        return self._modules[-1].output_shapes

    @property
    def symbol(self):
        return self._modules[-1].symbol if self._modules else None

    def _check_bound(self):
        if not self.binded:
            raise MXNetError("SequentialModule: call bind first")

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    # ------------------------------------------------------------------ parameters
    def get_params(self):
        """Merged (arg_params, aux_params) of all modules."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before get_params")
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise every module (each takes its own names from the dicts)."""
        if self.params_initialized and not force_init:
            return
        self._check_bound()
        for module in self._modules:
            # each module sees the shared dicts, which hold the other modules' names too
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=True)
        if not allow_extra:
            known = set()
            for module in self._modules:
                a, x = module.get_params()
                known |= set(a) | set(x)
            for given in (arg_params or {}), (aux_params or {}):
                for k in given:
                    if k not in known:
                        raise ValueError(f"Found extra parameter {k!r} not in any module "
                                         "(pass allow_extra=True to ignore it)")
        seen_arg, seen_aux = {}, {}
        for i, module in enumerate(self._modules):
            a, x = module.get_params()
            for names, seen in ((a, seen_arg), (x, seen_aux)):
                for name in names:
                    if name in seen:
                        raise MXNetError(f'Duplicated parameter names: name "{name}" in layer '
                                         f"{i} ({type(module).__name__}) is already used in "
                                         f"layer {seen[name]}.")
                    seen[name] = i
        self.params_initialized = True

    # ------------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind each module on the previous module's output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXNetError("inputs_need_grad requires for_training")
        if shared_module is not None:
            raise MXNetError("Shared module is not supported")
        if not self._modules:
            raise MXNetError("Attempting to bind an empty SequentialModule")
        self.binded = True
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, module in enumerate(self._modules):
            my_label_shapes = None
            if self._takes_labels(i):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i > 0))
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(my_data_shapes):
                    raise MXNetError(f"auto_wiring: module {i} takes {len(names)} inputs, the "
                                     f"previous module gives {len(my_data_shapes)}")
                my_data_shapes = [(n, tuple(d[1])) for n, d in zip(names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training, inputs_need_grad=my_inputs_need_grad,
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # ------------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        """Forward through the chain; each module's outputs become the next one's data."""
        self._check_bound()
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            nxt = self._modules[i + 1]
            names = (nxt.data_names if self._metas[i + 1].get(self.META_AUTO_WIRING, False)
                     else [x[0] for x in module.output_shapes])
            data_batch.provide_data = [DataDesc(n, x.shape) for n, x in
                                       zip(names, data_batch.data)]

    def backward(self, out_grads=None):
        """Backward from the last module; input gradients flow to the previous one."""
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        for module in self._modules:
            module.install_monitor(mon)
