"""Imperative execution of registered operators and the generated ``nd.*`` front ends."""
from __future__ import annotations

import numbers
from collections import OrderedDict

import numpy as np

from .. import ndarray as _nd_pkg  # the package (mid-import now): nd.* for fluent methods
from .. import profiler as _profiler
from .. import storage as st
from ..base import DTypeError, MXNetError, ParamError, ShapeError
from ..ops.core import rules
from ..ops.core.registry import all_ops, get_op, report_fallback, resolve_dispatch, run_raw
from ..ops.core.signature import front_end_doc, front_end_signature
from ..profiler import RUN as _PROF
from .ndarray import NDArray, install_methods, wrap
from .tape import STATE, record

__all__ = ["invoke", "binary", "fluent", "make_function"]


def _check_shapes(op, attrs, raws):
    """MXNet's shape inference on the inputs; returns the output shapes (None if unknown)."""
    ins = [tuple(r.shape) for r in raws]
    outs = [None] * op.n_outputs(attrs)
    try:
        res = op.infer_shape(attrs, list(ins), outs)
    except rules.Conflict as c:
        rules.raise_conflict(c, op.name, op.name, op.input_names(attrs), op.out_names(attrs))
    return res[1] if isinstance(res, tuple) and len(res) == 2 else outs


def _check_types(op, attrs, raws):
    """MXNet's type inference on the inputs: a dtype conflict names the op and the input."""
    ins = [np.dtype(r.dtype) for r in raws]
    outs = [None] * op.n_outputs(attrs)
    try:
        res = op.infer_type(attrs, list(ins), outs)
    except rules.Conflict as c:
        rules.raise_conflict(c, op.name, op.name, op.input_names(attrs), op.out_names(attrs))
    return res[1] if isinstance(res, tuple) and len(res) == 2 else outs


def _check_sizes(op, shapes, dtypes, out_stypes):
    """Inferred dense outputs must fit in memory (one_hot(depth=10**13), random shapes...):
    refused before the kernel allocates, with the op's name."""
    for s, t, stype in zip(shapes or (), dtypes or (), out_stypes or ()):
        if stype == "default" and isinstance(s, tuple) and None not in s:
            st.check_alloc(s, t if t is not None else np.float32, f"operator {op.name} output")


def invoke(name, inputs, kwargs, out=None):
    """Run operator ``name`` on NDArrays now; returns the list of output NDArrays."""
    if not kwargs:  # NDArray operators (-x, abs(x)): the same op and parameters every call
        hit = _BARE.get(name)
        if hit is None:
            op = get_op(name)
            hit = _BARE[name] = (op, op.params.parse(name, {}))
        return invoke_op(hit[0], hit[1], inputs, out)
    op = get_op(name)
    attrs = op.params.parse(name, kwargs)
    return invoke_op(op, attrs, inputs, out)


# op name -> (op, parsed default parameters) for calls without keyword arguments (a failed
# parse raises before anything is stored)
_BARE: dict = {}


# (op name, attrs, per input (raw type, shape, dtype)) -> (in_stypes, dispatch) for calls
# whose shape and type checks passed: both checks and the dispatch choice depend on nothing
# else, and together they cost more than a small sparse kernel (~20 us). Least recently
# used entries are evicted, so a program that cycles through many shapes keeps its hot ones.
_PLANS: OrderedDict = OrderedDict()
_PLANS_MAX = 4096


def _plan(op, attrs, raws):
    """(in_stypes, (row, out_stypes, mode)) after the shape and type checks, memoised."""
    sig = [op.name, attrs]
    for r in raws:  # a plain loop: a generator costs a frame on a path run per op call
        sig += (type(r), r.shape, r.dtype)
    try:
        key = tuple(sig)
        hit = _PLANS.get(key)
    except TypeError:  # an unhashable attribute value: no memo
        key = hit = None
    if hit is not None:
        try:
            _PLANS.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass
        return hit
    shapes, dtypes = _check_shapes(op, attrs, raws), _check_types(op, attrs, raws)
    in_stypes = tuple(st.stype_of(r) for r in raws)
    plan = (in_stypes, resolve_dispatch(op, attrs, in_stypes))
    _check_sizes(op, shapes, dtypes, plan[1][1])
    if key is not None:
        _PLANS[key] = plan
        while len(_PLANS) > _PLANS_MAX:
            try:
                _PLANS.popitem(last=False)
            except KeyError:
                break
    return plan


