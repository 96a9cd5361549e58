"""Executor: arrays allocated per plan; forward()/backward() run the plan's steps."""
from __future__ import annotations

import sys
import threading

import numpy as np

from .. import profiler
from .. import storage as st
from ..base import MXNetError, ShapeError, dtype_of
from ..context import current_context, require_usable
from ..graph import IndexedGraph, entry_name
from ..kernels.onednn.core import Tensor as _Blocked
from ..kernels.onednn.core import to_plain
from ..ndarray.ndarray import NDArray, wrap
from ..ops.core import rules
from .bind_arrays import allocate, bind_given, normalize_grad_req, reshape_arrays
from .plan import get_plan

__all__ = ["Executor", "simple_bind", "bind"]

def _can_adopt(mine, value) -> bool:
    """Whether a 'write' may hand ``value``'s buffer to the gradient array instead of copying.

    Only when nothing else can see either buffer: both own their memory (no pool views, no
    views of them alive) and the only references are the executor's env slot, the gradient
    NDArray and this call chain (CPython reference counts). A fresh gradient buffer costs a
    page fault per 4 KiB on first write, often more than the kernel that produced it.
    """
    return (type(value) is np.ndarray and value.base is None and mine.base is None
            and value.shape == mine.shape and value.dtype == mine.dtype
            and value.flags.c_contiguous and value.flags.writeable
            and sys.getrefcount(value) <= _ADOPT_REFS and sys.getrefcount(mine) <= _ADOPT_REFS)


# references to each buffer while _can_adopt runs: the env slot (value) or the NDArray's
# _raw (mine), _write's local, _can_adopt's argument and getrefcount's own argument
_ADOPT_REFS = 4


def _write(target: NDArray, value, req):
    """Apply a gradient request to a persistent array."""
    mine = target._raw
    if value is mine:
        return  # the kernel wrote into the gradient array directly
    if req == "add":
        if isinstance(mine, np.ndarray):
            mine += st.todense(value)
            st.bump(mine)
            return
        if isinstance(mine, st.RSP) and isinstance(value, st.RSP):
            from ..kernels import rsp as krsp
            target._raw = krsp.add_rsp_rsp(mine, value, 1.0, 1.0)
            return
        target._raw = st.cast_raw(st.todense(mine) + st.todense(value), target.stype)
        return
    if isinstance(mine, np.ndarray):
        if _can_adopt(mine, value):
            target._raw = value
            return
        np.copyto(mine, st.todense(value), casting="unsafe")
        st.bump(mine)
    else:
        target._raw = st.cast_raw(value, target.stype)


def _one_thread(method):
    """Run ``method`` with the executor marked busy; a second thread entering meanwhile gets
    an error instead of reading buffers the first is releasing (MXNet is not thread-safe
    here either: one executor, or Module, per thread)."""
    import functools

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if not self._busy.acquire(False):
            raise MXNetError(f"Executor.{method.__name__}: this executor is running in another "
                             "thread; an executor (and a Module) is not thread-safe: use one "
                             "per thread")
        try:
            return method(self, *args, **kwargs)
        finally:
            self._busy.release()
    return guarded


