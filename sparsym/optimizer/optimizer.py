"""Optimizer base class, registry, Updater and SGD (dense and lazy row_sparse updates)."""
from __future__ import annotations

import functools
import logging
import math
import numbers
import os
from collections.abc import Callable

import numpy as np

from .. import storage as st
from ..base import MXNetError, ParamError
from ..ndarray.ndarray import NDArray, wrap
from ..ops.core.registry import report_fallback
from ..ops.optim.service import lazy_update_applies, run_update, sgd_step

logger = logging.getLogger("sparsym")

__all__ = ["Optimizer", "register", "create", "Updater", "get_updater", "SGD", "ccSGD", "Test"]

_LAZY_WARNED = [False]


def register(klass):
    """Register an optimizer class under its lower-case name."""
    name = klass.__name__.lower()
    if name in Optimizer.opt_registry:
        logger.warning("WARNING: New optimizer %s.%s is overriding existing optimizer %s",
                       klass.__module__, klass.__name__, name)
    Optimizer.opt_registry[name] = klass
    return klass


def create(name, **kwargs):
    """Create an optimizer by name ('sgd', 'adam', ...)."""
    return Optimizer.create_optimizer(name, **kwargs)


def registered_names():
    """The class names of the registered optimizers (what MXNet's state pickles may name)."""
    return {cls.__name__ for cls in Optimizer.opt_registry.values()}


def _real(name, value, allow_none=False):
    """A finite real hyper-parameter as float (None kept when allowed); else ParamError.

    MXNet rejects such values only when an update op parses them, and for some optimizers
    not at all (Adam with learning_rate=nan trains to nan): here they fail at creation.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (numbers.Real, np.floating, np.integer)) and \
            not isinstance(value, (str, bytes)) and math.isfinite(float(value)):
        return value
    expected = "a finite real number" + (" or None" if allow_none else "")
    raise ParamError(f"optimizer: parameter {name!r} must be {expected}, got {value!r}")


def full_rows(arr: NDArray) -> np.ndarray:
    """Dense view of every row of a parameter: dense data, or row_sparse data holding all rows.

    A row_sparse weight missing rows is first completed (missing rows are zeros), which is
    what MXNet requires of row_sparse weights ("all rows present").
    """
    raw = arr._raw
    if isinstance(raw, np.ndarray):
        return raw
    if isinstance(raw, st.RSP):
        n = raw.shape[0]
        if len(raw.indices) != n:
            arr._raw = raw = st.RSP(st.todense(raw), np.arange(n, dtype=np.int64), raw.shape)
        return raw.data
    raise MXNetError(f"optimizer: parameters must be default or row_sparse, got {arr.stype}")


def _has_csr(x) -> bool:
    """Whether an NDArray, or a nested list/tuple of them, holds a csr array."""
    if isinstance(x, NDArray):
        return isinstance(x._raw, st.CSR)
    if isinstance(x, (list, tuple)):
        for v in x:  # a loop, not any(generator): asked of every weight, every step
            if _has_csr(v):
                return True
    return False


def _dense_proxies(x, swaps: list):
    """``x`` with every csr NDArray replaced by a dense copy; (csr, copy) pairs go to swaps."""
    if isinstance(x, NDArray) and isinstance(x._raw, st.CSR):
        proxy = wrap(st.todense(x._raw), x.context)
        swaps.append((x, proxy))
        return proxy
    if isinstance(x, (list, tuple)):
        return type(x)(_dense_proxies(v, swaps) for v in x)
    return x


def _csr_fallback(method):
    """Wrap ``update(index, weight, grad, state)`` so csr weights (and their csr states) are
    updated densely and stored back as csr: MXNet's update operators take csr parameters
    only through their dense storage fallback, which logs MXNet's fallback notice."""
    @functools.wraps(method)
    def update(self, index, weight, grad, state):
        if not _has_csr(weight):
            return method(self, index, weight, grad, state)
        swaps: list = []
        in_stypes = [a.stype for a in (weight, grad) if isinstance(a, NDArray)]
        weight = _dense_proxies(weight, swaps)
        state = _dense_proxies(state, swaps)
        report_fallback(f"{type(self).__name__.lower()}_update", {}, in_stypes, ["csr"])
        method(self, index, weight, grad, state)
        for arr, proxy in swaps:
            arr._raw = st.dense_to_csr(proxy._raw)
    update.csr_fallback = True
    return update


