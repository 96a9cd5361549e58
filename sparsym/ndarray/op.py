"""Imperative execution of registered operators and the generated ``nd.*`` front ends."""
from __future__ import annotations

import inspect
import numbers

import numpy as np

from .. import storage as st
from ..base import MXNetError, ParamError
from ..ops import rules
from ..ops.registry import all_ops, get_op, report_fallback, resolve_dispatch
from .ndarray import NDArray, wrap

__all__ = ["invoke", "binary", "fluent", "make_function"]


def _check_shapes(op, attrs, raws):
    ins = [tuple(r.shape) for r in raws]
    outs = [None] * op.n_outputs(attrs)
    try:
        op.infer_shape(attrs, list(ins), outs)
    except rules.Conflict as c:
        rules.raise_conflict(c, op.name, op.name, op.input_names(attrs), op.out_names(attrs))


def invoke(name, inputs, kwargs, out=None):
    """Run operator ``name`` on NDArrays now; returns the list of output NDArrays."""
    op = get_op(name)
    attrs = op.params.parse(name, kwargs)
    return invoke_op(op, attrs, inputs, out)


def invoke_op(op, attrs, inputs, out=None):
    raws = [x._raw for x in inputs]
    ctx = inputs[0]._ctx if inputs else None
    _check_shapes(op, attrs, raws)
    in_stypes = tuple(st.stype_of(r) for r in raws)
    row, out_stypes, mode = resolve_dispatch(op, attrs, in_stypes)
    if mode == "fallback":
        want = tuple(o.stype for o in _as_list(out)) if out is not None else out_stypes
        report_fallback(op.name, attrs.to_strings(), in_stypes, want)
        raws = [st.todense(r) for r in raws]
    if op.needs_is_train:
        attrs = type(attrs)(attrs, __is_train__=False)
    try:
        results = row.kernel(attrs, raws)
    except (rules.Conflict,) as c:
        rules.raise_conflict(c, op.name, op.name, op.input_names(attrs), op.out_names(attrs))
    results = tuple(results)[:op.n_visible(attrs)]
    if out is not None:
        outs = _as_list(out)
        for o, r in zip(outs, results):
            o._assign(r)
        return outs
    return [wrap(r, ctx) for r in results]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _to_nd(x, like=None):
    if isinstance(x, NDArray):
        return x
    dtype = like.dtype if like is not None else np.float32
    return wrap(np.asarray(x, dtype=dtype))


def binary(lhs, rhs, kind, scalar_name, reverse=False):
    """``lhs <kind> rhs`` following MXNet's dispatch: scalar op, elemwise op or broadcast op."""
    if isinstance(rhs, numbers.Number) or (isinstance(rhs, np.ndarray) and rhs.ndim == 0):
        return invoke(scalar_name, [lhs], {"scalar": float(rhs)})[0]
    rhs = _to_nd(rhs, lhs)
    a, b = (rhs, lhs) if reverse else (lhs, rhs)
    elemwise = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul",
                "div": "elemwise_div"}.get(kind, "_" + kind)
    if a.shape == b.shape:
        return invoke(elemwise, [a, b], {})[0]
    bname = {"add": "broadcast_add", "sub": "broadcast_sub", "mul": "broadcast_mul",
             "div": "broadcast_div", "lesser": "broadcast_lesser",
             "lesser_equal": "broadcast_lesser_equal"}.get(kind, "broadcast_" + kind)
    return invoke(bname, [a, b], {})[0]


def fluent(name):
    """The ``nd.<name>`` function for fluent methods (``x.sum()``), or None."""
    from . import _internal_ops
    return getattr(_internal_ops, name, None)


def make_function(op_name, op):
    """Build the ``nd.<op_name>`` front end from an op record (no exec)."""
    def fn(*args, out=None, name=None, **kwargs):
        attrs_kw, inputs = {}, []
        names = None
        if op.key_var_num_args or callable(op.inputs):
            arrays = [a for a in args if isinstance(a, NDArray)]
            if op.key_var_num_args and op.key_var_num_args not in kwargs:
                if len(arrays) == 1 and isinstance(args[0], (list, tuple)):
                    arrays = list(args[0])
                kwargs[op.key_var_num_args] = len(arrays)
            for k in list(kwargs):
                if isinstance(kwargs[k], NDArray):
                    arrays.append(kwargs.pop(k))
            inputs = arrays
            attrs_kw = kwargs
        else:
            names = op.input_names(op.params.parse(op_name, _params_only(op, kwargs)))
            pos = list(args)
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
                raise ParamError(f"{op_name}: got {len(pos)} unexpected positional arguments")
            attrs_kw = kwargs
        attrs = op.params.parse(op_name, attrs_kw)
        if names is not None and len(inputs) != len(op.input_names(attrs)):
            need = op.input_names(attrs)
            raise MXNetError(f"{op_name}: expected {len(need)} inputs {list(need)}, "
                             f"got {len(inputs)}")
        res = invoke_op(op, attrs, inputs, out)
        if out is not None:
            return out
        return res[0] if len(res) == 1 else res

    fn.__name__ = op_name
    fn.__qualname__ = op_name
    fn.__doc__ = op.doc or f"{op.name} operator.\n\nParameters\n----------\n{op.params.doc()}"
    params = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
               for k in op.params.fields]
    params += [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None),
               inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None)]
    fn.__signature__ = inspect.Signature(params)
    return fn


def _params_only(op, kwargs):
    return {k: v for k, v in kwargs.items() if k in op.params.fields}


def populate(namespace: dict, sparse: bool = False):
    """Add a front end for every registered op (and alias) to ``namespace``."""
    for key, op in all_ops().items():
        pub = key
        if sparse and key.startswith("_sparse_"):
            pub = key[len("_sparse_"):]
        namespace.setdefault(pub, make_function(key, op))
        if pub != key:
            namespace[pub] = make_function(key, op)
