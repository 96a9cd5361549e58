"""Array allocation for simple_bind, array checking for bind, and reshape."""
from __future__ import annotations

import logging
from collections import OrderedDict

import numpy as np

from .. import storage as st
from ..base import MXNetError, ShapeError
from ..context import Context
from ..graph import IndexedGraph
from ..ndarray.ndarray import NDArray, wrap
from .plan import Plan, get_plan
from .pool import MemoryPool

logger = logging.getLogger("sparsym")


_REQS = ("null", "write", "add", "inplace")


def _check_req(v, where):
    if v not in _REQS:
        raise ValueError(f"grad_req={v} is not a valid input in {where}; only 'null', "
                         "'write', and 'add' are supported")
    return "write" if v == "inplace" else v


def normalize_grad_req(grad_req: str | list | tuple | dict, arg_names: list,
                       where: str) -> dict:
    """grad_req as {argument: 'null' | 'write' | 'add'} (MXNet's str / list / dict forms)."""
    if isinstance(grad_req, str):
        req = _check_req(grad_req, where)
        return dict.fromkeys(arg_names, req)
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise ValueError(f"The length of grad_req list does not match the number of input "
                             f"arguments in {where}, expected {len(arg_names)}, provided "
                             f"{len(grad_req)}")
        return {n: _check_req(r, where) for n, r in zip(arg_names, grad_req)}
    if isinstance(grad_req, dict):
        return {n: _check_req(grad_req.get(n, "null"), where) for n in arg_names}
    raise TypeError(f"{where}: grad_req must be a str, list or dict, got "
                    f"{type(grad_req).__name__}")


def _zeros(stype, shape, dtype, ctx):
    return wrap(st.zeros_raw(stype, shape, dtype), ctx)


def _group_ctx(node, group2ctx, ctx):
    """The context of a node's ``ctx_group`` in ``group2ctx`` (else the default)."""
    if group2ctx:
        g = node.attr.get("__ctx_group__")
        if g is not None and g in group2ctx:
            return group2ctx[g]
    return ctx


def _reshape_or_create(buffer, key, shape, dtype, ctx):
    """MXNet's ReshapeOrCreate: view a big enough dense array of ``buffer`` (same dtype),
    else allocate one and put it in ``buffer`` for the next executor."""
    have = buffer.get(key)
    size = int(np.prod(shape, dtype=np.int64))
    if have is not None and have.stype == "default":
        raw = have._raw
        if raw.size >= size:
            if raw.dtype != np.dtype(dtype):
                raise MXNetError(f"simple_bind: shared_buffer[{key!r}] has dtype {raw.dtype}, "
                                 f"the graph needs {np.dtype(dtype)}")
            if raw.shape == tuple(shape):
                return have
            return wrap(raw.reshape(-1)[:size].reshape(shape), ctx)
        logger.warning("Bucketing: data %s has a shape %s, which is larger than already "
                       "allocated shape %s. Need to re-allocate. Consider putting default "
                       "bucket key to be the bucket taking the largest input for better "
                       "memory sharing.", key, tuple(shape), raw.shape)
    arr = _zeros("default", shape, dtype, ctx)
    buffer[key] = arr
    return arr


def _check_shared(name, arr, shape, dtype, stype, what):
    if arr.shape != tuple(shape) or np.dtype(arr.dtype) != dtype or arr.stype != stype:
        raise ShapeError(
            f"simple_bind: {what} {name} of shared_exec is {arr.stype} {arr.shape} "
            f"{np.dtype(arr.dtype).name}, but this graph infers {stype} {tuple(shape)} "
            f"{np.dtype(dtype).name}; shared arguments must match (leave {name} out of "
            "shared_arg_names to give this executor its own array)")


