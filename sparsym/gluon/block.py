"""Block, HybridBlock and SymbolBlock: Gluon's model containers (MXNet 1.9.1 semantics)."""
from __future__ import annotations

import json
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

from .. import initializer, ndarray
from .. import symbol as _symbol
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ..symbol import naming as _name
from ..symbol.symbol import Symbol
from .parameter import (
    DeferredInitializationError,
    Parameter,
    ParameterDict,
    _brief_print_list,
    _indent,
)

__all__ = ["Block", "HybridBlock", "SymbolBlock"]  # noqa: F822 (SymbolBlock: __getattr__)


class _BlockScope:
    """The naming scope of a Block: children get ``<hint><count>_`` prefixes under it."""

    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """(prefix, ParameterDict) for a new Block created in the current scope."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _flatten(args, inout_str):
    """(flat list of NDArray/Symbol/None, nesting format) of a nested list of inputs."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        length = len(args.list_outputs())
        return [args], (length if length > 1 else 0)
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the input of HybridBlock {inout_str} must be "
                         f"(nested) list of Symbol or NDArray, but got {args} of type "
                         f"{type(args)}")
    flat, fmts = [], []
    for i in args:
        arg, fmt = _flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """Inverse of :func:`_flatten`: (nested value, remaining args)."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError("We do not support passing types that are not None when the "
                                 "initial HybridBlock has received NoneType and has been "
                                 f"hybridized. Received arg = {args[0]}, fmt = {fmt}.")
            return None, args[1:]
        return args[:fmt], args[fmt:]
    if not isinstance(args, (list, tuple)):
        raise ValueError("When hybridized, the output of HybridBlock must be (nested) list of "
                         f"Symbol or NDArray, but got {args} of type {type(args)}")
    ret = []
    for i in fmt:
        res, args = _regroup(args, i)
        ret.append(res)
    return ret, args


def _trailing_none_match(fmt, stored):
    """Formats equal but for trailing None arguments (defaults left out or passed)."""
    if not isinstance(fmt, list) or not isinstance(stored, list):
        return False
    short, long_ = (fmt, stored) if len(fmt) < len(stored) else (stored, fmt)
    return long_[:len(short)] == short and all(f == -1 for f in long_[len(short):])


def _gather_type_ctx(args):
    """(has a Symbol, has an NDArray, the first NDArray's context, all contexts) over nested
    inputs;
    other values (scalars, None) are ignored, as MXNet does."""
    has_symbol = has_ndarray = False
    ctx = None
    ctxs = set()
    stack = [args]
    while stack:
        a = stack.pop()
        if isinstance(a, (list, tuple)):
            stack.extend(reversed(a))
        elif isinstance(a, NDArray):
            if not has_ndarray:
                ctx = a.context
            if a.context.device_type != "cpu_pinned":  # MXNet lets pinned mix with cpu
                ctxs.add(a.context)
            has_ndarray = True
        elif isinstance(a, Symbol):
            has_symbol = True
    return has_symbol, has_ndarray, ctx, ctxs


class HookHandle:
    """Removes a registered forward hook (``detach()`` or leaving a ``with`` block)."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        assert self._hooks_dict_ref is None, "The same handle cannot be attached twice."
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = hooks_dict

    def detach(self):
        hooks_dict = self._hooks_dict_ref
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


class Block:
    """Base class of all layers and models.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of this Block's Parameters and children (default: the class
        name in lower case and a count, e.g. ``dense0_``).
    params : ParameterDict, optional
        Parameters to share (looked up before new ones are created).

    Examples
    --------
    >>> import sparsym as mx
    >>> from sparsym.gluon import nn
    >>> class Model(mx.gluon.Block):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense = nn.Dense(2, in_units=3)
    ...     def forward(self, x):
    ...         return self.dense(x)
    >>> net = Model(prefix='model_')
    >>> net.initialize()
    >>> net(mx.nd.ones((4, 3))).shape
    (4, 2)
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join([f"  ({key}): {_indent(repr(block), 2)}"
                            for key, block in self.__dict__.items()
                            if isinstance(block, Block)])
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        """Register Blocks and Parameters assigned as attributes."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value,
                                                                           type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            assert name not in self._reg_params, (
                f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                "parameters between blocks, please set 'params' at Block construction instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        """Warn about lists/dicts of Blocks, which are not registered as children."""
        children = set(self._children.values())

        def _find_unregistered_block_in_container(data):
            if isinstance(data, (list, tuple)):
                return any(_find_unregistered_block_in_container(ele) for ele in data)
            if isinstance(data, dict):
                return any(_find_unregistered_block_in_container(v) for v in data.values())
            if isinstance(data, Block):
                return data not in children
            return False

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if _find_unregistered_block_in_container(v):
                    warnings.warn(f'"{self.name}.{k}" is an unregistered container with Blocks. '
                                  "Note that Blocks inside the list, tuple or dict will not be "
                                  "registered automatically. Make sure to register them using "
                                  "register_child() or switching to nn.Sequential/"
                                  "nn.HybridSequential instead. ", stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """Prefix of this Block's names."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing underscore."""
        return self._name

    def name_scope(self):
        """A ``with`` scope under which children and symbols get this Block's prefix."""
        return self._scope

    @property
    def params(self):
        """This Block's own ParameterDict (children excluded)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this Block's and all descendants' Parameters.

        Parameters
        ----------
        select : str, optional
            A regular expression the names must match (e.g. ``'.*weight|.*bias'``).
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({n: v for n, v in self.params.items() if pattern.match(n)})
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save Parameters under their attribute paths (``0.weight``, ``dense.bias``...)."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse_params = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse_params.items()}
        ndarray.save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename):
        """Deprecated: saves with full Parameter names (use :meth:`save_parameters`)."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if "
                      "you want load from SymbolBlock later, please use export instead. For "
                      "details, see https://mxnet.apache.org/tutorials/gluon/save_load_params."
                      "html", stacklevel=2)
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may "
                             "resolve this error.") from e

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load Parameters saved by :meth:`save_parameters` (or by ``save_params``)."""
        loaded = ndarray.load(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in i for i in loaded.keys()):
            # legacy files keep full Parameter names
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            params_inv = defaultdict(list)
            for k, v in params.items():
                params_inv[v].append(k)
            for name, param in params.items():
                assert any(p in loaded for p in params_inv[param]), (
                    f"Parameter '{name}' is missing in file '{filename}', which contains "
                    f"parameters: {_brief_print_list(loaded.keys())}. Set allow_missing=True "
                    "to ignore missing parameters.")
        for name in loaded:
            if not ignore_extra and name not in params:
                raise ValueError(
                    f"Parameter '{name}' loaded from file '{filename}' is not present in "
                    f"ParameterDict, which contains parameters "
                    f"{_brief_print_list(self._params.keys())}. Set ignore_extra=True to ignore.")
            if name in params:
                params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype,
                                        dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated alias of :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix):
        """Save the structure (children's names, traced graphs) to ``prefix-model.json``
        and the Parameters to ``prefix-model.params``; :meth:`load` restores them into a
        model built the same way."""
        model = {}
        index = [0]

        def visit(blk, structure):
            mdl = {"orig_name": blk.name}
            structure[f"{type(blk).__name__.lower()}{index[0]}"] = mdl
            if isinstance(blk, HybridBlock):
                mdl["hybridized"] = bool(blk._cached_graph)
                if blk._cached_graph:
                    syms, out = blk._cached_graph
                    mdl["in_format"] = blk._in_format
                    mdl["out_format"] = blk._out_format
                    mdl["inputs"] = [sym.tojson() for sym in syms]
                    mdl["symbol"] = out.tojson()
            children = mdl["children"] = {}
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                visit(child, mdl)

        visit(self, model)
        with open(prefix + "-model.json", "w") as fp:
            json.dump(model, fp)
        self.save_parameters(prefix + "-model.params")

    def load(self, prefix):
        """Load what :meth:`save` wrote: children and Parameters take their saved names,
        traced graphs come back, then the Parameters are loaded."""
        with open(prefix + "-model.json") as fp:
            model = json.load(fp)
        index = [0]

        def visit(blk, structure):
            mdl = structure[f"{type(blk).__name__.lower()}{index[0]}"]
            blk._name = mdl["orig_name"]
            if isinstance(blk, HybridBlock) and mdl.get("hybridized"):
                blk._in_format = mdl["in_format"]
                blk._out_format = mdl["out_format"]
                blk._cached_graph = ([_symbol.load_json(i) for i in mdl["inputs"]],
                                     _symbol.load_json(mdl["symbol"]))
                blk._cached_op = None
                blk._active = True
            params = blk.params._params
            for p in list(params.keys()):
                param = params.pop(p)
                params[blk.name + "_" + p[len(blk.params._prefix):]] = param
            for child in blk._children.values():
                index[0] += 1
                visit(child, mdl)
            children = mdl["children"]
            for ch_name in list(blk._children.keys()):
                child = blk._children.pop(ch_name)
                blk._children[children[child.name]] = child

        visit(self, model)
        self.load_parameters(prefix + "-model.params")

    def register_child(self, block, name=None):
        """Register ``block`` as a child (attributes do this automatically)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant, then on this Block."""
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize all Parameters of this Block and its children."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize every HybridBlock child (a plain Block itself runs imperatively)."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast this Block's and its children's Parameters to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)

    def zero_grad(self):
        """Zero the gradients of all Parameters."""
        self.collect_params().zero_grad()

    def __call__(self, *args):
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """Override: the computation of this Block on NDArrays."""
        raise NotImplementedError

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for ``inputs``."""
        _installed("summary")(self, *inputs)


class HybridBlock(Block):
    """A Block whose computation (:meth:`hybrid_forward`) runs on NDArrays or Symbols.

    After :meth:`hybridize`, the first call traces ``hybrid_forward`` with ``F=mx.sym`` into
    one Symbol, and every call runs it through the symbolic executor (plans cached by
    input shapes, dtypes and storage types). Sparse Parameters are supported there: their
    storage types are inferred like any bound argument's.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _get_graph(self, *args):
        if not self._cached_graph:
            flatten_args, self._in_format = _flatten(args, "input")
            real_arg_num = sum(ele is not None for ele in flatten_args)
            if real_arg_num == 0:
                raise ValueError("All args are None and we do not support such a case. "
                                 f"Received args={args}")
            flatten_inputs, symbol_inputs, cnt = [], [], 0
            for arg in flatten_args:
                if arg is None:
                    flatten_inputs.append(None)
                    continue
                name = f"data{cnt}" if real_arg_num > 1 else "data"
                arg_sym = _symbol.var(name)
                cnt += 1
                flatten_inputs.append(arg_sym)
                symbol_inputs.append(arg_sym)
            grouped_inputs = _regroup(flatten_inputs, self._in_format)[0]
            params = {i: j.var() for i, j in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(_symbol, *grouped_inputs, **params)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = symbol_inputs, _symbol.Group(out)
        return self._cached_graph

    def _build_cache(self, *args):
        from ..cached_op import CachedGraph
        inputs, out = self._get_graph(*args)
        data_names = {data.name: i for i, data in enumerate(inputs)}
        params = self.collect_params()
        self._cached_op = CachedGraph(out, data_names, params, self._flags)

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError("Deferred initialization failed because shape cannot be "
                             f"inferred. {e}") from e

    def _call_cached_op(self, *args):
        if self._cached_op is None:
            self._build_cache(*args)
        flat, fmt = _flatten(args, "input")
        if fmt != self._in_format and not _trailing_none_match(fmt, self._in_format):
            raise ValueError("The argument structure of HybridBlock does not match the cached "
                             f"version. Stored format = {self._in_format}, input format = "
                             f"{fmt}")
        data = [a for a in flat if a is not None]
        try:
            out = self._cached_op(data)
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            for p in self._cached_op.params:
                p._finish_deferred_init()
            out = self._cached_op(data)
        return _regroup(out, self._out_format)[0]

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but {block} "
                             f"has type {type(block)}. If you are using Sequential, please try "
                             "HybridSequential instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Trace :meth:`hybrid_forward` into a Symbol at the next call and run it compiled.

        Parameters
        ----------
        active : bool
        static_alloc, static_shape : bool
            Accepted for MXNet compatibility: the executor already keeps its plan and
            buffers per input signature.
        """
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape)] + \
            list(kwargs.items())
        self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/'
                          f'pre-hook. If "{self}" is a child of HybridBlock, the hooks will '
                          "not take effect.", stacklevel=2)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          **kwargs)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        flat, _ = _flatten(args, "input")
        flat = [a for a in flat if a is not None]
        known = {i.name: getattr(j, attr) for i, j in zip(inputs, flat)}
        arg_attrs, _, aux_attrs = getattr(out, infer_fn + "_partial")(**known)
        sdict = dict(zip(out.list_arguments(), arg_attrs))
        sdict.update(zip(out.list_auxiliary_states(), aux_attrs))
        for i in self.collect_params().values():
            if i.name not in sdict:
                continue
            value = sdict[i.name]
            if attr == "shape":
                if value is None:
                    continue
                value = tuple(0 if d is None else d for d in value)
            elif value is None:
                continue
            setattr(i, attr, value)

    def infer_shape(self, *args):
        """Infer the shapes of this Block's Parameters from input shapes."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args):
        """Infer the dtypes of this Block's Parameters from input dtypes."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (MXNet's checkpoint format).

        Returns
        -------
        (str, str)
            The two file names.
        """
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with "
                               "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        sym.save(sym_file, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict[f"arg:{name}"] = param._reduce()
            elif name in aux_names:
                arg_dict[f"aux:{name}"] = param._reduce()
        params_file = f"{path}-{epoch:04d}.params"
        ndarray.save(params_file, arg_dict)
        return sym_file, params_file

    def storage_report(self):
        """The storage plan of the last hybridized call: each node's input and output
        storage types, dispatch mode and densified bytes (a sparsym extension: see where a
        graph with sparse Parameters or inputs stays sparse and where it falls back)."""
        exe = self._cached_op.report_executor() if self._cached_op is not None else None
        if exe is None:
            raise RuntimeError("storage_report: hybridize() the block and run it once first")
        return exe.storage_report()

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(node_name, op_name, array)`` on operator outputs when hybridized
        (inputs too with ``monitor_all``)."""
        self._callback = callback
        self._monitor_all = monitor_all
        for cld in self._children.values():
            cld._callback = callback
            cld._monitor_all = monitor_all
        self._clear_cached_op()

    def forward(self, x, *args):
        """Run :meth:`hybrid_forward` on NDArrays (compiled when hybridized) or Symbols."""
        if not args and not self._active and x.__class__ is NDArray:
            # a layer of an imperative model on one dense array: the general path below
            # without its context and type bookkeeping
            ctx = x._ctx
            with ctx:
                return self._forward_nd(ctx, x)
        for a in args:  # the common call, NDArrays only, skips the nested walk
            if not isinstance(a, NDArray):
                has_symbol, has_ndarray, ctx, ctxs = _gather_type_ctx([x] + list(args))
                break
        else:
            if isinstance(x, NDArray):
                has_symbol, has_ndarray, ctx = False, True, x._ctx
                ctxs = {a._ctx for a in args if a._ctx.device_type != "cpu_pinned"}
                if ctx.device_type != "cpu_pinned":
                    ctxs.add(ctx)
            else:
                has_symbol, has_ndarray, ctx, ctxs = _gather_type_ctx([x] + list(args))
        if has_symbol and has_ndarray:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols "
                             "types for the input. Please check the type of the args.")
        if not has_symbol and not has_ndarray:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.")
        is_ndarray = has_ndarray
        if is_ndarray:
            with ctx:
                if self._active:
                    if len(ctxs) > 1:
                        raise ValueError("Find multiple contexts in the input, After "
                                         "hybridized, the HybridBlock only supports one input "
                                         f"context. You can print the ele.ctx in the input "
                                         f"arguments to inspect their contexts. Find all "
                                         f"contexts = {sorted(map(str, ctxs))}")
                    return self._call_cached_op(x, *args)
                return self._forward_nd(ctx, x, *args)
        params = {i: j.var() for i, j in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_symbol, x, *args, **params)

    def _forward_nd(self, ctx, x, *args):
        """:meth:`hybrid_forward` on NDArrays with the Parameters' values on ``ctx``
        (deferred Parameters are initialized from the inputs' shapes first)."""
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args)
            for _, v in self.params.items():
                v._finish_deferred_init()
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        return self.hybrid_forward(ndarray, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override: the computation, with ``F`` either ``mx.nd`` or ``mx.sym``."""
        raise NotImplementedError


# What this module needs from the modules built on it (summary.py, symbol_block.py), installed
# by gluon/__init__.py with ``install``: Block.summary and MXNet's block.SymbolBlock.
_INSTALLED: dict = {}


def install(**parts: object) -> None:
    """Install ``summary`` (the function behind Block.summary) and ``SymbolBlock``."""
    _INSTALLED.update(parts)


def _installed(name):
    try:
        return _INSTALLED[name]
    except KeyError:
        raise MXNetError(f"gluon.block.{name} is not installed: import sparsym.gluon") from None


def __getattr__(name):
    # MXNet defines SymbolBlock in this module; it lives in symbol_block.py (built on this one)
    if name == "SymbolBlock" and name in _INSTALLED:
        return _INSTALLED[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