def invoke_op(op, attrs, inputs, out=None):
    raws = [x._raw for x in inputs]
    ctx = inputs[0]._ctx if inputs else None
    in_stypes, (row, out_stypes, mode) = _plan(op, attrs, raws)
    outs = _as_list(out) if out is not None else None
    if outs and inputs and outs[0] is inputs[0] and row.weight_inplace:
        # optimizer updates with out=weight: the kernel updates the weight where it lies
        attrs = type(attrs)(attrs, __inplace__=True)
    if mode == "fallback":
        want = tuple(o.stype for o in _as_list(out)) if out is not None else out_stypes
        report_fallback(op.name, attrs.to_strings(), in_stypes, want)
        raws = [st.todense(r) for r in raws]
    node_attrs = attrs
    if op.needs_is_train:  # training mode comes from autograd (record / train_mode)
        attrs = type(attrs)(attrs, __is_train__=STATE.training)
    try:
        if _PROF.imperative:
            results = _profiled(op, row, attrs, raws, ctx)
        else:
            results = row.kernel(attrs, raws)
    except rules.Conflict as c:
        rules.raise_conflict(c, op.name, op.name, op.input_names(attrs), op.out_names(attrs))
    results = tuple(results)
    if mode == "fallback":
        results = tuple(st.cast_raw(r, s) for r, s in zip(results, out_stypes))
    n_vis = op.n_visible(attrs)
    if outs is not None:
        for i, (o, r) in enumerate(zip(outs, results[:n_vis])):
            mine = o._raw
            if r is not mine:
                if mine.dtype != r.dtype or (mine.shape != r.shape and r.shape != ()):
                    _bad_out(op, i, mine, r)
                o._assign(r)
            st.bump(o._raw)  # in-place kernels (weight_inplace) wrote into it directly
        res = outs
    else:
        res = [wrap(r, ctx) for r in results[:n_vis]]
    if STATE.recording:
        record(op, node_attrs, inputs, results, res)
    return res


def _bad_out(op, i, mine, r):
    """An ``out=`` array of another dtype or shape than the result: MXNet's inference error
    (writing would cast or broadcast the result silently; a 0-d result fills ``out``)."""
    if mine.dtype != r.dtype:
        raise DTypeError(f"Error in operator {op.name}: Incompatible attr in node {op.name} at "
                         f"{i}-th output: expected {np.dtype(r.dtype).name}, got "
                         f"{np.dtype(mine.dtype).name}")
    raise ShapeError(f"Error in operator {op.name}: Incompatible attr in node {op.name} at "
                     f"{i}-th output: expected {rules.fmt_shape(tuple(r.shape))}, got "
                     f"{rules.fmt_shape(tuple(mine.shape))}")


def _profiled(op, row, attrs, raws, ctx):
    """Run a kernel and record it for mx.profiler (only while imperative profiling runs)."""
    profiler = _profiler
    t0 = profiler.now_us()
    results = row.kernel(attrs, raws)
    dev = ctx.device_id if ctx is not None else 0
    profiler.record_op(op.name, t0, profiler.now_us(), dev)
    if _PROF.memory:
        profiler.track_memory(results, dev)
    return results


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _to_nd(x, like=None):
    if isinstance(x, NDArray):
        return x
    dtype = like.dtype if like is not None else np.float32
    return wrap(np.asarray(x, dtype=dtype))


def invoke_raw_cast(raw, stype):
    """Convert a raw value to ``stype`` with cast_storage's kernels (no full densify for
    csr <-> row_sparse)."""
    if st.stype_of(raw) == stype:
        return raw
    return run_raw("cast_storage", [raw], stype=stype)[0]