class Executor:
    """A bound computation: persistent argument, gradient, auxiliary and output arrays.

    Create with :meth:`Symbol.simple_bind` or :meth:`Symbol.bind`. Intermediate results
    live only as long as they are needed (their buffers come from a :class:`MemoryPool`
    shared with executors bound through ``shared_exec``).

    Examples
    --------
    >>> import sparsym as mx
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> exe = (2 * a + b).bind(mx.cpu(), {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([2, 3])},
    ...                        args_grad={'a': mx.nd.zeros(2), 'b': mx.nd.zeros(2)})
    >>> exe.forward(is_train=True)[0].asnumpy().tolist()
    [4.0, 7.0]
    >>> exe.backward(mx.nd.array([1, 1]))
    >>> exe.grad_dict['a'].asnumpy().tolist()
    [2.0, 2.0]
    """

    def __init__(self, graph, ctx, plan, arg_arrays, grad_arrays, aux_arrays, grad_reqs,
                 group2ctx=None, pool=None, outputs=None, symbol=None):
        from .pool import MemoryPool
        self.graph = graph  # the IndexedGraph bound; the plan may come from an equal one
        self._symbol = symbol  # the Symbol bound, if any (get_optimized_symbol, monitors)
        self._ctx = ctx
        self._plan = plan
        self.arg_arrays = arg_arrays
        self.grad_arrays = grad_arrays
        self.aux_arrays = aux_arrays
        self._grad_req_list = grad_reqs
        self._group2ctx = group2ctx
        self._pool = pool if pool is not None else MemoryPool()
        self._busy = threading.Lock()
        self._slot_buf = self._pool.assign(plan.memory.slot_bytes)
        self.outputs = outputs if outputs is not None else [
            wrap(st.zeros_raw(plan.stypes[e], plan.shapes[e], plan.dtypes[e]), ctx)
            for e in plan.head_eids]
        self._env = [None] * plan.graph.num_entries
        self._specs = None
        self._programs = {}
        # a graph whose gradients need no steps (x + random) still trains: backward must
        # not recompute (and redraw) the forward
        self._trains = bool(plan.backward_steps) or any(e is not None for e in plan.grad_eids)
        # (argument index, gradient entry or None, req) of the gradients backward writes
        self._grad_writes = tuple((i, e, r) for i, (e, r) in
                                  enumerate(zip(plan.grad_eids, plan.grad_reqs)) if r != "null")
        self._head_grads = any(e is not None for e in plan.head_grad_eids)
        self._monitor = None
        self._monitor_all = False
        self._arg_index = None
        # None | 'infer' (forward only) | 'train' (backward can run) | 'spent' (after backward)
        self._state = None
        self._last_is_train = False
        self._names = None
        self._out_names = None
        # outputs that are views of a parent executor's output memory (Executor.reshape):
        # forward writes into them instead of rebinding them
        self._out_views = frozenset()

    # ------------------------------------------------------------------ arrays and dicts
    # the dicts are cached (MXNet does too) and rebuilt when a list is replaced
    @property
    def arg_arrays(self):
        """Argument arrays in list_arguments order."""
        return self._arrays[0]

    @arg_arrays.setter
    def arg_arrays(self, value):
        self._set_arrays(0, value)

    @property
    def grad_arrays(self):
        """Gradient arrays in list_arguments order (None where grad_req is 'null')."""
        return self._arrays[1]

    @grad_arrays.setter
    def grad_arrays(self, value):
        self._set_arrays(1, value)

    @property
    def aux_arrays(self):
        """Auxiliary state arrays in list_auxiliary_states order."""
        return self._arrays[2]

    @aux_arrays.setter
    def aux_arrays(self, value):
        self._set_arrays(2, value)

    @property
    def outputs(self):
        """Output arrays (updated by every forward)."""
        return self._arrays[3]

    @outputs.setter
    def outputs(self, value):
        self._set_arrays(3, value)

    def _set_arrays(self, i, value):
        if not hasattr(self, "_arrays"):
            self._arrays = [[], [], [], []]
            self._dicts = [None] * 4
        self._arrays[i] = value
        self._dicts[i] = None

    def _dict(self, i, names):
        d = self._dicts[i]
        if d is None:
            if len(set(names)) != len(names):
                raise ValueError(f"Duplicate names detected, {list(names)}")
            d = self._dicts[i] = dict(zip(names, self._arrays[i]))
        return d

    @property
    def arg_dict(self):
        """{argument name: NDArray}."""
        return self._dict(0, self._plan.arg_names)

    @property
    def grad_dict(self):
        """{argument name: gradient NDArray or None (grad_req 'null')}."""
        return self._dict(1, self._plan.arg_names)

    @property
    def aux_dict(self):
        """{auxiliary state name: NDArray}."""
        return self._dict(2, self._plan.aux_names)

    @property
    def output_dict(self):
        """{output name (``<node>_output``): NDArray}."""
        return self._dict(3, self.output_names)

    @property
    def output_names(self):
        """Output names of this executor's symbol (``<node>_output``)."""
        if self._out_names is None:
            self._out_names = [entry_name(e) for e in self.graph.heads]
        return self._out_names

    @property
    def plan(self):
        """The frozen :class:`~sparsym.executor.plan.Plan` this executor runs."""
        return self._plan

    def node_name(self, name):
        """The name of a plan node in this executor's symbol.

        A cached plan may come from another symbol with the same structure whose generated
        operator names differ (``_plus3`` vs ``_plus7``); messages use this symbol's names.
        """
        if self._names is None:
            self._names = _rename_map(self.graph.nodes, self._plan.graph.nodes)
        return self._names.get(name, name) if self._names else name

    @property
    def pool(self):
        """The :class:`~sparsym.executor.pool.MemoryPool` of intermediate buffers."""
        return self._pool

    # ------------------------------------------------------------------ running
    @_one_thread
    def forward(self, is_train=False, **kwargs):
        """Run the forward steps; ``kwargs`` copy new values into arguments first.

        Parameters
        ----------
        is_train : bool
            Training mode (Dropout, BatchNorm); keep what backward needs.
        **kwargs : name=NDArray or numpy array

        Returns
        -------
        list of NDArray
            ``self.outputs``.
        """
        if kwargs:
            if self._arg_index is None:
                self._arg_index = {n: i for i, n in enumerate(self._plan.arg_names)}
            for name, value in kwargs.items():
                if not isinstance(value, (NDArray, np.ndarray)):
                    raise ValueError("only accept keyword argument of NDArrays and "
                                     "numpy.ndarray")
                i = self._arg_index.get(name)
                if i is None:
                    raise TypeError(f"Unknown argument {name}")
                arr = self.arg_arrays[i]
                if tuple(value.shape) != arr.shape:
                    raise ValueError(f"Shape not match! Argument {name}, need: {arr.shape}, "
                                     f"received: {tuple(value.shape)}")
                arr._assign(value)
        self._forward(is_train, keep=is_train or not self._plan.backward_steps)
        return self.outputs

    def _forward(self, is_train, keep):
        """Run forward; ``keep``: the training schedule (keep what backward reads)."""
        plan = self._plan
        env = self._env = [None] * len(self._env)
        arrays = self._arrays
        for e, a in zip(plan.arg_eids, arrays[0]):
            env[e] = a._raw
        for e, a in zip(plan.aux_eids, arrays[2]):
            env[e] = a._raw
        train = keep and self._trains
        self._run_part(0, is_train, train)
        if plan.blocked:  # the plan's edge: users see NumPy arrays
            _unblock(env, plan.head_eids)
        views = self._out_views
        if views:
            for i, (o, e) in enumerate(zip(arrays[3], plan.head_eids)):
                if i in views and o._raw.shape == env[e].shape:
                    np.copyto(o._raw, env[e], casting="unsafe")
                    st.bump(o._raw)
                else:
                    o._raw = env[e]
        else:
            for o, e in zip(arrays[3], plan.head_eids):
                o._raw = env[e]
        self._state = "train" if train else "infer"
        self._last_is_train = is_train

    @_one_thread
    def backward(self, out_grads=None, is_train=True):
        """Run the backward steps and apply each argument's grad_req.

        Parameters
        ----------
        out_grads : NDArray, list of NDArray or dict {output name: NDArray}, optional
            Head gradients; required for outputs that are not loss heads.
        is_train : bool

        Notes
        -----
        Intermediate results are released as soon as backward has read them. Backward
        before any forward runs the training forward first. A second
        backward without a new forward recomputes the forward pass (same values), except
        for graphs whose training forward is not repeatable (Dropout, BatchNorm), where it
        raises MXNetError.
        """
        plan = self._plan
        if not self._trains:
            self._zero_unreached_grads()
            return
        if self._state is None:
            # MXNet runs the backward pass on whatever its forward buffers hold (zeros
            # before any forward); running the training forward first gives true gradients
            self._forward(True, keep=True)
        heads = self._head_values(out_grads) if (out_grads is not None
                                                 or self._head_grads) else ()
        if self._state != "train":
            if self._state == "spent" and self._last_is_train and plan.stateful_forward:
                raise MXNetError(
                    "backward called again without a new forward: the intermediate results "
                    "were released and this graph's training-mode forward is not repeatable "
                    "(Dropout masks, BatchNorm statistics); call forward(is_train=True) first")
            # the last forward dropped what backward reads (inference schedule, or a
            # previous backward released it): recompute it in the same mode
            self._forward(self._last_is_train, keep=True)
        env = self._env
        for e, g in heads:
            env[e] = g
        self._run_part(1, is_train, True)
        if plan.blocked:
            _unblock(env, [e for e in plan.grad_eids if e is not None])
        grads = self._arrays[1]
        for i, e, req in self._grad_writes:
            garr = grads[i]
            if garr is None:
                continue
            if e is None:  # no path from this argument to an output: zero gradient
                if req == "write":
                    garr._raw = st.zeros_raw(garr.stype, garr.shape, garr._raw.dtype)
                continue
            _write(garr, env[e], req)
        # free everything but the bound arrays; a second backward recomputes forward
        self._env = [None] * len(env)
        self._state = "spent"

    def _head_values(self, out_grads):
        """[(head gradient entry, raw value)] from backward's ``out_grads``, checked and
        copied into the inferred stype and dtype as MXNet does."""
        plan = self._plan
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads.get(k) for k in self.output_names]
        for g in out_grads:
            if g is not None and not isinstance(g, NDArray):
                raise TypeError("inputs must be NDArray")
        heads = []
        for i, e in enumerate(plan.head_grad_eids):
            if e is None:
                continue
            if i >= len(out_grads) or out_grads[i] is None:
                raise MXNetError(
                    "Because the last operator is not Loss function, head_gradient is required "
                    f"when calling backward (output {self.output_names[i]}). If you are "
                    "attempting to minimize the output as an objective, please modify your "
                    "network and pass it through the make_loss symbol.")
            g = out_grads[i]._raw
            if st.stype_of(g) != plan.stypes[e]:  # MXNet copies into the inferred stype
                g = st.cast_raw(g, plan.stypes[e])
            want = plan.dtypes[e]
            if want is not None and st.stype_of(g) == "default" and g.dtype != want:
                g = g.astype(want)  # MXNet copies the head gradient into the output's dtype
            if tuple(g.shape) != tuple(plan.shapes[e]):
                raise ShapeError(f"backward: head gradient {i} ({self.output_names[i]}) has "
                                 f"shape {tuple(g.shape)}, expected {tuple(plan.shapes[e])}")
            heads.append((e, g))
        return heads

    def backward_from_values(self, env: list, out_grads: list, grad_arrays: list,
                             aux_arrays: list, is_train: bool = True) -> None:
        """Run the backward steps over forward values computed elsewhere.

        ``env`` holds every forward entry's raw value in plan order (autograd's tape
        recorded them while the imperative calls ran), so no forward is run and the
        argument arrays are never read. Gradients go to ``grad_arrays`` by the plan's
        grad_reqs. The executor keeps none of the arrays afterwards.
        """
        self.arg_arrays = []
        self.grad_arrays = grad_arrays
        self.aux_arrays = aux_arrays
        self._env = env
        self._state = "train"
        self._last_is_train = is_train
        try:
            self.backward(out_grads, is_train=is_train)
        finally:
            self._env = [None] * len(env)
            self._state = None
            self.arg_arrays = self.grad_arrays = self.aux_arrays = []

    @property
    def awaits_backward(self) -> bool:
        """Whether a training forward ran and its backward has not run yet."""
        return self._state == "train"

    def _zero_unreached_grads(self):
        for garr, req in zip(self.grad_arrays, self._plan.grad_reqs):
            if garr is not None and req == "write":
                garr._raw = st.zeros_raw(garr.stype, garr.shape, garr._raw.dtype)

    def _out_specs(self):
        """Per step: None (pure kernel) or, per output, how to get its buffer."""
        if self._specs is None:
            specs = []
            for s in self._plan.forward_steps + self._plan.backward_steps:
                if not s.writes_out:
                    specs.append(None)
                    continue
                specs.append(tuple(
                    (slot, self._slot_buf[slot] if slot >= 0 else -1, inpl, garg, shape, dt)
                    for slot, inpl, garg, shape, dt in zip(s.out_slots, s.out_inplace,
                                                           s.out_grad, s.out_shapes,
                                                           s.out_dtypes)))
            self._specs = specs
        return self._specs

    def _buffers(self, spec, ins):
        """Output buffers of an ``out``-capable step: gradient arrays, in-place inputs,
        pool views (when free) or fresh arrays."""
        pool = self._pool
        outs = []
        for _slot, buf, inpl, garg, shape, dt in spec:
            if garg >= 0:
                g = self.grad_arrays[garg]._raw
                if type(g) is np.ndarray and g.shape == shape and g.dtype == dt \
                        and g.flags.c_contiguous:
                    outs.append(g)
                    continue
            if buf >= 0:
                if inpl >= 0 and self._monitor is None:
                    x = ins[inpl]
                    if type(x) is np.ndarray and pool.owns(buf, x) and x.dtype == dt \
                            and x.shape == shape:
                        outs.append(x)
                        continue
                outs.append(pool.view(buf, shape, dt))
                continue
            outs.append(np.empty(shape, dt))
        return tuple(outs)

    def _run_part(self, part, is_train, train):
        """Run the forward (``part`` 0) or backward (1) steps; ``train``: the training
        schedule of releases. Without a monitor, profiler or oneDNN layouts to attend to,
        the steps run as a flat list of kernel calls (:meth:`_program`)."""
        plan = self._plan
        if self._monitor is None and not plan.blocked and not profiler.RUN.symbolic:
            prog = self._programs.get((part, is_train, train))
            if prog is None:
                prog = self._program(part, is_train, train)
            self._run_flat(prog, part)
            return
        mem = plan.memory
        if part == 0:
            self._run(plan.forward_steps, is_train,
                      mem.release_train if train else mem.release_infer, 0)
        else:
            n_fwd = len(plan.forward_steps)
            self._run(plan.backward_steps, is_train, mem.release_train[n_fwd:], n_fwd)

    def _program(self, part, is_train, train):
        """The steps of one part as (kernel, attrs, input entries, output entries, entries
        to release after it, output buffer spec or None): everything that does not depend
        on the values is decided here once."""
        plan = self._plan
        mem = plan.memory
        n_fwd = len(plan.forward_steps)
        if part == 0:
            steps, offset = plan.forward_steps, 0
            release = mem.release_train if train else mem.release_infer
        else:
            steps, offset = plan.backward_steps, n_fwd
            release = mem.release_train[n_fwd:]
        specs = self._out_specs()
        prog = []
        for j, s in enumerate(steps):
            kernel = s.kernel
            if s.mode == "fallback":
                kernel = _fallback_kernel(kernel, s.out_stypes)
            prog.append((kernel, s.train_attrs if is_train else s.attrs, s.in_eids, s.out_eids,
                         tuple(release[j]), specs[offset + j]))
        prog = tuple(prog)
        self._programs[(part, is_train, train)] = prog
        return prog

    def _run_flat(self, prog, part):
        """Run a :meth:`_program`: per step, gather the inputs, call the kernel, store the
        outputs and drop what no later step reads."""
        env = self._env
        j = 0
        try:
            for kernel, attrs, in_eids, out_eids, release, spec in prog:
                ins = [env[i] for i in in_eids]
                if spec is None:
                    outs = kernel(attrs, ins)
                else:
                    outs = kernel(attrs, ins, out=self._buffers(spec, ins))
                for e, v in zip(out_eids, outs):
                    env[e] = v
                ins = outs = None
                for e in release:
                    env[e] = None
                j += 1
        except rules.Conflict as c:
            s = (self._plan.forward_steps if part == 0 else self._plan.backward_steps)[j]
            from ..passes.infer_attr import raise_conflict
            raise_conflict(self._plan.graph, s.index, c, c.kind)
        except Exception as err:
            s = (self._plan.forward_steps if part == 0 else self._plan.backward_steps)[j]
            _add_context(err, f"node {self.node_name(s.name)} ({s.op_name})")
            raise

    def _run(self, steps, is_train, release, offset):
        env = self._env
        monitor = self._monitor
        prof = profiler.RUN.symbolic
        specs = self._out_specs()
        blocked = self._plan.blocked
        for j, s in enumerate(steps):
            ins = [env[i] for i in s.in_eids]
            if blocked and not s.blocked:
                ins = _unblock(env, s.in_eids, ins)
            if s.mode == "fallback":
                ins = [st.todense(x) for x in ins]
            if monitor is not None and self._monitor_all:
                self._monitor_inputs(s, ins)
            attrs = s.train_attrs if is_train else s.attrs
            spec = specs[offset + j]
            if prof:
                t0 = profiler.now_us()
            try:
                if spec is not None:
                    outs = s.kernel(attrs, ins, out=self._buffers(spec, ins))
                else:
                    outs = s.kernel(attrs, ins)
            except rules.Conflict as c:
                from ..passes.infer_attr import raise_conflict
                raise_conflict(self._plan.graph, s.index, c, c.kind)
            except Exception as err:
                _add_context(err, f"node {self.node_name(s.name)} ({s.op_name})")
                raise
            if s.mode == "fallback":
                outs = [st.cast_raw(v, t) for v, t in zip(outs, s.out_stypes)]
            if prof:
                self._profile_step(s, t0, outs if spec is None else ())
            for e, v in zip(s.out_eids, outs):
                env[e] = v
            ins = outs = None
            if monitor is not None:
                node = self.node_name(s.name)
                if blocked:
                    _unblock(env, s.out_eids)
                for name, e in zip(s.out_names, s.out_eids):
                    if env[e] is not None:  # an output no step reads may be skipped
                        monitor(f"{node}_{name}", wrap(env[e], self._ctx))
            for e in release[j]:
                env[e] = None

    def _profile_step(self, s, t0, outs):
        """Record one step for mx.profiler (called only while symbolic profiling runs);
        ``outs``: its newly allocated outputs (pooled buffers are not new memory)."""
        dev = self._ctx.device_id if self._ctx is not None else 0
        profiler.record_op(s.op_name, t0, profiler.now_us(), dev)
        if profiler.RUN.memory:
            profiler.track_memory(outs, dev)

    def _monitor_inputs(self, s, ins):
        """MXNet's monitor_all order: per input, the variable it reads (if it reads one),
        then the input as ``<node>_<input name>``."""
        node = self._plan.graph.nodes[s.index]
        names = node.op.monitor_input_names or node.op.input_names(node.params)
        name = self.node_name(s.name)
        for (src, _), nm, x in zip(node.inputs, names, ins):
            arr = wrap(to_plain(x), self._ctx)
            if src.is_variable:
                self._monitor(self.node_name(src.name), arr)
            self._monitor(f"{name}_{nm}", arr)

    # ------------------------------------------------------------------ misc API
    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, NDArray)`` for every op output (``<node>_<output>``), and
        with ``monitor_all`` for every op input (``<node>_<input>``) before it runs."""
        self._monitor = callback
        self._monitor_all = bool(monitor_all)

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy values from dicts of arrays into this executor's arguments and aux states.

        Raises
        ------
        ValueError
            For a name that is not an argument (auxiliary state) unless
            ``allow_extra_params``.
        ShapeError
            When a value's shape differs from the bound array's.
        """
        args = self.arg_dict
        for name, arr in arg_params.items():
            if name in args:
                _copy_into(args[name], arr, name)
            elif not allow_extra_params:
                raise ValueError(f'Find name "{name}" that is not in the arguments')
        if aux_params is None:
            return
        aux = self.aux_dict
        for name, arr in aux_params.items():
            if name in aux:
                _copy_into(aux[name], arr, name)
            elif not allow_extra_params:
                raise ValueError(f"Find name {name} that is not in the auxiliary states")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing memory with this one.

        Arrays whose shape is unchanged are the same objects; smaller ones are views of the
        old memory. ``partial_shaping`` allows arguments not named in ``kwargs`` to change
        shape; ``allow_up_sizing`` allows allocating arrays larger than the old ones.
        """
        plan, args, grads, aux, outs, views = reshape_arrays(self, partial_shaping,
                                                             allow_up_sizing, kwargs)
        out = Executor(self.graph, self._ctx, plan, args, grads, aux, list(self._grad_req_list),
                       self._group2ctx, self._pool, outs, symbol=self._symbol)
        out._out_views = frozenset(views)
        if self._monitor is not None:
            out.set_monitor_callback(self._monitor, self._monitor_all)
        return out

    def debug_str(self):
        """MXNet's plan listing plus dispatch modes and memory totals: "Total N MB
        allocated" is, as in MXNet, the graph's own memory (the intermediate plan's peak
        live bytes); the next line lists the bound arrays too."""
        from .report import debug_str
        return debug_str(self)

    def storage_report(self):
        """One row per node: op, input/output stypes, dispatch mode, densified bytes.

        ``print(exe.storage_report())`` prints it as a table.
        """
        from .report import StorageReport
        return StorageReport.from_executor(self)

    def memory_report(self) -> dict:
        """Bytes held by this executor: arguments, gradients, aux states, outputs, and the
        intermediate plan (pooled slots, no-reuse total, peak live) and the pool's buffers."""
        from .report import memory_totals
        return memory_totals(self)

    def get_optimized_symbol(self):
        """The bound symbol, after common-subexpression elimination when
        ``MXNET_ELIMINATE_COMMON_EXPR=1`` (MXNet's switch)."""
        return self._symbol


