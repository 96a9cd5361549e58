"""BucketingModule: one Module per bucket key, all sharing parameters and memory."""
from __future__ import annotations

import logging

import numpy as np

from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule, _check_input_names
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """A module whose symbol depends on a bucket key (e.g. a sequence length).

    Every bucket's executors are bound with the default bucket's as ``shared_module``: one
    set of parameters, gradients and optimizer states, and memory reused across buckets.

    Parameters
    ----------
    sym_gen : callable
        ``bucket_key -> (symbol, data_names, label_names)``.
    default_bucket_key : hashable
        The largest bucket (bound first; others share its memory).
    logger, context, work_load_list, fixed_param_names, state_names, group2ctxs,
    compression_params : as in :class:`Module`.

    Examples
    --------
    >>> import sparsym as mx
    >>> def sym_gen(n):
    ...     x = mx.sym.Variable('data')
    ...     w = mx.sym.Variable('w', shape=(n, 1))
    ...     out = mx.sym.LinearRegressionOutput(mx.sym.dot(x, w), name='lro')
    ...     return out, ('data',), ('lro_label',)
    >>> mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=3)
    >>> mod.bind(data_shapes=[('data', (2, 3))], label_shapes=[('lro_label', (2, 1))])
    >>> mod.switch_bucket(3, [('data', (2, 3))], [('lro_label', (2, 1))])
    >>> mod._curr_bucket_key
    3
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise MXNetError("BucketingModule needs a default_bucket_key")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets: dict = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, key):
        out = self._sym_gen(key)
        if not (isinstance(out, tuple) and len(out) == 3):
            raise MXNetError("sym_gen must return (symbol, data_names, label_names)")
        return out

    def _new_module(self, symbol, data_names, label_names):
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names, state_names=self._state_names,
                      group2ctxs=self._group2ctxs, compression_params=self._compression_params)

    # ------------------------------------------------------------------ properties
    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._check_bound()
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._check_bound()
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._check_bound()
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        self._check_bound()
        return self._curr_module.symbol

    def _check_bound(self):
        if not self.binded:
            raise MXNetError("BucketingModule: call bind first")

    # ------------------------------------------------------------------ parameters
    def get_params(self):
        """Parameters (shared by every bucket)."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before get_params")
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def _assign_params(self, arg_params, aux_params, allow_missing, force_init, allow_extra):
        """set_params with allow_missing: the current bucket's module takes the values."""
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._check_bound()
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._curr_module.set_states(states, value)

    # ------------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the default bucket; other buckets bind on first use (switch_bucket)."""
        saved = None
        if self.params_initialized:
            if self.binded:
                saved = self.get_params()
            elif self._curr_module is not None and self._curr_module._arg_params is not None:
                saved = (self._curr_module._arg_params, self._curr_module._aux_params or {})
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise MXNetError("shared_module for BucketingModule is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        key = self._default_bucket_key
        if key in self._buckets:
            module = self._buckets[key]
            module.params_initialized = False  # parameters are restored below
            module._arg_params = module._aux_params = None
        else:
            module = self._new_module(*self._call_sym_gen(key))
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = key
        self._buckets[key] = module
        if saved is not None:
            self.params_initialized = False
            self.set_params(*saved)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key`` current, binding it (sharing the default bucket) if new."""
        if not self.binded:
            raise MXNetError("call bind before switching bucket")
        default = self._buckets[self._default_bucket_key]
        module = self._buckets.get(bucket_key)
        if module is None or not module.binded:
            if module is None:
                module = self._new_module(*self._call_sym_gen(bucket_key))
            if not default.params_initialized:
                raise MXNetError("switch_bucket to a new bucket needs initialized parameters "
                                 "(call init_params first)")
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=default, grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # ------------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ------------------------------------------------------------------ computation
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Switch to the batch's bucket, run its prepare, and switch back."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before prepare")
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        """Switch to ``data_batch.bucket_key`` (binding it if new), then forward."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before forward")
        key = data_batch.bucket_key
        if key is None:
            key = self._default_bucket_key
        self.switch_bucket(key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        if not (self.binded and self.params_initialized and self.optimizer_initialized):
            raise MXNetError("call bind, init_params and init_optimizer before update")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, ``prefix-<key>-symbol.json`` per bucket and
        ``prefix.buckets`` (MXNet's layout; integer bucket keys)."""
        from ..ndarray.ndarray import wrap
        from ..ndarray.utils import save
        if not self._buckets:
            raise MXNetError("Empty BucketingModule cannot be saved")
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for key in self._buckets:
            symbol, _, _ = self._call_sym_gen(key)
            symbol.save("%s-%s-symbol.json" % (prefix, key))
        save("%s.buckets" % prefix, wrap(np.array(list(self._buckets), dtype=np.int32)))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from :meth:`save_checkpoint` files (bind it before use)."""
        from ..checkpoint import load_params
        from ..ndarray.utils import load
        from ..symbol import load as load_sym
        if sym_gen is None or default_bucket_key is None:
            raise MXNetError("sym_gen and default_bucket_key are required for loading "
                             "BucketingModule")
        buckets = load("%s.buckets" % prefix)
        keys = [int(k) for k in buckets[0].asnumpy().astype(np.int32)]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in keys:
            _, data_names, label_names = sym_gen(key)
            symbol = load_sym("%s-%s-symbol.json" % (prefix, key))
            mod._buckets[key] = Module(symbol, data_names, label_names, **kwargs)
        if default_bucket_key not in mod._buckets:
            raise MXNetError(f"default bucket {default_bucket_key} is not in the checkpoint "
                             f"(buckets: {keys})")
        mod._curr_module = mod._buckets[default_bucket_key]
        arg, aux = load_params(prefix, epoch)
        mod._curr_module._arg_params, mod._curr_module._aux_params = arg, aux
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from ``{bucket_key: symbol}`` and shared parameters."""
        if sym_dict is None or arg_params is None or aux_params is None or \
                default_bucket_key is None:
            raise MXNetError("load_dict needs sym_dict, arg_params, aux_params and "
                             "default_bucket_key")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, loaded in sym_dict.items():
            _, data_names, label_names = sym_gen(default_bucket_key)
            mod._buckets[key] = Module(loaded, data_names, label_names, **kwargs)
        mod._curr_module = mod._buckets[default_bucket_key]
        mod._curr_module._arg_params, mod._curr_module._aux_params = arg_params, aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