_BROADCAST = {"add": "broadcast_add", "sub": "broadcast_sub", "mul": "broadcast_mul",
              "div": "broadcast_div", "mod": "broadcast_mod", "power": "broadcast_power",
              "equal": "broadcast_equal", "not_equal": "broadcast_not_equal",
              "greater": "broadcast_greater", "greater_equal": "broadcast_greater_equal",
              "lesser": "broadcast_lesser", "lesser_equal": "broadcast_lesser_equal"}


def _is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, np.ndarray)
                                                           and x.ndim == 0)


def binary(lhs, rhs, kind, scalar_name, reverse=False):
    """``lhs <kind> rhs`` as MXNet's NDArray operators do it: a scalar op for a number,
    otherwise the broadcast_* op (whose storage rows apply)."""
    if _is_scalar(rhs):
        return invoke(scalar_name, [lhs], {"scalar": float(rhs)})[0]
    if not isinstance(rhs, NDArray):
        try:
            rhs = _to_nd(rhs, lhs)
        except (TypeError, ValueError):
            raise TypeError(f"type {type(rhs).__name__} not supported") from None
    a, b = (rhs, lhs) if reverse else (lhs, rhs)
    return invoke(_BROADCAST[kind], [a, b], {})[0]


# MXNet 1.9's NDArray fluent methods that map to operators (x.sum(), x.exp(), ...)
FLUENT = frozenset("""
abs arccos arccosh arcsin arcsinh arctan arctanh argmax argmax_channel argmin argsort
broadcast_axes broadcast_like cbrt ceil clip cos cosh degrees depth_to_space diag exp expm1
fix flip floor log log10 log1p log2 log_softmax max mean min nanprod nansum norm one_hot
ones_like pad pick prod radians rcbrt reciprocal relu repeat rint round rsqrt shape_array
sigmoid sign sin sinh size_array slice slice_like softmax softmin sort space_to_depth split
split_v2 sqrt square sum swapaxes take tan tanh tile topk trunc zeros_like
""".split())


def fluent(name):
    """The ``nd.<name>`` front end behind fluent method ``x.<name>(...)``, or None."""
    if name not in FLUENT:
        return None
    fn = getattr(_nd_pkg, name, None)
    if fn is None:
        raise AttributeError(f"fluent method {name!r}: operator {name} is not registered")
    return fn