class Optimizer:
    """Base optimizer (MXNet 1.9 semantics).

    Parameters
    ----------
    rescale_grad : float
    param_idx2name : dict of int -> str, optional
    wd : float
    clip_gradient : float, optional
    learning_rate : float, optional (0.01)
    lr_scheduler : LRScheduler, optional
    sym : Symbol, optional (its ``__lr_mult__`` / ``__wd_mult__`` attributes are read)
    begin_num_update : int
    multi_precision : bool
    param_dict : dict, optional
    """

    opt_registry: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # every update entry point takes csr weights through the dense fallback, as MXNet's
        for name in ("update", "update_multi_precision"):
            fn = getattr(cls, name)
            if not getattr(fn, "csr_fallback", False):
                setattr(cls, name, _csr_fallback(fn))

    def __init__(self, rescale_grad=1.0, param_idx2name=None, wd=0.0, clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        rescale_grad = _real("rescale_grad", rescale_grad)
        learning_rate = _real("learning_rate", learning_rate, allow_none=True)
        wd = _real("wd", wd)
        clip_gradient = _real("clip_gradient", clip_gradient, allow_none=True)
        self.rescale_grad = rescale_grad
        self.lr = 0.01 if learning_rate is None else learning_rate
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None:
            if learning_rate is not None and lr_scheduler.base_lr != learning_rate:
                # MXNet prints this notice on stdout (scripts' logs show it there)
                print("learning rate from ``lr_scheduler`` has been overwritten by "
                      "``learning_rate`` in optimizer.")
                lr_scheduler.base_lr = learning_rate
            # any callable of the update count serves (MXNet's custom-schedule tutorial
            # passes plain classes without base_lr)
            self.lr = getattr(lr_scheduler, "base_lr", self.lr)
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise MXNetError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    @staticmethod
    def register(klass):
        """Register ``klass`` under its lower-case name (``mx.optimizer.Optimizer.register``)."""
        return register(klass)

    @staticmethod
    def create_optimizer(name, **kwargs):
        """Instantiate the optimizer registered as ``name`` (case-insensitive)."""
        if not isinstance(name, str):
            raise TypeError(f"optimizer name must be a str, got {type(name).__name__}")
        key = name.lower()
        if key not in Optimizer.opt_registry:
            raise ValueError(f"Cannot find optimizer {name}")
        return Optimizer.opt_registry[key](**kwargs)

    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the "
                              "optimizer only when the LRScheduler of the optimizer is undefined.")
        self.lr = _real("learning_rate", lr)

    def create_state(self, index, weight):
        return None

    def _master_copy(self, weight):
        """float32 master copy of a float16 weight under ``multi_precision``, else None
        (warning, as MXNet, when float16 accumulates without it)."""
        if np.dtype(weight.dtype) != np.float16:
            return None
        if self.multi_precision:
            return wrap(st.astype_raw(weight._raw, np.float32), weight.context)
        import warnings
        warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                      "slow convergence. Consider using multi_precision=True option of the "
                      "optimizer", stacklevel=4)
        return None

    def create_state_multi_precision(self, index, weight):
        """State for ``weight``; float16 weights with multi_precision get a float32 master copy
        as ``(master, state)``."""
        master = self._master_copy(weight)
        if master is not None:
            return (master, self.create_state(index, master))
        return self.create_state(index, weight)

    def _create_state_mp_first_state(self, index, weight):
        """MXNet's SGD/LARS layout under multi_precision: ``(state, master)``."""
        master = self._master_copy(weight)
        if master is not None:
            return (self.create_state(index, master), master)
        return self.create_state(index, weight)

    # wrapped here too, so a subclass that defines neither method (a mixin base, as
    # Keras-MXNet's MXOptimizer) gets no copy of its own that would hide a sibling's update
    @_csr_fallback
    def update(self, index, weight, grad, state):
        raise NotImplementedError()

    @_csr_fallback
    def update_multi_precision(self, index, weight, grad, state):
        """Update; float16 weights with multi_precision update the float32 master copy and
        cast it back."""
        if self.multi_precision and np.dtype(weight.dtype) == np.float16:
            master, inner = state
            update_master(weight, grad, master, lambda w32, g32: self.update(index, w32, g32,
                                                                              inner))
            return
        self.update(index, weight, grad, state)

    def _op_clip(self):
        """Clip bound as MXNet's op-based optimizers pass it (``if self.clip_gradient``)."""
        return float(self.clip_gradient) if self.clip_gradient else None

    def set_lr_scale(self, args_lrscale):
        """[DEPRECATED] use :meth:`set_lr_mult` (MXNet raises the same warning)."""
        raise DeprecationWarning("set_lr_scale is deprecated; use set_lr_mult instead")

    def set_lr_mult(self, args_lr_mult):
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    @staticmethod
    def _no_wd(name):
        """MXNet: no weight decay on names that do not end in _weight or _gamma."""
        return not (name.endswith("_weight") or name.endswith("_gamma"))

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {}
        for n in self.idx2name.values():
            if self._no_wd(n):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            c = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = c
            if c > self.num_update:
                self.num_update = c

    def _get_lrs(self, indices):
        lr = self.learning_rate
        out = []
        for index in indices:
            if index in self.param_dict:
                out.append(lr * self.param_dict[index].lr_mult)
            elif index in self.lr_mult:
                out.append(lr * self.lr_mult[index])
            elif index in self.idx2name:
                out.append(lr * self.lr_mult.get(self.idx2name[index], 1.0))
            else:
                out.append(lr)
        return out

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        out = []
        for index in indices:
            wd = self.wd
            if index in self.param_dict:
                wd *= self.param_dict[index].wd_mult
            elif index in self.wd_mult:
                wd *= self.wd_mult[index]
            elif index in self.idx2name:
                wd *= self.wd_mult.get(self.idx2name[index], 1.0)
            out.append(wd)
        return out

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def _clip(self):
        return -1.0 if self.clip_gradient is None else float(self.clip_gradient)

    def __getstate__(self):
        ret = self.__dict__.copy()
        ret.pop("param_dict", None)
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}

    @staticmethod
    def _warn_lazy():
        if not _LAZY_WARNED[0]:
            _LAZY_WARNED[0] = True
            logger.warning("Optimizer with lazy_update = True detected. Be aware that lazy update "
                           "with row_sparse gradient is different from standard update, and may "
                           "lead to different empirical results. See "
                           "https://mxnet.apache.org/api/python/optimization/optimization.html "
                           "for more details.")


