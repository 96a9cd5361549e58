"""Module: a symbol bound to contexts, with parameters and an optimizer."""
from __future__ import annotations

import logging
import warnings

from .. import storage as st
from ..base import MXNetError, ParamError, ShapeError
from ..context import cpu
from ..initializer import InitDesc, Uniform
from ..ndarray.ndarray import NDArray, wrap
from ..ndarray.sparse import CSRNDArray, RowSparseNDArray
from ..optimizer import optimizer as opt_mod
from .base_module import BaseModule, _as_list, _check_input_names, _StoredIO
from .executor_group import DataParallelExecutorGroup
from .kvstore_util import update_params, update_params_on_kvstore

__all__ = ["Module"]

_ND_CLASSES = frozenset((NDArray, CSRNDArray, RowSparseNDArray))


def _check_batch_arrays(kind, arrays, names):
    """A batch's data (or label) must hold an NDArray for every bound name: fewer would
    leave the previous batch's values in place, and MXNet fails deep inside on a numpy
    array (extra arrays are ignored, as in MXNet)."""
    if arrays.__class__ is list and len(arrays) >= len(names):
        for a in arrays:  # the common case: one class test per array
            if a.__class__ not in _ND_CLASSES and not isinstance(a, NDArray):
                break
        else:
            return
    if not isinstance(arrays, (list, tuple)) or len(arrays) < len(names):
        got = len(arrays) if isinstance(arrays, (list, tuple)) else type(arrays).__name__
        raise ShapeError(f"Module.forward: the batch's {kind} must be a list of "
                         f"{len(names)} NDArrays (one per {kind} name {list(names)}), got {got}")
    for name, a in zip(names, arrays):
        if not isinstance(a, NDArray):
            raise ParamError(f"Module.forward: the batch's {kind} {name!r} must be an NDArray, "
                             f"got {type(a).__module__}.{type(a).__name__}")


def _shapes_differ(arrays, descs):
    """Whether a batch's arrays differ in shape from the bound descriptions."""
    for a, d in zip(arrays, descs):
        if a._raw.shape != d.shape:
            return True
    return False


