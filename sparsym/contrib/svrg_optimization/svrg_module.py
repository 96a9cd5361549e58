"""SVRGModule: a Module whose updates use variance-reduced gradients.

Every ``update_freq`` epochs the module snapshots its weights and computes the full
gradient over the training data at the snapshot. Each step then applies
``g(w) - g(w_snapshot) + full_gradient`` for the batch, where the snapshot's gradient comes
from a second module bound to the same inputs.
"""
from __future__ import annotations

import logging

from ... import ndarray as nd
from ...context import cpu
from ...module import Module

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """Module trained with SVRG.

    Parameters
    ----------
    symbol, data_names, label_names, logger, context, work_load_list, fixed_param_names,
    state_names, group2ctxs, compression_params
        As :class:`~sparsym.module.Module`'s.
    update_freq : int
        Epochs between full-gradient snapshots (positive).
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None, update_freq=None):
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the "
                            "frequency for calculating full gradients")
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to "
                             "represent the frequency for calculating full gradients")
        super().__init__(symbol, data_names=data_names, label_names=label_names,
                         logger=logger, context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names=data_names, label_names=label_names,
                               logger=logger, context=context, work_load_list=work_load_list,
                               fixed_param_names=fixed_param_names, state_names=state_names,
                               group2ctxs=group2ctxs, compression_params=compression_params)
        self._full_grads = None

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, None, grad_req)

    def reshape(self, data_shapes, label_shapes=None):
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        if kvstore is not None and "dist" in str(getattr(kvstore, "type", kvstore)):
            raise NotImplementedError("SVRGModule on a distributed kvstore is not supported "
                                      "by sparsym: train it with kvstore='local'")
        super().init_optimizer(kvstore=kvstore, optimizer=optimizer,
                               optimizer_params=optimizer_params, force_init=force_init)
        self._full_grads = [[nd.zeros(w.shape, ctx=w.context) for w in per_ctx]
                            for per_ctx in self._exec_group.param_arrays]

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace each gradient by its variance-reduced form, then update."""
        if self._full_grads is None:
            raise RuntimeError("SVRGModule.update: call update_full_grads (fit does it every "
                               "update_freq epochs) after init_optimizer")
        for i, per_ctx in enumerate(self._exec_group.grad_arrays):
            for k, grad in enumerate(per_ctx):
                if grad is None:
                    continue
                grad -= self._mod_aux._exec_group.grad_arrays[i][k]
                grad += self._full_grads[i][k]
        super().update()

    def update_full_grads(self, train_data):
        """Snapshot the weights and average the gradient over one pass of ``train_data``
        at the snapshot (a padded last batch counts for its real rows)."""
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        sums = [[nd.zeros(w.shape, ctx=w.context) for w in per_ctx]
                for per_ctx in self._exec_group.param_arrays]
        train_data.reset()
        nbatch, pad = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            for i, per_ctx in enumerate(self._mod_aux._exec_group.grad_arrays):
                for k, grad in enumerate(per_ctx):
                    if grad is not None:
                        sums[i][k] += grad
            nbatch += 1
            pad = batch.pad or 0
        train_data.reset()
        batches = nbatch - pad / train_data.batch_size
        if batches <= 0:
            raise ValueError("SVRGModule.update_full_grads: train_data gave no batch")
        self._full_grads = [[s / batches for s in per_ctx] for per_ctx in sums]

    def _fit_epoch_begin(self, epoch, train_data):
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