def allocate(graph: IndexedGraph, ctx: Context, plan: Plan, reqs: dict, group2ctx: dict | None,
             shared_arg_names, shared_exec, shared_buffer: dict | None) -> tuple:
    """Create an executor's arrays (MXNet 1.9's simple_bind): parameters named in
    ``shared_arg_names`` (and their gradients) and aux states are taken from ``shared_exec``;
    other dense arguments are views of ``shared_buffer`` arrays when big enough. Returns
    (arguments, gradients, aux states, grad_reqs, memory pool, outputs)."""
    shapes, dtypes, stypes = plan.shapes, plan.dtypes, plan.stypes
    nodes = graph.arg_nodes
    shared_names = set(shared_arg_names or ())
    if shared_exec is not None:
        s_args = dict(zip(shared_exec._plan.arg_names, shared_exec.arg_arrays))
        s_grads = dict(zip(shared_exec._plan.arg_names, shared_exec.grad_arrays))
    else:
        s_args = s_grads = {}
    arg_arrays, grad_arrays, req_list = [], [], []
    for node, e, ge in zip(nodes, plan.arg_eids, plan.grad_eids):
        name = node.name
        actx = _group_ctx(node, group2ctx, ctx)
        shape, dtype, stype = shapes[e], dtypes[e], stypes[e]
        req = reqs.get(name, "null")
        req_list.append(req)
        gstype = stypes[ge] if ge is not None else stype
        if name in shared_names and name in s_args:
            arr = s_args[name]
            _check_shared(name, arr, shape, dtype, stype, "argument")
            arg_arrays.append(arr)
            garr = s_grads.get(name) if req != "null" else None
            if req != "null" and garr is None:
                garr = _zeros(gstype, shape, dtype, actx)
            grad_arrays.append(garr)
            continue
        if shared_buffer is not None and stype == "default":
            arr = _reshape_or_create(shared_buffer, name, shape, dtype, actx)
        else:
            arr = _zeros(stype, shape, dtype, actx)
        arg_arrays.append(arr)
        if req == "null":
            grad_arrays.append(None)
        elif shared_buffer is not None and gstype == "default":
            grad_arrays.append(_reshape_or_create(shared_buffer, name + "_grad", shape, dtype,
                                                  actx))
        else:
            grad_arrays.append(_zeros(gstype, shape, dtype, actx))
    s_aux = dict(zip(shared_exec._plan.aux_names, shared_exec.aux_arrays)) \
        if shared_exec is not None else {}
    aux_arrays = []
    for node, e in zip(graph.aux_nodes, plan.aux_eids):
        arr = s_aux.get(node.name)
        if arr is not None:
            _check_shared(node.name, arr, shapes[e], dtypes[e], stypes[e], "auxiliary state")
        else:
            arr = _zeros(stypes[e], shapes[e], dtypes[e], _group_ctx(node, group2ctx, ctx))
        aux_arrays.append(arr)
    outputs = _outputs(plan, group2ctx, ctx)
    if shared_exec is not None:
        pool = shared_exec._pool
    elif shared_buffer is not None:
        pool = _buffer_pool(shared_buffer)
    else:
        pool = None
    return arg_arrays, grad_arrays, aux_arrays, req_list, pool, outputs


_BUFFER_POOLS: OrderedDict[int, MemoryPool] = OrderedDict()


def _buffer_pool(shared_buffer):
    """The pool of executors bound with one ``shared_buffer`` dict (and no shared_exec).

    Keyed by the dict's id (dicts cannot be weakly referenced); a stale entry after the
    dict dies only makes unrelated executors share a pool, which is safe (a buffer is
    handed out only while nothing uses it), and the table is bounded.
    """
    key = id(shared_buffer)
    pool = _BUFFER_POOLS.get(key)
    if pool is None:
        pool = _BUFFER_POOLS[key] = MemoryPool()
        if len(_BUFFER_POOLS) > 64:
            _BUFFER_POOLS.popitem(last=False)
    else:
        _BUFFER_POOLS.move_to_end(key)
    return pool


def _outputs(plan, group2ctx, ctx):
    outs = []
    for (node, _), e in zip(plan.graph.heads, plan.head_eids):
        outs.append(_zeros(plan.stypes[e], plan.shapes[e], plan.dtypes[e],
                           _group_ctx(node, group2ctx, ctx)))
    return outs


def _as_list(values, names, what):
    if values is None:
        return [None] * len(names)
    if isinstance(values, dict):
        return [values.get(n) for n in names]
    values = list(values)
    if len(values) != len(names):
        raise ValueError(f"Length of {what} does not match the number of arguments")
    return values