def _unblock(env, eids, ins=None):
    """Replace oneDNN Tensors among ``env[eids]`` by NumPy arrays (converted once: the
    environment keeps the array); returns ``ins`` with the same replacements."""
    for k, e in enumerate(eids):
        x = env[e]
        if type(x) is _Blocked:
            env[e] = x = to_plain(x)
            if ins is not None:
                ins[k] = x
    return ins


def _fallback_kernel(kernel, out_stypes):
    """``kernel`` run as a storage fallback: inputs densified, outputs cast to the
    inferred stypes."""
    def run(attrs, ins):
        outs = kernel(attrs, [st.todense(x) for x in ins])
        return [st.cast_raw(v, t) for v, t in zip(outs, out_stypes)]
    return run


def _copy_into(dst, value, name):
    shape = tuple(value.shape)
    if shape != dst.shape:
        raise ShapeError(f"copy_params_from: {name} has shape {shape}, the executor's array "
                         f"has shape {dst.shape}")
    dst._assign(value)


def _rename_map(own, planned):
    """{planned node name: own node name} where they differ (same structure, positions
    aligned); backward nodes are named ``<forward node>_<tag>``."""
    if len(own) <= len(planned) and all(a is b for a, b in zip(own, planned)):
        return {}
    m = {b.name: a.name for a, b in zip(own, planned) if a.name != b.name}
    if not m:
        return {}
    for b in planned[len(own):]:
        parts = b.name.split("_")
        for cut in range(len(parts) - 1, 0, -1):
            head = "_".join(parts[:cut])
            if head in m:
                m[b.name] = m[head] + b.name[len(head):]
                break
    return m