def update_master(weight: NDArray, grad: NDArray, master: NDArray,
                  step: Callable[[NDArray, NDArray], None]) -> None:
    """Run ``step(master, grad as float32)`` on a float32 master copy, then cast it into
    the float16 ``weight`` (MXNet's mp_* update ops)."""
    step(master, wrap(st.astype_raw(grad._raw, np.float32), grad.context))
    weight._assign(st.astype_raw(master._raw, np.float16))


def update_mp_first_state(weight: NDArray, grad: NDArray, state: tuple,
                          step: Callable[..., None]) -> None:
    """``update_master`` for the ``(state, master)`` layout: ``step(master, grad32, state)``."""
    inner, master = state
    update_master(weight, grad, master, lambda w32, g32: step(w32, g32, inner))


def state_zeros(weight: NDArray, stype: str | None = None) -> NDArray:
    """A zero state shaped like ``weight``; row_sparse states hold all rows (lazy updates),
    csr states (of csr weights) store nothing."""
    stype = stype or weight.stype
    dtype = np.dtype(weight.dtype)
    if stype == "csr":
        return wrap(st.zeros_raw("csr", weight.shape, dtype), weight.context)
    if stype == "row_sparse":
        n = weight.shape[0]
        return wrap(st.RSP(np.zeros(weight.shape, dtype), np.arange(n, dtype=np.int64),
                           weight.shape), weight.context)
    return wrap(np.zeros(weight.shape, dtype), weight.context)


def grad_parts(grad: NDArray) -> tuple[bool, np.ndarray | st.RSP]:
    """(is_rsp, raw) for a gradient; csr gradients are densified."""
    raw = grad._raw
    if isinstance(raw, st.RSP):
        return True, raw
    if isinstance(raw, st.CSR):
        return False, st.todense(raw)
    return False, raw


