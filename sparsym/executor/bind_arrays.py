"""Array allocation for simple_bind, array checking for bind, and reshape."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import MXNetError, ShapeError
from ..ndarray.ndarray import NDArray, wrap
from .plan import get_plan


def _new(plan, e, ctx):
    return wrap(st.zeros_raw(plan.stypes[e], plan.shapes[e], plan.dtypes[e]), ctx)


def _matches(arr, plan, e):
    return (arr is not None and arr.shape == tuple(plan.shapes[e])
            and np.dtype(arr.dtype) == plan.dtypes[e] and arr.stype == plan.stypes[e])


def _ctx_for(name_attr, group2ctx, ctx):
    if group2ctx and name_attr in group2ctx:
        return group2ctx[name_attr]
    return ctx


def allocate(symbol, ctx, plan, reqs, group2ctx, shared_arg_names, shared_exec, shared_buffer):
    """Create the executor's arrays; share by name with ``shared_exec`` / ``shared_buffer``."""
    from .executor import Executor
    nodes = {n.name: n for n in plan.graph.input_nodes}
    shared_args = shared_exec.arg_dict if shared_exec is not None else {}
    shared_grads = shared_exec.grad_dict if shared_exec is not None else {}
    shared_names = set(shared_arg_names) if shared_arg_names is not None else set(shared_args)
    arg_arrays, grad_arrays = [], []
    for name, e, ge in zip(plan.arg_names, plan.arg_eids, plan.grad_eids):
        actx = _ctx_for(nodes[name].attr.get("__ctx_group__"), group2ctx, ctx)
        arr = shared_args.get(name) if name in shared_names else None
        if arr is not None and not _matches(arr, plan, e):
            arr = None
        if arr is None and shared_buffer is not None and name in shared_buffer \
                and name not in shared_names:
            cand = shared_buffer[name]
            if _matches(cand, plan, e):
                arr = cand
        if arr is None:
            arr = _new(plan, e, actx)
            if shared_buffer is not None and name not in shared_names \
                    and plan.stypes[e] == "default":
                shared_buffer[name] = arr
        arg_arrays.append(arr)
        if reqs.get(name, "null") == "null":
            grad_arrays.append(None)
            continue
        gstype = plan.stypes[ge] if ge is not None else plan.stypes[e]
        garr = shared_grads.get(name) if name in shared_names else None
        if garr is None or garr.shape != arr.shape or garr.stype != gstype:
            garr = wrap(st.zeros_raw(gstype, plan.shapes[e], plan.dtypes[e]), actx)
        grad_arrays.append(garr)
    aux_arrays = []
    shared_aux = shared_exec.aux_dict if shared_exec is not None else {}
    for name, e in zip(plan.aux_names, plan.aux_eids):
        arr = shared_aux.get(name)
        aux_arrays.append(arr if _matches(arr, plan, e) else _new(plan, e, ctx))
    return Executor(symbol, ctx, plan, arg_arrays, grad_arrays, aux_arrays,
                    [reqs.get(n, "null") for n in plan.arg_names], group2ctx)


def _as_list(values, names, what):
    if values is None:
        return [None] * len(names)
    if isinstance(values, dict):
        for k in values:
            if k not in names:
                raise ValueError(f"Find name \"{k}\" in {what} that is not in the arguments")
        return [values.get(n) for n in names]
    values = list(values)
    if len(values) != len(names):
        raise ValueError(f"Length of {what} does not match the number of arguments")
    return values


def bind_given(symbol, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec,
               normalize):
    """Bind user arrays; shapes/dtypes/stypes are taken from them."""
    from .executor import Executor
    arg_names = symbol.list_arguments()
    aux_names = symbol.list_auxiliary_states()
    if isinstance(args, dict):
        for n in arg_names:
            if n not in args:
                raise ValueError(f"key `{n}` is missing in `args`")
    arg_list = _as_list(args, arg_names, "args")
    for n, a in zip(arg_names, arg_list):
        if not isinstance(a, NDArray):
            raise TypeError(f"bind: argument {n} must be an NDArray, got {type(a).__name__}")
    grad_list = _as_list(args_grad, arg_names, "args_grad")
    aux_list = _as_list(aux_states, aux_names, "aux_states")
    reqs = normalize(grad_req, arg_names, "bind")
    if args_grad is None:
        reqs = {n: "null" for n in arg_names}
    else:
        reqs = {n: (r if g is not None else "null")
                for (n, r), g in zip(reqs.items(), grad_list)}
    shapes = {n: a.shape for n, a in zip(arg_names, arg_list)}
    dtypes = {n: a.dtype for n, a in zip(arg_names, arg_list)}
    stypes = {n: a.stype for n, a in zip(arg_names, arg_list)}
    for n, a in zip(aux_names, aux_list):
        if a is not None:
            shapes[n], dtypes[n], stypes[n] = a.shape, a.dtype, a.stype
    plan = get_plan(symbol, shapes, dtypes, stypes, reqs)
    aux_arrays = [a if a is not None else _new(plan, e, ctx)
                  for a, e in zip(aux_list, plan.aux_eids)]
    grads = []
    for n, g, e, ge in zip(arg_names, grad_list, plan.arg_eids, plan.grad_eids):
        if g is not None and g.shape != tuple(plan.shapes[e]):
            raise ShapeError(f"bind: gradient array for {n} has shape {g.shape}, expected "
                             f"{plan.shapes[e]}")
        grads.append(g if reqs[n] != "null" else None)
    return Executor(symbol, ctx, plan, arg_list, grads, aux_arrays,
                    [reqs[n] for n in arg_names], group2ctx)


def reshape_executor(exe, partial_shaping, allow_up_sizing, kwargs):
    """MXNet's Executor.reshape: new input shapes, parameters shared when unchanged."""
    plan = exe._plan
    shapes = {}
    for name, e in zip(plan.arg_names, plan.arg_eids):
        shapes[name] = tuple(kwargs.get(name, plan.shapes[e]))
    new = exe._symbol.simple_bind(exe._ctx, grad_req=dict(zip(plan.arg_names, exe._grad_req_list)),
                                  type_dict={n: plan.dtypes[e] for n, e in
                                             zip(plan.arg_names, plan.arg_eids)},
                                  stype_dict={n: plan.stypes[e] for n, e in
                                              zip(plan.arg_names, plan.arg_eids)},
                                  **shapes)
    for i, name in enumerate(plan.arg_names):
        old, fresh = exe.arg_arrays[i], new.arg_arrays[i]
        if old.shape == fresh.shape:
            new.arg_arrays[i] = old
            if exe.grad_arrays[i] is not None:
                new.grad_arrays[i] = exe.grad_arrays[i]
        else:
            if name not in kwargs and not partial_shaping:
                raise MXNetError(f"Shape of unspecifie arg: {name} changed. This can cause the "
                                 "new executor to not share parameters with the old one. Please "
                                 "check for error in network. If this is intended, set "
                                 "partial_shaping=True to suppress this warning.")
            if fresh.size > old.size and not allow_up_sizing:
                raise MXNetError(f"New shape of arg: {name} is larger than original. First making "
                                 "a big executor and then down sizing it is more efficient than "
                                 "the reverse. If you really want to up size, set "
                                 "allow_up_sizing=True to enable allocation of new arrays.")
    for i, old in enumerate(exe.aux_arrays):
        if old.shape == new.aux_arrays[i].shape:
            new.aux_arrays[i] = old
    return new