def make_function(op_name, op):
    """Build the ``nd.<op_name>`` front end from an op record (no exec)."""
    # calls with only positional NDArrays (``nd.dot(a, b)``) skip argument parsing when the
    # op's default parameters are valid and fix its inputs
    default_attrs, n_fixed = None, -1
    if not (op.key_var_num_args or callable(op.inputs)):
        try:
            default_attrs = op.params.parse(op_name, {})
            n_fixed = len(op.input_names(default_attrs))
        except ParamError:  # a required parameter, or defaults its checks reject
            pass

    # parsed parameters per call pattern (positional parameter values and keywords): a
    # layer calls its op with the same parameters every time, and reusing the Attrs also
    # reuses its cached hash in the plan lookups below
    memo = {}

    def fn(*args, out=None, name=None, **kwargs):
        if len(args) == n_fixed and not kwargs and out is None:
            for a in args:
                if not isinstance(a, NDArray):
                    break
            else:
                res = invoke_op(op, default_attrs, args)
                return res[0] if len(res) == 1 else res
        if op.key_var_num_args:
            # MXNet's ``f(*data, **kwargs)``: every positional argument is an input
            arrays = [a for a in args if isinstance(a, NDArray)]
            if op.key_var_num_args not in kwargs:
                if len(arrays) == 1 and isinstance(args[0], (list, tuple)):
                    arrays = list(args[0])
                kwargs[op.key_var_num_args] = len(arrays)
            for k in list(kwargs):
                if isinstance(kwargs[k], NDArray):
                    arrays.append(kwargs.pop(k))
            attrs = op.params.parse(op_name, kwargs)
            res = invoke_op(op, attrs, arrays, out)
            return out if out is not None else (res[0] if len(res) == 1 else res)
        # MXNet's ``f(input1=None, ..., param1=_Null, ..., out=None, name=None, **kwargs)``
        if callable(op.inputs):  # inputs depend on the parameters: a leading run of arrays
            n_in = 0
            while n_in < len(args) and (args[n_in] is None or
                                        isinstance(args[n_in], (NDArray, np.ndarray))):
                n_in += 1
        else:
            n_in = len(op.inputs)
        pos = [a for a in args[:n_in] if a is not None]
        key = _memo_key(n_in, len(pos), args, kwargs)
        hit = memo.get(key) if key is not None else None
        if hit is not None and len(pos) == hit[1]:
            for a in pos:
                if a.__class__ is not NDArray and not isinstance(a, NDArray):
                    break
            else:
                res = invoke_op(op, hit[0], pos, out)
                if out is not None:
                    return out
                return res[0] if len(res) == 1 else res
        kwargs = op.params.positional(op_name, args[n_in:], kwargs)
        pre = _params_only(op, kwargs)
        attrs = op.params.parse(op_name, pre)
        names = op.input_names(attrs)
        inputs = []
        for nm in names:
            if nm in kwargs:
                v = kwargs.pop(nm)
                if v is not None:
                    inputs.append(_to_nd(v))
            elif pos:
                v = pos.pop(0)
                if not isinstance(v, NDArray):
                    if isinstance(v, (list, tuple, np.ndarray)):
                        v = _to_nd(v)
                    else:
                        raise ParamError(f"{op_name}: input {nm!r} must be an NDArray, got "
                                         f"{type(v).__name__}")
                inputs.append(v)
        if pos:
            raise ParamError(f"{op_name}: got {len(pos)} unexpected positional inputs; inputs "
                             f"are {list(names)}")
        if len(kwargs) != len(pre):  # keywords that are neither inputs nor parameters
            attrs = op.params.parse(op_name, {k: v for k, v in kwargs.items()
                                              if v is not None or k in op.params.fields})
        if len(inputs) != len(names):
            raise MXNetError(f"{op_name}: expected {len(names)} inputs {list(names)}, "
                             f"got {len(inputs)}")
        if key is not None and len(memo) < _MEMO_MAX and len(kwargs) == len(pre) and \
                not any(nm in pre for nm in names):
            memo[key] = (attrs, len(names))
        res = invoke_op(op, attrs, inputs, out)
        if out is not None:
            return out
        return res[0] if len(res) == 1 else res

    fn.__name__ = op_name
    fn.__qualname__ = op_name
    fn.__signature__ = front_end_signature(op, ("out", "name"))
    fn.__doc__ = front_end_doc(op_name, op, fn.__signature__)
    return fn


_MEMO_MAX = 256
_MEMO_TYPES = frozenset((str, int, float, bool, type(None)))


def _memo_key(n_in, n_pos, args, kwargs):
    """A hashable key of a call's parameter values (with their types: ``1`` and ``True``
    may parse differently), or None when a value is not plain (an array, a list...)."""
    key = [n_in, n_pos, len(args)]
    for v in args[n_in:]:
        if v.__class__ not in _MEMO_TYPES:
            return None
        key += (v.__class__, v)
    for k, v in kwargs.items():
        c = v.__class__
        if c is tuple:
            for x in v:
                if x.__class__ not in _MEMO_TYPES:
                    return None
            v = (tuple,) + tuple((x.__class__, x) for x in v)
        elif c not in _MEMO_TYPES:
            return None
        key += (k, c, v)
    return tuple(key)


def _params_only(op, kwargs):
    return {k: v for k, v in kwargs.items()
            if op.params.accepts(k) and not isinstance(v, NDArray)}


def populate(namespace: dict, sparse: bool = False):
    """Add a front end for every registered op (and alias) to ``namespace``."""
    for key, op in all_ops().items():
        pub = key
        if sparse and key.startswith("_sparse_"):
            pub = key[len("_sparse_"):]
        namespace.setdefault(pub, make_function(key, op))
        if pub != key:
            namespace[pub] = make_function(key, op)


install_methods(invoke=invoke, binary=binary, fluent=fluent, invoke_raw_cast=invoke_raw_cast)