def bind_given(graph: IndexedGraph, ctx: Context, args, args_grad, grad_req, aux_states,
               group2ctx: dict | None) -> tuple:
    """Check user arrays for a bind (MXNet 1.9's bind) and plan ``graph`` for their shapes,
    dtypes and stypes. Returns (plan, arguments, gradients, aux states, grad_reqs,
    outputs)."""
    g = graph
    arg_names = [n.name for n in g.arg_nodes]
    aux_names = [n.name for n in g.aux_nodes]
    if not isinstance(args, (list, tuple, dict)):
        raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
    if isinstance(args, dict):
        for n in arg_names:
            if n not in args:
                raise ValueError(f"key `{n}` is missing in `args`")
    arg_list = _as_list(args, arg_names, "args")
    for a in arg_list:
        if not isinstance(a, NDArray):
            raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
    grad_list = _as_list(args_grad, arg_names, "args_grad")
    for a in grad_list:
        if a is not None and not isinstance(a, NDArray):
            raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
    aux_list = _as_list(aux_states, aux_names, "aux_states")
    reqs = normalize_grad_req(grad_req, arg_names, "bind")
    reqs = {n: (r if gr is not None else "null")
            for (n, r), gr in zip(reqs.items(), grad_list)}
    shapes = {n: tuple(a.shape) for n, a in zip(arg_names, arg_list)}
    dtypes = {n: np.dtype(a.dtype) for n, a in zip(arg_names, arg_list)}
    stypes = {n: a.stype for n, a in zip(arg_names, arg_list)}
    for n, a in zip(aux_names, aux_list):
        if a is not None:
            shapes[n], dtypes[n], stypes[n] = tuple(a.shape), np.dtype(a.dtype), a.stype
    plan = get_plan(graph, shapes, dtypes, stypes, reqs)
    aux_arrays = [a if a is not None else _zeros(plan.stypes[e], plan.shapes[e], plan.dtypes[e],
                                                  ctx)
                  for a, e in zip(aux_list, plan.aux_eids)]
    grads = []
    for n, gr, e in zip(arg_names, grad_list, plan.arg_eids):
        if gr is not None and gr.shape != tuple(plan.shapes[e]):
            raise ShapeError(f"bind: gradient array for {n} has shape {gr.shape}, expected "
                             f"{tuple(plan.shapes[e])}")
        grads.append(gr)  # MXNet keeps a given array under grad_req 'null' (untouched)
    return (plan, list(arg_list), grads, aux_arrays, [reqs[n] for n in arg_names],
            _outputs(plan, group2ctx, ctx))


def _reuse(old, shape, name, what, provided, partial_shaping, allow_up_sizing, ctx):
    """MXNet's reshape rule for one array: same shape -> same array; smaller -> a view of
    the old memory; larger -> a new array (only with allow_up_sizing)."""
    if old is None:
        return None
    if old.shape == tuple(shape):
        return old
    if not partial_shaping and name not in provided:
        raise MXNetError(f"Shape of unspecifie {what}: {name} changed. This can cause the new "
                         "executor to not share parameters with the old one. Please check for "
                         "error in network.If this is intended, set partial_shaping=True to "
                         "suppress this warning.")
    size = int(np.prod(shape, dtype=np.int64))
    if size > old.size:
        if not allow_up_sizing:
            raise MXNetError(f"New shape of {what}: {name} is larger than original.First making "
                             "a big executor and then down sizing it is more efficient than the "
                             "reverse.If you really want to up size, set allow_up_sizing=True to "
                             "enable allocation of new arrays.")
        return _zeros(old.stype, shape, old.dtype, old.context)
    if old.stype != "default":
        return _zeros(old.stype, shape, old.dtype, old.context)
    return wrap(old._raw.reshape(-1)[:size].reshape(shape), old.context)


def reshape_arrays(exe, partial_shaping: bool, allow_up_sizing: bool, kwargs: dict) -> tuple:
    """The plan and arrays of MXNet's Executor.reshape: shapes inferred from ``kwargs``,
    memory shared with ``exe``. Returns (plan, arguments, gradients, aux states, outputs,
    indices of the outputs that view the old ones)."""
    plan = exe._plan
    names = set(plan.input_names)
    shapes = {}
    for k, v in kwargs.items():
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"reshape: shape of {k} must be a tuple, got {v!r}")
        if k in names:
            shapes[k] = tuple(int(d) for d in v)
    dtypes = {n: plan.dtypes[e] for n, e in zip(plan.arg_names, plan.arg_eids)}
    stypes = {n: plan.stypes[e] for n, e in zip(plan.arg_names, plan.arg_eids)}
    reqs = dict(zip(plan.arg_names, exe._grad_req_list))
    new = get_plan(exe.graph, shapes, dtypes, stypes, reqs)
    args, grads = [], []
    for i, (name, e) in enumerate(zip(new.arg_names, new.arg_eids)):
        shape = new.shapes[e]
        args.append(_reuse(exe.arg_arrays[i], shape, name, "arg", shapes, partial_shaping,
                           allow_up_sizing, exe._ctx))
        grads.append(_reuse(exe.grad_arrays[i], shape, name, "arg", shapes, True, True,
                            exe._ctx))
    aux = [_reuse(old, new.shapes[e], name, "aux", shapes, partial_shaping, allow_up_sizing,
                  exe._ctx)
           for old, name, e in zip(exe.aux_arrays, new.aux_names, new.aux_eids)]
    # outputs: views of the old outputs' memory where they fit (MXNet shares it too)
    outs, views = _outputs(new, exe._group2ctx, exe._ctx), set()
    for i, (old, fresh) in enumerate(zip(exe.outputs, outs)):
        if (old.stype == fresh.stype == "default" and old.dtype == fresh.dtype
                and fresh.size <= old.size and old._raw.flags.c_contiguous):
            outs[i] = _reuse(old, fresh.shape, "", "output", (), True, False, old.context)
            views.add(i)
    return new, args, grads, aux, outs, views
