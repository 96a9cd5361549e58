"""Executor: arrays allocated per plan; forward()/backward() run the plan's steps."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import MXNetError, ShapeError, dtype_of
from ..context import current_context
from ..ndarray.ndarray import NDArray, wrap
from ..ops import rules
from .plan import get_plan

__all__ = ["Executor", "simple_bind", "bind"]

_REQS = ("null", "write", "add", "inplace")


def _normalize_grad_req(grad_req, arg_names, where):
    if isinstance(grad_req, str):
        if grad_req not in _REQS:
            raise ValueError(f"grad_req={grad_req} is not a valid input in {where}; only 'null', "
                             "'write', and 'add' are supported")
        req = "write" if grad_req == "inplace" else grad_req
        return {n: req for n in arg_names}
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise ValueError(f"{where}: grad_req list has {len(grad_req)} entries for "
                             f"{len(arg_names)} arguments")
        out = dict(zip(arg_names, grad_req))
    elif isinstance(grad_req, dict):
        out = {n: grad_req.get(n, "null") for n in arg_names}
    else:
        raise TypeError(f"{where}: grad_req must be a str, list or dict, got "
                        f"{type(grad_req).__name__}")
    for k, v in out.items():
        if v not in _REQS:
            raise ValueError(f"grad_req={v} is not a valid input in {where}; only 'null', "
                             "'write', and 'add' are supported")
        if v == "inplace":
            out[k] = "write"
    return out


def _write(target: NDArray, value, req):
    """Apply a gradient request to a persistent array."""
    if req == "null":
        return
    mine = target._raw
    if req == "add":
        if isinstance(mine, np.ndarray):
            mine += st.todense(value)
            return
        if isinstance(mine, st.RSP) and isinstance(value, st.RSP):
            from ..kernels import rsp as krsp
            target._raw = krsp.add_rsp_rsp(mine, value, 1.0, 1.0)
            return
        target._raw = st.cast_raw(st.todense(mine) + st.todense(value), target.stype)
        return
    if isinstance(mine, np.ndarray):
        np.copyto(mine, st.todense(value), casting="unsafe")
    else:
        target._raw = st.cast_raw(value, target.stype)


class Executor:
    """A bound computation: persistent argument, gradient, auxiliary and output arrays.

    Create with :meth:`Symbol.simple_bind` or :meth:`Symbol.bind`.
    """

    def __init__(self, symbol, ctx, plan, arg_arrays, grad_arrays, aux_arrays, grad_reqs,
                 group2ctx=None):
        self._symbol = symbol
        self._ctx = ctx
        self._plan = plan
        self.arg_arrays = arg_arrays
        self.grad_arrays = grad_arrays
        self.aux_arrays = aux_arrays
        self._grad_req_list = grad_reqs
        self._group2ctx = group2ctx
        self.outputs = [wrap(st.zeros_raw(plan.stypes[e], plan.shapes[e], plan.dtypes[e]), ctx)
                        for e in plan.head_eids]
        self._env = [None] * plan.graph.num_entries
        self._monitor = None
        self._monitor_all = False
        self._arg_index = {n: i for i, n in enumerate(plan.arg_names)}
        self._forward_done = False
        self._is_train = False

    # ------------------------------------------------------------------ dicts
    @property
    def arg_dict(self):
        return dict(zip(self._plan.arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        return {n: g for n, g in zip(self._plan.arg_names, self.grad_arrays) if g is not None}

    @property
    def aux_dict(self):
        return dict(zip(self._plan.aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        return dict(zip(self._plan.output_names, self.outputs))

    @property
    def plan(self):
        return self._plan

    # ------------------------------------------------------------------ running
    def forward(self, is_train=False, **kwargs):
        """Run the forward steps; kwargs copy new values into arguments first.

        Returns
        -------
        list of NDArray
            ``self.outputs``.
        """
        plan = self._plan
        for name, value in kwargs.items():
            i = self._arg_index.get(name)
            if i is None:
                raise TypeError(f"Unknown argument {name}")
            arr = self.arg_arrays[i]
            vshape = tuple(value.shape)
            if vshape != arr.shape:
                raise ValueError(f"Shape not match! Argument {name}, need: {arr.shape}, "
                                 f"received: {vshape}")
            arr._assign(value)
        env = self._env
        for e, a in zip(plan.arg_eids, self.arg_arrays):
            env[e] = a._raw
        for e, a in zip(plan.aux_eids, self.aux_arrays):
            env[e] = a._raw
        self._run(plan.forward_steps, is_train)
        for o, e in zip(self.outputs, plan.head_eids):
            o._raw = env[e]
        self._forward_done = True
        self._is_train = is_train
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Run the backward steps and apply each argument's grad_req.

        out_grads: head gradients (NDArray or list); required for non-loss outputs.
        """
        plan = self._plan
        if not plan.backward_steps and not any(e is not None for e in plan.grad_eids):
            return
        if not self._forward_done:
            raise MXNetError("backward called before forward")
        env = self._env
        if out_grads is not None and not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]
        for i, e in enumerate(plan.head_grad_eids):
            if e is None:
                continue
            if out_grads is None or i >= len(out_grads) or out_grads[i] is None:
                raise MXNetError(
                    f"output {plan.output_names[i]}: head_gradient is required when calling "
                    "backward. If you are attempting to minimize the output as an objective, "
                    "please modify your network and pass it through the make_loss symbol.")
            g = out_grads[i]
            g = g._raw if isinstance(g, NDArray) else np.asarray(g)
            if tuple(g.shape) != tuple(plan.shapes[e]):
                raise ShapeError(f"backward: head gradient {i} has shape {tuple(g.shape)}, "
                                 f"expected {plan.shapes[e]}")
            env[e] = g
        self._run(plan.backward_steps, is_train)
        for garr, e, req in zip(self.grad_arrays, plan.grad_eids, plan.grad_reqs):
            if garr is None or req == "null":
                continue
            if e is None:  # no path from this argument to an output: zero gradient
                if req == "write":
                    garr._raw = st.zeros_raw(garr.stype, garr.shape, garr._raw.dtype)
                continue
            _write(garr, env[e], req)

    def _run(self, steps, is_train):
        env = self._env
        monitor = self._monitor
        for s in steps:
            ins = [env[i] for i in s.in_eids]
            if s.mode == "fallback":
                ins = [st.todense(x) for x in ins]
            try:
                outs = s.kernel(s.train_attrs if is_train else s.attrs, ins)
            except rules.Conflict as c:
                rules.raise_conflict(c, s.name, s.op_name)
            except Exception as err:
                if not getattr(err, "_sparsym_ctx", False):
                    msg = f"{err.args[0] if err.args else err}\n  while executing {s.describe()}"
                    err.args = (msg,) + tuple(err.args[1:])
                    try:
                        err._sparsym_ctx = True
                    except AttributeError:
                        pass
                raise
            if s.mode == "fallback":
                outs = [st.cast_raw(v, t) for v, t in zip(outs, s.out_stypes)]
            for e, v in zip(s.out_eids, outs):
                env[e] = v
            if monitor is not None:
                for j, e in enumerate(s.out_eids):
                    monitor(f"{s.name}_output{j if len(s.out_eids) > 1 else ''}",
                            wrap(env[e], self._ctx))

    # ------------------------------------------------------------------ misc API
    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` after every node's output is computed."""
        self._monitor = callback
        self._monitor_all = monitor_all

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy values from dicts of arrays into this executor's arguments/aux states."""
        for name, arr in arg_params.items():
            if name in self._arg_index:
                self.arg_arrays[self._arg_index[name]]._assign(arr)
            elif not allow_extra_params:
                raise ValueError(f'Find name "{name}" that is not in the arguments')
        if aux_params:
            aux = self.aux_dict
            for name, arr in aux_params.items():
                if name in aux:
                    aux[name]._assign(arr)
                elif not allow_extra_params:
                    raise ValueError(f'Find name "{name}" that is not in the auxiliary states')

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing parameters where shapes match."""
        from .bind_arrays import reshape_executor
        return reshape_executor(self, partial_shaping, allow_up_sizing, kwargs)

    def debug_str(self):
        from .report import debug_str
        return debug_str(self)

    def storage_report(self):
        """One row per node: op, input/output stypes, dispatch mode, densified bytes."""
        from .report import StorageReport
        return StorageReport.from_executor(self)

    def get_optimized_symbol(self):
        return self._symbol


# ---------------------------------------------------------------------- binding
def simple_bind(symbol, ctx, grad_req, type_dict, stype_dict, group2ctx, shared_arg_names,
                shared_exec, shared_buffer, kwargs):
    from .bind_arrays import allocate
    ctx = ctx or current_context()
    arg_names = symbol.list_arguments()
    reqs = _normalize_grad_req(grad_req, arg_names, "simple_bind")
    shapes = {}
    for k, v in kwargs.items():
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"simple_bind: shape of {k} must be a tuple, got {v!r}")
        shapes[k] = tuple(int(d) for d in v)
    dtypes = {k: dtype_of(v) for k, v in (type_dict or {}).items()}
    stypes = {k: st.check_stype(v, "simple_bind: ") for k, v in (stype_dict or {}).items()}
    try:
        plan = get_plan(symbol, shapes, dtypes, stypes, reqs)
    except ShapeError as err:
        args = "\n".join(f"{k}: {v}" for k, v in shapes.items())
        raise type(err)(f"simple_bind error. Arguments:\n{args}\n{err}") from None
    return allocate(symbol, ctx, plan, reqs, group2ctx, shared_arg_names, shared_exec,
                    shared_buffer)


def bind(symbol, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec):
    from .bind_arrays import bind_given
    return bind_given(symbol, ctx or current_context(), args, args_grad, grad_req, aux_states,
                      group2ctx, shared_exec, _normalize_grad_req)
