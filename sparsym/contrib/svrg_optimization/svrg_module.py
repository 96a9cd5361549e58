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
from ...optimizer import optimizer as opt_mod
from .svrg_optimizer import _SVRGOptimizer

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
        self._ctx_len = len(self._context)
        self._param_dict = None

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
        """Install an :class:`_SVRGOptimizer` wrapping ``optimizer`` (``<name>_full`` kvstore
        keys hold the full gradients and are assigned, as MXNet's), and zero the full
        gradients (``_param_dict``: one ``{name: full gradient}`` per device)."""
        if kvstore is not None and "dist" in str(getattr(kvstore, "type", kvstore)):
            raise NotImplementedError("SVRGModule on a distributed kvstore is not supported "
                                      "by sparsym: train it with kvstore='local'")
        self._param_dict = [{name: nd.zeros(arr.shape, ctx=ctx)
                             for name, arr in self.get_params()[0].items()}
                            for ctx in self._context]
        wrapped = self._create_optimizer(optimizer, kvstore, optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=wrapped,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            for name in self._exec_group.param_names:
                self._kvstore.init(name + "_full", nd.zeros(self._arg_params[name].shape))

    def _create_optimizer(self, default_opt, kvstore, optimizer_params):
        """The _SVRGOptimizer: Module's rescale_grad and indices, plus ``<name>_full``."""
        from ...module.kvstore_util import create_kvstore
        kv, update_on_kvstore = create_kvstore(kvstore, self._ctx_len, self._arg_params)
        batch_size = self._exec_group.batch_size
        if kv and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        names = self._exec_group.param_names
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * self._ctx_len + k: n for k in range(self._ctx_len)
                        for i, n in enumerate(names)}
        for name in self._param_dict[0]:
            idx2name[max(idx2name, default=-1) + 1] = name + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        return opt_mod.create(_SVRGOptimizer.__name__, default_optimizer=default_opt,
                              param_idx2name=idx2name, **params)

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace each gradient by its variance-reduced form
        ``g(w) - g(w_snapshot) + full_gradient``, then update."""
        if self._param_dict is None:
            raise RuntimeError("SVRGModule.update: call init_optimizer first")
        aux_grads = self._mod_aux._exec_group.grad_arrays
        for name, grads, snap in zip(self._exec_group.param_names,
                                     self._exec_group.grad_arrays, aux_grads):
            for ctx, (grad, g_snap) in enumerate(zip(grads, snap)):
                if grad is None:
                    continue
                grad -= g_snap
                grad += self._param_dict[ctx][name]
        super().update()

    def update_full_grads(self, train_data):
        """Snapshot the weights and average the gradient over one pass of ``train_data``
        at the snapshot (a padded last batch counts for its real rows); with a kvstore the
        devices' averages are combined there (``<name>_full`` keys).

        MXNet 1.9 adds each pass onto the previous full gradient (it never clears
        ``_param_dict``); here each snapshot's full gradient starts from zero."""
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        names = self._exec_group.param_names
        sums = [{n: nd.zeros(self._param_dict[c][n].shape, ctx=self._context[c]) for n in names}
                for c in range(self._ctx_len)]
        train_data.reset()
        nbatch, pad = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            for name, grads in zip(names, self._mod_aux._exec_group.grad_arrays):
                for c, grad in enumerate(grads):
                    if grad is not None:
                        sums[c][name] += grad
            nbatch += 1
            pad = batch.pad or 0
        train_data.reset()
        batches = nbatch - pad / train_data.batch_size
        if batches <= 0:
            raise ValueError("SVRGModule.update_full_grads: train_data gave no batch")
        for c in range(self._ctx_len):
            for name in names:
                self._param_dict[c][name] = sums[c][name] / batches
        if self._kvstore:
            for name in names:
                self._accumulate_kvstore(name, [self._param_dict[c][name]
                                                for c in range(self._ctx_len)])

    def _accumulate_kvstore(self, key, value):
        """Sum the devices' full gradients ``value`` in the kvstore (``<key>_full``), pull
        the sum back into ``value`` and give each device its average."""
        self._kvstore.push(key + "_full", value)
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        """Each device's full gradient: the kvstore's sum over the devices divided by their
        number."""
        for c in range(self._ctx_len):
            self._param_dict[c][key] = value[c] / self._ctx_len

    def _fit_epoch_begin(self, epoch, train_data):
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
