"""Gluon parameters: Parameter, Constant and ParameterDict (MXNet 1.9.1's mx.gluon)."""
from __future__ import annotations

import re
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer, ndarray
from .. import symbol as _symbol
from ..context import Context, cpu, current_context
from ..ndarray.ndarray import NDArray
from ..util import is_np_shape

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]

tensor_types = (_symbol.Symbol, NDArray)
_STYPES = ("default", "row_sparse", "csr")


class DeferredInitializationError(Exception):
    """A Parameter's shape is still unknown: initialization waits for the first forward."""


def shape_is_known(shape):
    """True when ``shape`` has no unknown (0 or -1) dimension."""
    if shape is None:
        return False
    return all(d not in (0, -1) and d is not None for d in shape)


def _brief_print_list(lst, limit=7):
    """'a', 'b', ..., 'z' with at most ``limit`` names."""
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ", ..., " + \
            _brief_print_list(lst[-limit // 2:], limit)
    return ", ".join([f"'{str(i)}'" for i in lst])


def _indent(s, num_spaces):
    """Indent every line of ``s`` but the first."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


class Parameter:
    """A weight of a Block: data and gradient arrays on one or more contexts.

    Parameters
    ----------
    name : str
    grad_req : {'write', 'add', 'null'}
    shape : tuple of int, optional
        0 marks a dimension inferred at the first forward (deferred initialization).
    dtype : numpy dtype or str
    lr_mult, wd_mult : float
        Multipliers of the learning rate and weight decay.
    init : Initializer or str, optional
    allow_deferred_init : bool
    differentiable : bool
        False forces ``grad_req='null'``.
    stype, grad_stype : {'default', 'row_sparse', 'csr'}
        Storage of the data and of the gradient.

    Examples
    --------
    >>> import sparsym as mx
    >>> p = mx.gluon.Parameter('weight', shape=(2, 3))
    >>> p.initialize(init='zeros')
    >>> p.data().shape
    (2, 3)
    """

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        assert grad_stype in _STYPES, (
            f"grad_stype for Parameter '{name}' must be one of 'default', 'row_sparse', or "
            f"'csr', but got '{grad_stype}'")
        assert stype in _STYPES, (
            f"stype for Parameter '{name}' must be one of 'default', 'row_sparse', or 'csr', "
            f"but got '{stype}'")
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # ------------------------------------------------------------------ attributes
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        assert req in ("write", "add", "null"), \
            f"grad_req must be one of 'write', 'add', or 'null', but got '{req}'"
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [i.detach() for i in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)  # MXNet 1.9: setting the dtype casts the arrays

    @property
    def shape(self):
        if self._shape is not None and is_np_shape():
            # MXNet: under NumPy shapes an unknown dimension is -1, and a Parameter is
            # never zero-size, so its 0 (not yet inferred) dimensions read as -1
            return tuple(-1 if d == 0 else d for d in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(new_shape) if new_shape is not None else None
        if self._shape is None or new_shape is None:
            self._shape = new_shape
            return
        assert len(self._shape) == len(new_shape) and \
            all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape)), \
            f"Expected shape {new_shape} is incompatible with given shape {self._shape}."
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    @property
    def grad_stype(self):
        return self._grad_stype

    # ------------------------------------------------------------------ access
    def _set_trainer(self, trainer):
        """Attach the Trainer that pulls this parameter's rows (one per sparse parameter)."""
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise RuntimeError(
                f"Failed to set the trainer for Parameter '{self.name}' because it was already "
                f"set. More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            if len(arr_list) == 1:  # one context: compare it without hashing (every layer
                c = self._ctx_list[0]  # call reads its Parameters through here)
                if ctx is c or (ctx.__class__ is c.__class__ and ctx.device_id == c.device_id
                                and ctx.device_type == c.device_type):
                    return arr_list[0]
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise RuntimeError(
                f"Parameter '{self.name}' was not initialized on context {ctx}. It was only "
                f"initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                "was deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing "
                "Parameters. You can also avoid deferred initialization by specifying "
                "in_units, num_features, etc., for network layers.")
        raise RuntimeError(
            f"Parameter '{self.name}' has not been initialized. Note that you should "
            "initialize parameters and create Trainer with Block.collect_params() instead of "
            "Block.params because the later does not include Parameters of nested child "
            "Blocks")

    def _get_row_sparse(self, arr_list, ctx, row_id):
        if not isinstance(row_id, NDArray):
            raise TypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        if self._trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when "
                               "no Trainer is created with it.")
        results = self._check_and_get(arr_list, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def data(self, ctx=None):
        """The parameter's value on ``ctx`` (the only context when None).

        Row-sparse parameters are read with :meth:`row_sparse_data`.
        """
        if self._stype != "default":
            raise RuntimeError(
                f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via data() "
                f"because its storage type is {self._stype}. Please use row_sparse_data() "
                "instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The value on every context, in initialization order."""
        if self._stype != "default":
            raise RuntimeError(
                f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                f"list_data() because its storage type is {self._stype}. Please use "
                "row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def row_sparse_data(self, row_id):
        """The rows ``row_id`` of a row_sparse parameter, pulled through its Trainer, on
        ``row_id``'s context."""
        if self._stype != "row_sparse":
            raise RuntimeError(
                f"Cannot return a copy of Parameter {self.name} via row_sparse_data() because "
                f"its storage type is {self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """The rows ``row_id`` of a row_sparse parameter on every context."""
        if self._stype != "row_sparse":
            raise RuntimeError(
                f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                f"list_row_sparse_data() because its storage type is {self._stype}. Please "
                "use data() instead.")
        return self._get_row_sparse(self._data, list, row_id)

    def grad(self, ctx=None):
        """The gradient on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient on every context."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts the parameter lives on (or will, when deferred)."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    # ------------------------------------------------------------------ initialization
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Allocate and fill the data (and gradient) arrays on ``ctx``.

        Parameters
        ----------
        init : Initializer or str, optional
            Takes priority over the parameter's own ``init`` and ``default_init``.
        ctx : Context or list of Context
        default_init : Initializer
            Used when neither ``init`` nor the parameter's ``init`` is set.
        force_reinit : bool
            Reinitialize an initialized parameter (else a warning and nothing happens).
        """
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Allocate the arrays now that the shape is known."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        assert shape_is_known(self.shape), (
            f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
            f"{self.shape}. Please specify in_units, in_channels, etc for `Block`s.")
        with autograd.pause():
            if data is None:
                data = ndarray.zeros(self.shape, dtype=self.dtype, ctx=cpu(),
                                     stype=self._stype)
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        """Copy ``data`` to every context and make the gradients."""
        self._ctx_list = list(ctx_list)
        self._ctx_map = {c: i for i, c in enumerate(self._ctx_list)}
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        """Gradient arrays of ``grad_stype`` marked for autograd."""
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [ndarray.zeros(i.shape, dtype=i.dtype, ctx=i.context,
                                    stype=self._grad_stype) for i in self._data]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad,
                                   self.grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """Initialize (or overwrite) from a loaded array, checking shape and dtype."""
        if cast_dtype:
            assert dtype_source in ("current", "saved")
        if self.shape:
            for self_dim, data_dim in zip(self.shape, data.shape):
                assert self_dim in (0, -1, data_dim), (
                    f"Failed loading Parameter '{self.name}' from saved params: shape "
                    f"incompatible expected {self.shape} vs saved {data.shape}")
            self.shape = tuple(i if i not in (0, -1) else j
                               for i, j in zip(self.shape, data.shape))
        if self.dtype:
            if cast_dtype and np.dtype(self.dtype) != np.dtype(data.dtype):
                if dtype_source == "current":
                    data = data.astype(self.dtype, copy=False)
                else:
                    self.dtype = data.dtype
            else:
                assert np.dtype(self.dtype) == np.dtype(data.dtype), (
                    f"Failed loading Parameter '{self.name}' from saved params: dtype "
                    f"incompatible expected {np.dtype(self.dtype).type} vs saved "
                    f"{np.dtype(data.dtype).type}. Set cast_dtype=True to cast the dtype of "
                    "saved params.")
        if self._stype != data.stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                assert ctx is None or set(ctx) == set(self._deferred_init[1]), (
                    f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                    f"initialized on {self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            assert ctx is None or set(ctx) == set(self.list_ctx()), (
                f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                f"initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def _reduce(self):
        """The value averaged over contexts, on cpu (all rows for row_sparse)."""
        ctx = cpu()
        if self._stype == "default":
            block = self.list_data()
            if len(block) > 1:
                data = ndarray.add_n(*(w.copyto(ctx) for w in block)) / len(block)
            else:
                data = self.data().copyto(ctx)
        else:
            all_row_ids = ndarray.arange(0, self.shape[0], dtype="int64", ctx=ctx)
            data = ndarray.zeros(self.shape, stype="row_sparse", ctx=ctx, dtype=self.dtype)
            if self._trainer is None:
                raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' "
                                   "when no Trainer is created with it.")
            self._trainer._row_sparse_pull(self, data, all_row_ids, full_idx=True)
        return data

    def set_data(self, data):
        """Overwrite the value on every context (or the pending value when deferred)."""
        self.shape = data.shape
        if self._data is None:
            assert self._deferred_init, f"Parameter '{self.name}' has not been initialized"
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore:
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()
        for arr in self._check_and_get(self._data, list):
            arr[:] = data

    def reset_ctx(self, ctx):
        """Move the parameter to other contexts (averaging over the current ones)."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it has "
                             "not been initialized.")

    def zero_grad(self):
        """Set the gradient to 0 on every context (a sparse gradient keeps no rows)."""
        if self._grad is None:
            return
        for g in self._grad:
            if g.stype == "default":
                g[:] = 0
            else:
                g._raw = ndarray.zeros(g.shape, stype=g.stype, dtype=g.dtype)._raw

    def var(self):
        """The Symbol variable standing for this parameter in a traced graph."""
        if self._var is None:
            self._var = _symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                    lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                    init=self.init, stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Cast data and gradient to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A Parameter whose value never changes (``grad_req='null'``).

    Parameters
    ----------
    name : str
    value : array-like or NDArray
    """

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            value = ndarray.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_ConstantInit(value))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.', stacklevel=2)
        self._grad_req = "null"


class _ConstantInit(initializer.Initializer):
    """Fill with a Constant's value."""

    def __init__(self, value):
        super().__init__()
        self._value = value

    def _init_weight(self, name, arr):
        arr[...] = self._value.asnumpy()

    def dumps(self):
        return initializer.Constant(self._value.asnumpy().tolist()).dumps()


class ParameterDict:
    """An ordered name -> Parameter mapping with a name prefix and optional sharing.

    Parameters
    ----------
    prefix : str
        Prepended to names given to :meth:`get`.
    shared : ParameterDict, optional
        Parameters looked up here first (how Blocks share weights).
    """

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join([_indent(f"  {v}", 2) for v in self.values()])
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter ``prefix + name``, created with ``kwargs`` if missing; an existing
        one must agree with ``kwargs`` (unknown shape dimensions are filled in)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if hasattr(param, k) and getattr(param, k) is not None:
                existing = getattr(param, k)
                if k == "shape" and v is not None and len(v) == len(existing):
                    merged = _merge_shapes(v, existing)
                    if merged is not None:
                        param._shape = merged
                        continue
                elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                    continue
                assert v is None or v == existing, (
                    f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                    f"match with stored for attribute '{k}': desired '{v}' vs stored "
                    f"'{getattr(param, k)}'.")
            else:
                setattr(param, k, v)
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created from ``value`` if missing."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               "to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            assert isinstance(param, Constant), \
                f"Parameter '{name}' already exists but it is not a constant."
            if isinstance(value, NDArray):
                value = value.asnumpy()
            assert param.shape == np.shape(value) and \
                (param.value.asnumpy() == value).all(), \
                f"Constant '{name}' already exists but it's value doesn't match new value"
        return param

    def update(self, other):
        """Copy the Parameters of ``other`` in (a name may not stand for two)."""
        for k, v in other.items():
            if k in self._params:
                assert self._params[k] is v, (
                    "Cannot update self with other because they have different Parameters "
                    f"with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every Parameter (``init`` is the default for those without one)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Zero every gradient."""
        for v in self.values():
            v.zero_grad()

    def reset_ctx(self, ctx):
        """Move every Parameter to ``ctx``."""
        for v in self.values():
            v.reset_ctx(ctx)

    def list_ctx(self):
        """The contexts of all Parameters."""
        out = []
        for v in self.values():
            out.extend(c for c in v.list_ctx() if c not in out)
        return out

    def setattr(self, name, value):
        """Set an attribute (``grad_req``, ``lr_mult``...) on every Parameter."""
        for v in self.values():
            setattr(v, name, value)

    def save(self, filename, strip_prefix=""):
        """Save every Parameter's value (names without ``strip_prefix``)."""
        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{param.name}' does not start with '{strip_prefix}'. this may be due "
                    "to your Block shares parameters from other Blocks or you forgot to use "
                    "'with name_scope()' when creating child blocks.")
            arg_dict[param.name[len(strip_prefix):]] = weight
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by :meth:`save` (or an MXNet ``.params`` file)."""
        if restore_prefix:
            for name in self.keys():
                assert name.startswith(restore_prefix), (
                    f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' does "
                    f"not start with '{restore_prefix}'")
        self.load_dict(ndarray.load(filename), ctx, allow_missing, ignore_extra,
                       restore_prefix, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False,
                  dtype_source="current"):
        """Load from a name -> NDArray dict (``arg:``/``aux:`` prefixes are dropped)."""
        lprefix = len(restore_prefix)
        items = param_dict.items() if isinstance(param_dict, dict) else param_dict
        loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v) for k, v in items]
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                assert name in arg_dict, (
                    f"Parameter '{name[lprefix:]}' is missing in {where}, which contains "
                    f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure source "
                    "and target networks have the same prefix.")
        for name in arg_dict:
            if name not in self._params:
                assert ignore_extra, (
                    f"Parameter '{name[lprefix:]}' loaded from {where} is not present in "
                    f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}. "
                    "Set ignore_extra to True to ignore. Please make sure source and target "
                    "networks have the same prefix.")
                continue
            self[name]._load_init(arg_dict[name], ctx, cast_dtype=cast_dtype,
                                  dtype_source=dtype_source)

    def select(self, pattern):
        """A ParameterDict of the Parameters whose names match the regex ``pattern``."""
        ret = ParameterDict(self._prefix)
        prog = re.compile(pattern)
        ret.update({k: v for k, v in self.items() if prog.match(k)})
        return ret


def _merge_shapes(want, have):
    """Fill unknown (0/-1) dimensions of one shape from the other; None on a conflict."""
    out = []
    for d1, d2 in zip(want, have):
        if d1 != d2 and d1 > 0 and d2 > 0:
            return None
        out.append(d2 if d1 in (0, -1) else d1)
    return tuple(out)