def _add_context(err, where):
    """Keep the error's type; append "while executing node X (op)" once."""
    if getattr(err, "_sparsym_ctx", False):
        return
    first = err.args[0] if err.args else str(err)
    err.args = (f"{first}\n  while executing {where}",) + tuple(err.args[1:])
    try:
        err._sparsym_ctx = True
    except AttributeError:
        pass


# ---------------------------------------------------------------------- binding
_BIND_ERRORS: dict = {}


def bind_error(err, args_listing):
    """MXNet wraps simple_bind failures in RuntimeError: the raised error is both the
    original type (ShapeError...) and a RuntimeError, with the arguments listed first."""
    base = type(err)
    cls = _BIND_ERRORS.get(base)
    if cls is None:
        cls = base if issubclass(base, RuntimeError) else type(base.__name__, (base, RuntimeError),
                                                              {"__module__": base.__module__})
        _BIND_ERRORS[base] = cls
    return cls(f"simple_bind error. Arguments:\n{args_listing}{err}")


def simple_bind(graph: IndexedGraph, ctx, grad_req, type_dict: dict | None,
                stype_dict: dict | None, group2ctx: dict | None, shared_arg_names,
                shared_exec, shared_buffer, kwargs: dict, symbol=None) -> Executor:
    """Plan ``graph`` for the shapes in ``kwargs`` and allocate its arrays (see
    :meth:`Symbol.simple_bind`); ``symbol`` is the Symbol bound, kept by the executor."""
    ctx = _usable(ctx or current_context(), group2ctx, "simple_bind")
    fwd = graph
    arg_names = [n.name for n in fwd.arg_nodes]
    names = {n.name for n in fwd.input_nodes}
    shapes = {}
    for k, v in kwargs.items():
        if k not in names:  # MXNet ignores keywords naming no input (take's axis=-1...)
            continue
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"simple_bind: shape of {k} must be a tuple, got {v!r}")
        shapes[k] = tuple(None if d == 0 else int(d) for d in v)
    listing = "".join(f"{k}: {tuple(v)}\n" for k, v in kwargs.items() if k in shapes)
    try:
        reqs = normalize_grad_req(grad_req, arg_names, "simple_bind")
        dtypes = {k: dtype_of(v) for k, v in (type_dict or {}).items() if k in names}
        stypes = {k: st.check_stype(v, "simple_bind: ") for k, v in (stype_dict or {}).items()
                  if k in names}
        plan = get_plan(graph, shapes, dtypes, stypes, reqs)
    except MXNetError as err:
        raise bind_error(err, listing) from None
    except ValueError as err:
        raise bind_error(MXNetError(str(err)), listing) from None
    args, grads, aux, req_list, pool, outs = allocate(
        graph, ctx, plan, reqs, group2ctx, shared_arg_names, shared_exec, shared_buffer)
    return Executor(graph, ctx, plan, args, grads, aux, req_list, group2ctx, pool, outs,
                    symbol=symbol)


def bind(graph: IndexedGraph, ctx, args, args_grad, grad_req, aux_states, group2ctx,
         shared_exec, symbol=None) -> Executor:
    """Bind given arrays to ``graph`` (see :meth:`Symbol.bind`)."""
    ctx = _usable(ctx or current_context(), group2ctx, "bind")
    plan, args, grads, aux, req_list, outs = bind_given(graph, ctx, args, args_grad, grad_req,
                                                        aux_states, group2ctx)
    return Executor(graph, ctx, plan, args, grads, aux, req_list, group2ctx,
                    shared_exec._pool if shared_exec is not None else None, outs,
                    symbol=symbol)


def _usable(ctx, group2ctx, what):
    """``ctx``, after checking it and the group contexts can run (no GPU backend)."""
    if isinstance(ctx, (list, tuple)):  # a data-parallel list: each must be usable
        for c in ctx:
            require_usable(c, f"{what} an executor")
        return ctx
    require_usable(ctx, f"{what} an executor")
    for c in (group2ctx or {}).values():
        require_usable(c, f"{what} an executor")
    return ctx
