"""Gluon Trainer: applies an Optimizer to a set of Parameters, through a KVStore or not."""
from __future__ import annotations

import numpy as np

from .. import optimizer as opt
from ..base import ParamError, getenv
from ..kvstore import base as _kvbase
from ..kvstore import local as _kvs
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]


def _is_kvstore(kv):
    return isinstance(kv, (_kvs.KVStore, _kvbase.KVStoreBase)) or hasattr(kv, "row_sparse_pull")


def _create_kvstore(kvstore, num_device, arg_arrays):
    """(kvstore or None, update_on_kvstore) as Gluon chooses them (MXNet 1.9.1's rule):
    no store for one device and a local type; ``local`` with a parameter larger than 16M
    elements updates on the workers."""
    update_on_kvstore = getenv("MXNET_UPDATE_ON_KVSTORE", "1") != "0"
    if kvstore is None:
        kv = None
    elif _is_kvstore(kvstore):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = _kvbase.create(kvstore)
            if kvstore == "local":
                max_size = max(int(np.prod(a.shape)) for a in arg_arrays.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore = update_on_kvstore and kv.is_capable("optimizer")
    return kv, update_on_kvstore


def _create_sparse_kvstore(kvstore):
    """A store for row_sparse weights, which are always updated on it."""
    if _is_kvstore(kvstore):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = _kvbase.create(kvstore)
    else:
        raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. The "
                        "type must be KVStore or str.")
    assert kv.is_capable("optimizer"), (
        "KVStore with sparse weight requires optimizer support. However, type(kv) does not "
        "support optimizer. Please consider other kvstore backends (e.g. dist_device) "
        "instead.")
    return kv, True



class _ZeroBatchSize(ParamError, ZeroDivisionError):
    """Trainer.step/update with batch_size 0."""