class Module(_StoredIO, BaseModule):
    """Train and run a Symbol (MXNet 1.9's Module).

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : list of str
    logger : logging.Logger
    context : Context or list of Context (a batch is split across them)
    work_load_list : list of float, optional
    fixed_param_names : list of str, optional (not updated)
    state_names : list of str, optional
    group2ctxs, compression_params : optional

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.sym.Variable('data')
    >>> w = mx.sym.Variable('w', shape=(3, 1))
    >>> net = mx.sym.LinearRegressionOutput(mx.sym.dot(x, w), name='lro')
    >>> mod = mx.mod.Module(net, label_names=['lro_label'])
    >>> mod.bind(data_shapes=[('data', (4, 3))], label_shapes=[('lro_label', (4, 1))])
    >>> mod.init_params(mx.init.Zero())
    >>> sorted(mod.get_params()[0])
    ['w']
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        context = context if context is not None else cpu()
        self._context = _as_list(context)
        self._work_load_list = work_load_list or [1] * len(self._context)
        if len(self._work_load_list) != len(self._context):
            raise MXNetError("work_load_list must have one entry per context")
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names, self._label_names = data_names, label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = self._kvstore = self._update_on_kvstore = self._updater = None
        self._preload_opt_states = None
        self._resume_update_counts = False
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    # ------------------------------------------------------------------ checkpoints
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, resume_update_counts=False, **kwargs):
        """Create a Module from ``prefix-symbol.json`` and ``prefix-%04d.params``.

        With ``load_optimizer_states``, ``init_optimizer`` loads ``prefix-%04d.states``;
        the optimizer's update counts (Adam's bias correction, schedules) restart, as in
        MXNet, unless ``resume_update_counts`` (sparsym only) continues them.
        """
        from ..checkpoint import load_checkpoint
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)
            mod._resume_update_counts = resume_update_counts
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write symbol, parameters (and optimizer states); each file is written atomically."""
        self._symbol.save("%s-symbol.json" % prefix)
        param_name = "%s-%04d.params" % (prefix, epoch)
        self.save_params(param_name)
        logging.getLogger("sparsym").info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.getLogger("sparsym").info('Saved optimizer state to "%s"', state_name)

    # ------------------------------------------------------------------ properties
    @property
    def output_shapes(self):
        return self._exec_group.get_output_shapes()

    # ------------------------------------------------------------------ parameters
    def get_params(self):
        """(arg_params, aux_params) copies synced from the executors."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before get_params")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise parameters: given values first, else ``initializer`` (a variable's own
        ``init`` attribute takes priority)."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params "
                          "call ignored.", stacklevel=2)
            return
        if not self.binded:
            raise MXNetError("call bind before initializing the parameters")
        g = self._exec_group
        if self._arg_params is None or self._aux_params is None:
            args, auxs = self._zero_param_dicts()
            self._arg_params = args if self._arg_params is None else self._arg_params
            self._aux_params = auxs if self._aux_params is None else self._aux_params
        attrs = self._symbol.attr_dict()

        def _impl(name, arr, cache):
            if cache is not None and name in cache:
                src = cache[name]
                if src is not arr:
                    if src.shape != arr.shape:
                        raise MXNetError(f"init_params: {name} has shape {src.shape}, the "
                                         f"module expects {arr.shape}")
                    arr._assign(src._raw)
                return
            if cache is not None and not allow_missing:
                raise RuntimeError(f"{name} is not presented")
            if initializer is not None:
                initializer(InitDesc(name, attrs.get(name, {})), arr)

        for name, arr in sorted(self._arg_params.items()):
            _impl(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        g.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def _zero_param_dicts(self):
        """{name: zeros} for the bound parameters and auxiliary states."""
        g = self._exec_group
        args = {n: wrap(st.zeros_raw(a[0].stype, a[0].shape, a[0].dtype))
                for n, a in zip(g.param_names, g.param_arrays)}
        auxs = {n: wrap(st.zeros_raw(a[0].stype, a[0].shape, a[0].dtype))
                for n, a in zip(g.aux_names, g.aux_arrays)}
        return args, auxs

    def _assign_params(self, arg_params, aux_params, allow_missing, force_init, allow_extra):
        """set_params with allow_missing: copy the given values into the executors."""
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)

    def _sync_params_from_devices(self):
        """Copy parameters from the executors; row_sparse ones from the kvstore, all rows."""
        self._exec_group.get_params(self._arg_params, self._aux_params)
        if self._kvstore and self._update_on_kvstore:
            import numpy as np
            for name, val in sorted(self._arg_params.items()):
                if val.stype == "row_sparse":
                    ids = np.arange(val.shape[0], dtype=np.int64)
                    self._kvstore.row_sparse_pull(name, val, row_ids=wrap(ids))
        self._params_dirty = False

    # ------------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Allocate executors for the given input shapes (list of (name, shape) / DataDesc)."""
        if force_rebind:
            if self.binded and self.params_initialized and self._params_dirty:
                self._sync_params_from_devices()  # keep trained values across the rebind
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if not for_training and inputs_need_grad:
            raise MXNetError("inputs_need_grad requires for_training")
        from ..io.io import DataDesc
        self._data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        # MXNet: bound without labels, label_shapes is None
        self._label_shapes = ([d if isinstance(d, DataDesc) else DataDesc(*d)
                               for d in label_shapes] if label_shapes else None)
        names = [d.name for d in self._data_shapes]
        if sorted(names) != sorted(self._data_names):
            raise ValueError(f"Data provided by data_shapes don't match names specified by "
                             f"data_names ({names} vs. {self._data_names})")
        given = [d.name for d in self._label_shapes or []]
        if sorted(given) != sorted(self._label_names):
            # MXNet only warns here (binding for prediction without labels is common)
            warnings.warn(f"Data provided by label_shapes don't match names specified by "
                          f"label_names ({self._label_shapes or []} vs. {self._label_names})",
                          stacklevel=2)
        shared_group = None
        if shared_module is not None:
            if not (shared_module.binded and shared_module.params_initialized):
                raise MXNetError("shared_module must be bound with initialized parameters")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad, shared_group,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs)
        self._total_exec_bytes = 0
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            self._exec_group.set_params(self._arg_params, self._aux_params)
        elif self._arg_params is None:
            # MXNet's bind creates zero parameter dicts: set_params(allow_missing=True) then
            # init_optimizer (Keras-MXNet's order) reads them back from the executors
            self._arg_params, self._aux_params = self._zero_param_dicts()
        self.binded = True
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind for new input shapes, sharing parameters."""
        from ..io.io import DataDesc
        self._data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        self._label_shapes = ([d if isinstance(d, DataDesc) else DataDesc(*d)
                               for d in label_shapes] if label_shapes else None)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ------------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Create the optimizer (or use an instance) and, for dist stores, the KVStore."""
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        self._check_ready("init_optimizer")
        if self._params_dirty:
            self._sync_params_from_devices()
        from .kvstore_util import create_kvstore, initialize_kvstore
        kv, update_on_kvstore = create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = self._exec_group.batch_size
        if kv and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(len(self._context)):
                idx2name.update({i * len(self._context) + k: n
                                 for i, n in enumerate(self._exec_group.param_names)})
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            if "rescale_grad" not in params:
                params["rescale_grad"] = rescale_grad
            optimizer = opt_mod.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                       **params)
        else:
            if not isinstance(optimizer, opt_mod.Optimizer):
                raise TypeError("optimizer must be a str or an Optimizer instance")
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is not "
                              f"normalized to 1.0/batch_size/num_workers ({optimizer.rescale_grad}"
                              f" vs. {rescale_grad}). Is this intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
                # an optimizer built without names/sym: apply the symbol's lr/wd
                # multipliers and the name rule (wd_mult 0 unless *_weight / *_gamma),
                # keeping multipliers the user set
                user_lr, user_wd = dict(optimizer.lr_mult), dict(optimizer.wd_mult)
                if not optimizer.sym_info:
                    optimizer.sym_info = (self.symbol.attr_dict(), self.symbol.list_arguments())
                optimizer.set_lr_mult(user_lr)
                optimizer.set_wd_mult(user_wd)
        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            initialize_kvstore(kv, self._exec_group.param_arrays, self._arg_params,
                               self._param_names, update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt_mod.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states,
                                       resume_update_counts=self._resume_update_counts)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Share the optimizer, kvstore and updater of another module."""
        if not shared_module.optimizer_initialized:
            raise MXNetError("shared_module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    # ------------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        """Run forward; a batch whose shapes differ from the bound ones reshapes first."""
        self._check_ready("forward")
        g = self._exec_group
        cur = g.data_shapes
        new = data_batch.data
        _check_batch_arrays("data", new, self._data_names)
        label = getattr(data_batch, "label", None)  # MXNet's predict idiom: data only
        if label and self._label_names:
            _check_batch_arrays("label", label, self._label_names)
        if _shapes_differ(new, cur):
            from ..io.io import DataDesc
            if getattr(data_batch, "provide_data", None):
                new_ds = data_batch.provide_data
            else:
                new_ds = [DataDesc(d.name, a.shape, d.dtype, d.layout) for d, a in zip(cur, new)]
            if getattr(data_batch, "provide_label", None):
                new_ls = data_batch.provide_label
            elif getattr(data_batch, "label", None):
                new_ls = [DataDesc(d.name, a.shape, d.dtype, d.layout)
                          for d, a in zip(self._label_shapes or [], data_batch.label)]
            else:
                new_ls = None
            self.reshape(new_ds, new_ls)
            g = self._exec_group
        if self._kvstore and self._update_on_kvstore:
            self._pull_missing_rows(data_batch)
        g.forward(data_batch, is_train)

    def _store_updates_rows(self):
        """True when the kvstore updates the weights and row_sparse ones are pulled."""
        return bool(self._kvstore) and bool(self._update_on_kvstore)

    def _pull_missing_rows(self, data_batch):
        """Pull every row of each row_sparse weight not pulled for ``data_batch``.

        After an update on the kvstore the executors' row_sparse weights are stale, and after
        ``prepare`` they hold only the rows of the prepared batch: a forward over any other
        batch (``score``/``predict`` without ``sparse_row_id_fn``) must not read them.
        """
        if not self._store_updates_rows():
            return
        import numpy as np
        g = self._exec_group
        rows = g.pulled_rows
        for idx, (name, arrays) in enumerate(zip(g.param_names, g.param_arrays)):
            if arrays[0].stype != "row_sparse" or rows.holds(name, data_batch):
                continue
            ids = wrap(np.arange(arrays[0].shape[0], dtype=np.int64))
            self._kvstore.row_sparse_pull(name, arrays, priority=-idx, row_ids=ids)
            rows.complete.add(name)

    def _check_ready(self, what):
        if not (self.binded and self.params_initialized):
            raise MXNetError(f"Module.{what}: call bind and init_params first")

    def backward(self, out_grads=None):
        self._check_ready("backward")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer to every parameter with a gradient."""
        self._check_ready("update")
        if not self.optimizer_initialized:
            raise MXNetError("Module.update: call init_optimizer first")
        self._params_dirty = True
        g = self._exec_group
        if self._update_on_kvstore:
            update_params_on_kvstore(g.param_arrays, g.grad_arrays, self._kvstore,
                                     self._param_names)
            g.pulled_rows.stale(n for n, ws, gs in
                                zip(g.param_names, g.param_arrays, g.grad_arrays)
                                if gs[0] is not None and ws[0].stype == "row_sparse")
            return
        update_params(g.param_arrays, g.grad_arrays, self._updater, len(self._context),
                      self._kvstore, self._param_names)

    def get_outputs(self, merge_multi_context=True):
        self._check_ready("get_outputs")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check_ready("get_input_grads")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """Values of the ``state_names`` inputs (merged over devices by default)."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before get_states")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the ``state_names`` inputs from ``states`` or fill them with ``value``."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind and init_params before set_states")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def save_optimizer_states(self, fname):
        """Save optimizer states (sparsym's pickle-free container; written atomically)."""
        if not self.optimizer_initialized:
            raise MXNetError("init_optimizer before saving its states")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            from ..utils import atomic_write
            atomic_write(fname, self._updater.get_states())

    def load_optimizer_states(self, fname, resume_update_counts=False):
        """Load states saved by :meth:`save_optimizer_states`; the update counts restart
        (MXNet) unless ``resume_update_counts``."""
        if not self.optimizer_initialized:
            raise MXNetError("init_optimizer before loading its states")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname, resume_update_counts=resume_update_counts)
        else:
            from ..utils import read_saved
            self._updater.set_states(read_saved(fname),
                                     resume_update_counts=resume_update_counts)

    def install_monitor(self, mon):
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull the row_sparse parameter rows a batch needs from the kvstore.

        ``sparse_row_id_fn(batch) -> {param_name: row_ids}``. Without a kvstore that
        holds the parameters (single device, or local updates) every row is already in
        place and this warns (MXNet's UserWarning). ``forward`` on a batch that was not
        prepared pulls every row of the row_sparse weights it would otherwise read stale.
        """
        if not self.binded:
            raise MXNetError("call bind before prepare")
        if sparse_row_id_fn is None:
            return
        if not self._store_updates_rows():
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. No need to "
                                      "call sparse_row_id_fn."), stacklevel=2)
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise TypeError("Expected dict output from sparse_row_id_fn")
        g = self._exec_group
        for name, rid in row_ids.items():
            idx = g.param_names.index(name)
            arrays = g.param_arrays[idx]
            if arrays[0].stype != "row_sparse":
                self.logger.warning("%s.stype is not 'row_sparse'. No need to perform "
                                    "row_sparse_pull.", name)
                continue
            self._kvstore.row_sparse_pull(name, arrays, priority=-idx, row_ids=rid)
            g.pulled_rows.stale([name])
            g.pulled_rows.pulled_for[name] = data_batch