def apply_update(kind: str, lazy_update: bool, weight: NDArray, grad: NDArray, states,
                 *args, rule: str = "param", **kwargs) -> None:
    """One in-place step of the update ``kind`` (``ops/optim/service.py``, ``UPDATES``) on
    a weight and its states; ``args``/``kwargs`` are the kernel's scalars.

    A row_sparse gradient updates only its rows when the lazy-update policy
    (``lazy_update_applies`` with ``rule``) says so; otherwise it is densified and every
    row is updated (missing rows have a zero gradient).
    """
    is_rsp, g = grad_parts(grad)
    w = full_rows(weight)
    lazy = is_rsp and lazy_update_applies(rule, "row_sparse", lazy_update, weight.stype,
                                          [s.stype for s in states])
    raw_states = [full_rows(s) for s in states]
    if lazy and weight.stype == "row_sparse":
        Optimizer._warn_lazy()
    run_update(kind, lazy, w, g, raw_states, *args, **kwargs)


class MultiTensor:
    """Mixin for optimizers that take MXNet's multi-tensor form: ``update(indices, weights,
    grads, states)`` with lists; subclasses implement ``_update_impl``."""

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (list, tuple)) else weight
        self._update_impl(index, weight, grad, state,
                          self.multi_precision and np.dtype(first.dtype) == np.float16)


@register
class SGD(MultiTensor, Optimizer):
    """SGD with momentum and MXNet's lazy row_sparse update.

    ``m = momentum*m - lr*wd*w - lr*clip(rescale_grad*g)``; ``w += m``. With a row_sparse
    gradient and ``lazy_update`` (default), only the gradient's rows of w and m change.
    ``update`` also takes MXNet's multi-tensor form (lists of indices, weights, gradients
    and states); under ``multi_precision`` a float16 weight's state is
    ``(momentum, float32 master)``, MXNet's layout for SGD.
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _real("momentum", momentum)
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    create_state_multi_precision = Optimizer._create_state_mp_first_state

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        stype = weight.stype if self.lazy_update else "default"
        return state_zeros(weight, stype)

    def _update_impl(self, index, weight, grad, state, multi_precision):
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        # MXNet counts every tensor of the call before reading the (scheduled) rates
        self._update_count(index)
        lrs, wds = self._get_lrs(index), self._get_wds(index)
        if multi_precision:
            for w, g, s, lr, wd in zip(weight, grad, state, lrs, wds):
                update_mp_first_state(w, g, s, lambda w32, g32, s0, lr=lr, wd=wd:
                                      self._step(w32, g32, s0, lr, wd))
            return
        cg, mu, rs = self._op_clip(), self.momentum, self.rescale_grad
        # the policy's "param" rule: a row_sparse gradient is lazy when lazy_update is set
        lazy = lazy_update_applies("param", "row_sparse", self.lazy_update, "", ())
        for w, g, s, lr, wd in zip(weight, grad, state, lrs, wds):
            # dense weights and gradients (a Trainer step's usual tensors), and a lazy update
            # of a weight holding all its rows, go straight to the kernel; anything else
            # takes the general path
            wr, gr, sr = w._raw, g._raw, None if s is None else s._raw
            if gr.__class__ is st.RSP and lazy:
                if wr.__class__ is st.RSP and len(wr.indices) == wr.shape[0] and (
                        sr is None or sr.__class__ is st.RSP
                        and len(sr.indices) == sr.shape[0]):
                    self._warn_lazy()
                    if sgd_step(wr.data, gr, None if sr is None else sr.data, True, lr, mu,
                                wd, rs, cg):
                        continue
                # a dense weight with a row_sparse gradient (Gluon's sparse_grad Embedding)
                elif (wr.__class__ is np.ndarray and (sr is None or sr.__class__ is np.ndarray)
                      and sgd_step(wr, gr, sr, True, lr, mu, wd, rs, cg)):
                    continue
            elif sgd_step(wr, gr, sr, False, lr, mu, wd, rs, cg):
                continue
            self._step(w, g, s, lr, wd)

    def _step(self, weight, grad, state, lr, wd):
        is_rsp, g = grad_parts(grad)
        w = full_rows(weight)
        lazy = is_rsp and lazy_update_applies("param", "row_sparse", self.lazy_update,
                                              weight.stype, ())
        if lazy and weight.stype == "row_sparse":
            self._warn_lazy()
        scalars = (wd, self.rescale_grad, self._op_clip())
        if state is None:
            run_update("sgd", lazy, w, g, (), lr, *scalars, std_rsp=True)
        else:
            run_update("sgd_mom", lazy, w, g, (full_rows(state),), lr, self.momentum,
                       *scalars, std_rsp=True)


@register
class ccSGD(SGD):  # noqa: N801  (MXNet's name)
    """[DEPRECATED] Same as :class:`SGD` (kept for MXNet compatibility)."""


@register
class Test(Optimizer):
    """MXNet's test optimizer: ``w += rescale_grad * g``; the state mirrors the weight."""

    def create_state(self, index, weight):
        return wrap(np.zeros(weight.shape, np.dtype(weight.dtype)), weight.context)

    def update(self, index, weight, grad, state):
        w = full_rows(weight)
        is_rsp, g = grad_parts(grad)
        if is_rsp:
            w[g.indices] += self.rescale_grad * g.data
        else:
            w += self.rescale_grad * g
        state._assign(st.todense(weight._raw))