class Trainer:
    """Apply an Optimizer to Parameters after each backward pass.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
    optimizer : str or Optimizer
    optimizer_params : dict, optional
        Keyword arguments of the optimizer (``learning_rate``, ``wd``...).
    kvstore : str or KVStore or None
        'device' (default), 'local', 'dist_sync', 'dist_async', 'dist_device_sync'...
    compression_params : dict, optional
        Gradient compression of the store.
    update_on_kvstore : bool, optional
        Run the optimizer on the store (default: MXNet's choice for the store type).

    Notes
    -----
    Row-sparse weights live on the store: :meth:`Parameter.row_sparse_data` pulls the rows
    a batch needs, and updates are lazy where the optimizer supports it (only the rows of
    the row_sparse gradient change).

    Examples
    --------
    >>> import sparsym as mx
    >>> net = mx.gluon.nn.Dense(1, in_units=2)
    >>> net.initialize(mx.init.One())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    >>> with mx.autograd.record():
    ...     loss = net(mx.nd.ones((4, 2))).sum()
    >>> loss.backward()
    >>> trainer.step(4)
    >>> net.weight.data().asnumpy().tolist()
    [[0.8999999761581421, 0.8999999761581421]]
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError("First argument must be a list or dict of Parameters, got "
                             f"{type(params)}.")
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError("First argument must be a list or dict of Parameters, got "
                                 f"list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            if param._stype != "default":
                self._contains_sparse_weight = True
            if param._grad_stype != "default":
                self._contains_sparse_grad = True
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        # MXNet 1.9.1's Trainer does not tie update_on_kvstore to optimizer.aggregate_num
        # (its SGD has aggregate_num 4 and trains row_sparse weights on the store)
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            assert contexts is None or contexts == ctx, (
                f"All Parameters must be initialized on the same set of contexts, but "
                f"Parameter {param.name} is initialized on {ctx} while previous Parameters "
                f"are initialized on {contexts}.")
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            assert not optimizer_params, ("optimizer_params must be None if optimizer is an "
                                          "instance of Optimizer instead of str")
            self._optimizer = optimizer
            # not copied: later lr_mult / wd_mult changes of a Parameter take effect
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _init_params(self):
        """Put the parameters waiting for it on the store (deferred ones wait longer)."""
        assert self._kv_initialized, ("Cannot initialize parameters in KVStore when KVStore "
                                      "is not initialized.")
        params_to_init = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    params_to_init.append(param)
                    continue
                param_arrays = param._check_and_get(param._data, list)
                idx = self._param2idx[param.name]
                if param._stype != "default":
                    self._kvstore.init(idx, param_arrays[0])
                else:
                    # MXNet 1.9.1: dense parameters go out by broadcast, which every
                    # KVStoreBase store (teststore included) implements
                    self._kvstore.broadcast(idx, param_arrays[0], param_arrays, priority=-idx)
        self._params_to_init = params_to_init

    def _reset_kvstore(self):
        if self._kvstore and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        """Choose the store and where updates run (MXNet 1.9.1's three cases)."""
        config = self._kvstore_params
        if self._contains_sparse_weight:
            # row_sparse weights: pull the needed rows, push gradients, update on the store
            kvstore, update_on_kvstore = _create_sparse_kvstore(config["kvstore"])
            self._distributed = "dist" in kvstore.type
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are "
                                 "present.")
        elif self._contains_sparse_grad:
            # dense weights, sparse gradients: one machine updates locally, several on the
            # store (pulling a row_sparse gradient from a dist store is not supported)
            arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, _ = _create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is not None:
                if config["update_on_kvstore"] is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                     "sparse gradients are present.")
                update_on_kvstore = config["update_on_kvstore"]
            if kvstore is not None and not _is_kvstore(kvstore):
                raise ValueError(f"Cannot use {type(kvstore)} for multi-device training with "
                                 "sparse gradients")
        else:
            arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, update_on_kvstore = _create_kvstore(config["kvstore"],
                                                         len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            if self._distributed and "async" in kvstore.type:
                update_on_kvstore = True
                if config["update_on_kvstore"] is False:
                    raise ValueError("Please set update_on_kvstore=True when training in async "
                                     "mode.")
            if config["update_on_kvstore"] is not None:
                update_on_kvstore = config["update_on_kvstore"]
            if update_on_kvstore and kvstore is not None and \
                    not kvstore.is_capable("optimizer"):
                if config["update_on_kvstore"]:
                    raise ValueError("Please set update_on_kvstore=False when training with "
                                     f"{type(kvstore)}")
                update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The Optimizer."""
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is "
                              "mutated.")
        self._optimizer.set_learning_rate(lr)

    def _ensure_kvstore(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        """Pull rows ``row_id`` of a row_sparse Parameter from the store into ``out``."""
        self._ensure_kvstore()
        idx = self._param2idx[parameter.name]
        if full_idx and "dist" not in self._kvstore.type:
            assert row_id.size == out.shape[0]
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _batch_scale(self, batch_size, where):
        """``1 / batch_size`` times the optimizer's rescale_grad; a batch size of 0 is a clear
        error (MXNet's is a bare ZeroDivisionError, so it stays one too)."""
        if isinstance(batch_size, (int, float, np.number)) and batch_size == 0:
            raise _ZeroBatchSize(f"Trainer.{where}(batch_size=0): the gradients are divided by "
                                 f"the batch size, which must not be 0 (pass the number of "
                                 f"samples the gradients were summed over)")
        return self._scale / batch_size

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise UserWarning("Possible change in the `batch_size` from previous `step` "
                                  "detected. Optimizer gradient normalizing factor will not "
                                  "change w.r.t new batch_size when update_on_kvstore=True and "
                                  "when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """Reduce gradients over contexts and update, rescaling gradients by 1/batch_size.

        Parameters
        ----------
        batch_size : int
        ignore_stale_grad : bool
            Skip (rather than raise on) Parameters whose gradient no backward wrote since
            the last step.
        """
        self._check_and_rescale_grad(self._batch_scale(batch_size, "step"))
        self._ensure_kvstore()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum the gradients over contexts (and workers): the first half of :meth:`step`,
        for gradient clipping between the two halves."""
        self._ensure_kvstore()
        assert not (self._kvstore and self._update_on_kvstore), (
            "allreduce_grads() when parameters are updated on kvstore is not supported. Try "
            "setting `update_on_kvstore` to False when creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self):
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grad_list = param.list_grad()
            if grad_list[0].stype != "default":
                self._kvstore.push(i, grad_list, priority=-i)
                if param._stype == "default":
                    pull_list = param.list_data() if self._update_on_kvstore else grad_list
                    self._kvstore.pull(i, pull_list, priority=-i,
                                       ignore_sparse=self._distributed)
            elif self._update_on_kvstore:
                self._kvstore.pushpull(i, grad_list, out=param.list_data(), priority=-i)
            else:
                self._kvstore.pushpull(i, grad_list, priority=-i)

    def update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer (the second half of :meth:`step`)."""
        self._ensure_kvstore()
        assert not (self._kvstore and self._update_on_kvstore), (
            "update() when parameters are updated on kvstore is not supported. Try setting "
            "`update_on_kvstore` to False when creating trainer.")
        self._check_and_rescale_grad(self._batch_scale(batch_size, "update"))
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        scaler = getattr(self, "_amp_loss_scaler", None)   # set by contrib.amp.init_trainer
        if scaler is not None and scaler.has_overflow(self._params):
            return   # AMP: a step whose gradients overflowed is skipped
        updates = [[] for _ in self._updaters]
        on_kv = self._kvstore and self._update_on_kvstore
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            datas = param._check_and_get(param._data, list)
            if not ignore_stale_grad:
                for data in datas:
                    if not data._fresh_grad:
                        raise UserWarning(
                            f"Gradient of Parameter `{param.name}` on context {data.context} "
                            "has not been updated by backward since last `step`. This could "
                            "mean a bug in your model that made it only use a subset of the "
                            "Parameters (Blocks) for this iteration. If you are intentionally "
                            "only using a subset, call step with ignore_stale_grad=True to "
                            "suppress this warning and skip updating of Parameters with stale "
                            "gradient")
            if on_kv:
                for data in datas:
                    data._fresh_grad = False
                continue
            for upd, arr, grad in zip(updates, datas, param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    arr._fresh_grad = False
        if not on_kv:
            for updater, upd in zip(self._updaters, updates):
                if upd:
                    idx, grads, weights = zip(*upd)
                    updater(list(idx), list(grads), list(weights))

    def save_states(self, fname):
        """Save the optimizer's states (MXNet-free format, never pickled)."""
        assert self._optimizer is not None
        self._ensure_kvstore()
        if self._update_on_kvstore:
            assert not self._params_to_init, ("Cannot save trainer states when some parameters "
                                              "are not yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            from ..utils import atomic_write
            atomic_write(fname, self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Load states written by :meth:`save_states`."""
        self._ensure_kvstore()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            from ..utils import read_saved
            states = read_saved(fname)
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