class Updater:
    """Apply an optimizer to (index, grad, weight) triples, keeping per-index states."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        # MXNet: optimizers with aggregate_num > 0 (SGD, LARS, LAMB) get their tensors in
        # groups of that many, by dtype (one multi-tensor update call per group)
        self.aggregate_updates = getattr(optimizer, "aggregate_num", 0) > 0

    def __call__(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            index, grad, weight = [index], [grad], [weight]
        opt = self.optimizer
        if weight:
            # update counts are kept per device, as MXNet's Updater does
            opt._set_current_context(getattr(weight[0].context, "device_id", 0))
        states = self.states
        for i, w in zip(index, weight):
            if i not in states:
                states[i] = opt.create_state_multi_precision(i, w)
                self.states_synced[i] = True
        try:
            self._update(opt, index, grad, weight)
        finally:  # the kernels update weights where they lie: caches of them are stale
            for w in weight:
                st.bump(w._raw)

    def _update(self, opt, index, grad, weight):
        states = self.states
        if not (self.aggregate_updates and len(index) > 1):
            for i, g, w in zip(index, grad, weight):
                opt.update_multi_precision(i, w, g, states[i])
            return
        size = max(1, opt.aggregate_num)
        if len(index) <= size:
            dt = weight[0].dtype
            for w in weight:
                if w.dtype != dt:
                    break
            else:  # one group (a small model's step): no grouping to do
                opt.update_multi_precision(list(index), list(weight), list(grad),
                                           [states[i] for i in index])
                return
        by_type = {}
        for i, g, w in zip(index, grad, weight):
            by_type.setdefault(w.dtype, []).append((i, w, g))
        for group in by_type.values():
            for k in range(0, len(group), size):
                idx, ws, gs = zip(*group[k:k + size])
                opt.update_multi_precision(list(idx), list(ws), list(gs),
                                           [states[i] for i in idx])

    def set_states(self, states, resume_update_counts=False):
        """Restore states from :meth:`get_states` bytes (a JSON + npz container, no pickle).

        Bytes written with ``dump_optimizer=True`` restore the optimizer too, update counts
        included, as MXNet's pickled optimizer does. Without it MXNet's optimizer starts
        its counts (Adam's bias correction, schedules) again; ``resume_update_counts=True``
        continues them from the counts the file records.
        """
        from .states import loads_states, restore_optimizer
        states, opt = loads_states(states, registered_names())
        self.states = states
        self.states_synced = dict.fromkeys(self.states, False)
        if opt is not None and ("attrs" in opt or resume_update_counts):
            restore_optimizer(self.optimizer, opt)
            self.aggregate_updates = getattr(self.optimizer, "aggregate_num", 0) > 0

    def get_states(self, dump_optimizer=False):
        """Serialize states (and optionally optimizer scalars) without pickle."""
        from .states import dumps_states
        if dump_optimizer:
            return dumps_states(self.states, self.optimizer)
        # the update counts are recorded even without the optimizer, for loaders that ask
        # to continue them (set_states(resume_update_counts=True); MXNet restarts them)
        return dumps_states(self.states, progress=self.optimizer)


def get_updater(optimizer):
    """Return an :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)

