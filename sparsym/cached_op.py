"""A Symbol run on NDArrays as one recorded call: a hybridized Block's compiled graph and
``mx.nd.CachedOp``, bound through the executor.

One executor per input signature (shapes, dtypes, storage types, context, whether
gradients are wanted); binding the same graph again reuses the executor layer's plan
cache. Parameter arrays are bound as they are, so sparse Parameters keep their storage
and the executor infers every other storage type (``storage_report()``).
"""
from __future__ import annotations

import weakref

import numpy as np

from . import storage as st
from .base import MXNetError
from .graph import topo_order
from .ndarray.ndarray import NDArray, wrap
from .ndarray.op import invoke_op
from .ndarray.tape import STATE
from .ndarray.tape import record as tape_record
from .ops.control.autograd_function import CUSTOM_FUNCTION
from .ops.core.registry import get_op

__all__ = ["CachedGraph", "CachedOp"]


class CachedGraph:
    """Run a traced Symbol on NDArrays, recording one autograd node per call.

    Parameters
    ----------
    sym : Symbol
        The traced graph.
    data_names : dict
        Input variable name (argument or aux state) -> position among the call's
        (non-None) inputs.
    params : ParameterDict
        Parameters by full name; every other argument and aux state must be one.
    flags : list of (str, value)
        ``hybridize`` options. ``inline_limit`` (default 2, as MXNet's): a graph of at most
        that many operators runs op by op while autograd records, so the tape (and
        ``autograd.get_symbol``) holds its operators rather than one call.
    """

    def __init__(self, sym, data_names, params, flags=()):
        self.symbol = sym
        self.flags = dict(flags)
        self._arg_src = []
        used = []
        for name in sym.list_arguments():
            if name in data_names:
                self._arg_src.append(data_names[name])
                continue
            if name not in params:
                raise MXNetError(f"hybridized graph argument '{name}' is neither an input nor "
                                 "a Parameter of the Block")
            self._arg_src.append(params[name])
            used.append(params[name])
        self._aux = []
        for name in sym.list_auxiliary_states():
            if name in data_names:
                self._aux.append(data_names[name])
                continue
            if name not in params:
                raise MXNetError(f"hybridized graph auxiliary state '{name}' is not a "
                                 "Parameter of the Block")
            self._aux.append(params[name])
        self.params = used + [p for p in self._aux if not isinstance(p, int)]
        self._execs = {}
        self._null_reqs = None
        self.last_executor = None
        self._inline = None  # the graph's nodes in order when it is inlined, else False
        self._inline_sig = None  # (ctx, per input (stype, shape, dtype)) of the last inlined call

    @staticmethod
    def _param_array(p, ctx):
        if p._data is None:
            p._check_and_get(None, ctx)  # raises the deferred / not-initialized error
        return p._check_and_get(p._data, ctx)

    def _bind(self, ctx, args, auxs, reqs):
        grads = []
        for src, a, r in zip(self._arg_src, args, reqs):
            if r == "null":
                grads.append(None)
                continue
            stype = src._grad_stype if not isinstance(src, int) else "default"
            grads.append(wrap(st.zeros_raw(stype, a.shape, a._raw.dtype), ctx))
        return self.symbol.bind(ctx, args=list(args), args_grad=grads, grad_req=list(reqs),
                                aux_states=list(auxs))

    def _runner(self, key, ctx, args, auxs, reqs, recording):
        """A bound executor for this signature that no pending backward still needs."""
        pool = self._execs.get(key)
        if pool is None:
            pool = self._execs[key] = []
        for r in pool:
            if not recording or r.free():
                return r
        r = _GraphRunner(self._bind(ctx, args, auxs, reqs), ctx)
        pool.append(r)
        return r

    def __call__(self, data):
        """Outputs (list of NDArray) of the graph on the inputs ``data``."""
        if not data:
            raise MXNetError("a hybridized Block needs at least one NDArray input")
        ctx = data[0]._ctx
        args = [data[s] if s.__class__ is int else self._param_array(s, ctx)
                for s in self._arg_src]
        auxs = [data[s] if s.__class__ is int else self._param_array(s, ctx)
                for s in self._aux]
        recording = STATE.recording
        if recording and self._inline is not False:
            order = self._inline_order()
            if order:
                return self._run_inline(order, args, auxs)
        if recording:
            reqs = tuple(
                ("write" if _needs_grad(a._ag) else "null") if s.__class__ is int else
                ("write" if s.grad_req != "null" else "null")
                for s, a in zip(self._arg_src, args))
            recording = "write" in reqs
        if not recording:
            reqs = self._null_reqs
            if reqs is None or len(reqs) != len(args):
                reqs = self._null_reqs = ("null",) * len(args)
        key = [ctx, reqs]
        for a in args:
            r = a._raw
            key += (r.__class__, r.shape, r.dtype)
        for a in auxs:
            r = a._raw
            key += (r.__class__, r.shape, r.dtype)
        runner = self._runner(tuple(key), ctx, args, auxs, reqs, recording)
        exe = runner.exe
        exe.arg_arrays[:] = args
        exe.aux_arrays[:] = auxs
        self.last_executor = exe
        outs = exe.forward(is_train=STATE.training)
        outs = [wrap(o._raw, ctx) for o in outs]
        if recording:
            runner.record(args, outs)
        return outs


    def _inline_order(self):
        """The graph's nodes in order if it is small enough to inline, else False."""
        if self._inline is None:
            order = topo_order(self.symbol._outputs)
            ops = [n for n in order if n.op is not None]
            limit = self.flags.get("inline_limit", 2)
            used = [(n, i) for m in ops for n, i in m.inputs] + list(self.symbol._outputs)
            # an entry past an op's visible outputs has no NDArray to carry it
            visible = all(n.op is None or i < n.op.n_visible(n.params) for n, i in used)
            self._inline = order if ops and len(ops) <= int(limit) and visible else False
            self._inline_names = (self.symbol.list_arguments(),
                                  self.symbol.list_auxiliary_states())
        return self._inline

    def _run_inline(self, order, args, auxs):
        """Run the graph op by op through the imperative path (each op recorded)."""
        self._inline_sig = (args[0]._ctx if args else None,
                            [(a.stype, a.shape, a.dtype) for a in args],
                            [(a.stype, a.shape, a.dtype) for a in auxs])
        arg_names, aux_names = self._inline_names
        by_name = dict(zip(arg_names, args))
        by_name.update(zip(aux_names, auxs))
        vals = {}
        for node in order:
            if node.op is None:
                vals[(id(node), 0)] = by_name[node.name]
                continue
            outs = invoke_op(node.op, node.params, [vals[(id(n), i)] for n, i in node.inputs])
            for i, o in enumerate(outs):
                vals[(id(node), i)] = o
        return [vals[(id(n), i)] for n, i in self.symbol._outputs]


    def report_executor(self):
        """The executor of the last call, bound on demand for an inlined one (zeros of its
        signature: storage inference depends on storage types and shapes only)."""
        if self.last_executor is None and self._inline_sig is not None:
            ctx, arg_sig, aux_sig = self._inline_sig

            def fresh(sig):
                return [wrap(st.zeros_raw(s, shape, dt), ctx) for s, shape, dt in sig]
            reqs = ["null" if s.__class__ is int or s.grad_req == "null" else "write"
                    for s in self._arg_src]
            self.last_executor = self._bind(ctx, fresh(arg_sig), fresh(aux_sig), reqs)
        return self.last_executor


def _needs_grad(entry):
    """Whether an input's tape entry wants a gradient: a marked variable or the live output
    of a recorded call (an array an earlier recorded call read as a constant does not)."""
    if entry is None:
        return False
    node = entry[0]
    return node.grad is not None if node.op is None else node.values is not None


class _GraphRunner:
    """One bound executor of a CachedGraph, recorded on the autograd tape as a call whose
    backward runs the executor's backward.

    The runner is the node's ``function`` parameter and lives as long as its executor, so
    a training loop records the same node parameters every step: the tape's signature is
    stable and autograd reuses its backward plan (MXNet's CachedOp is one graph node too).
    """

    autograd_stable = True  # autograd: the node's parameters identify it across steps
    skips_unused = True  # _backward_raw may leave out gradients nothing reads

    def __init__(self, exe, ctx):
        self.exe = exe
        self.ctx = ctx
        self.attrs = None
        self.node = None  # weak reference to the tape node of the pending call

    def free(self):
        """Whether no recorded call still waits for this executor's backward."""
        node = self.node() if self.node is not None else None
        return node is None or node.values is None or not self.exe.awaits_backward

    def record(self, args, outs):
        """Append this call to the tape (when an input is on it)."""
        if self.attrs is None:
            op = get_op("_CustomFunction")
            self.attrs = op.params.parse("_CustomFunction", {
                "num_inputs": len(args), "num_outputs": len(outs), "function": self,
                "out_shapes": tuple(tuple(o.shape) for o in outs),
                "out_dtypes": tuple(np.dtype(o.dtype).name for o in outs)})
        tape_record(CUSTOM_FUNCTION, self.attrs, args, tuple(o._raw for o in outs), outs)
        ag = outs[0]._ag
        self.node = weakref.ref(ag[0]) if ag is not None else None

    def grad_stypes(self):
        """The stype of each argument's gradient: row_sparse where the executor's gradient
        array is (a sparse_grad Embedding's weight), so it reaches the parameter as is."""
        return tuple("default" if g is None else g.stype for g in self.exe.grad_arrays)

    def _backward_raw(self, ograds, unused=()):
        """Raw gradients of every argument for raw head gradients ``ograds``; None at the
        positions ``unused`` (gradients nobody reads) that the executor did not compute."""
        exe = self.exe
        exe.backward([wrap(g, self.ctx) for g in ograds])
        grads = []
        for k, (g, a) in enumerate(zip(exe.grad_arrays, exe.arg_arrays)):
            if g is None:
                grads.append(None if k in unused else np.zeros(a.shape, a._raw.dtype))
                continue
            raw = g._raw
            if raw.__class__ is not np.ndarray and g.stype == "default":
                raw = st.todense(raw)
            grads.append(raw)
            # the caller may adopt the result: the next backward writes fresh buffers
            g._raw = np.empty_like(raw) if raw.__class__ is np.ndarray else \
                st.zeros_raw(g.stype, g.shape, raw.dtype)
        return grads


class CachedOp:
    """A Symbol compiled once and called on NDArrays (MXNet's ``mx.nd.CachedOp``).

    Parameters
    ----------
    sym : Symbol
        The graph; a call takes its inputs in ``sym.list_inputs()`` order (arguments and
        auxiliary states as they appear in the graph).
    flags : sequence of (str, value), optional
        MXNet's CachedOp options (``static_alloc``, ``static_shape``...); accepted and kept:
        the executor already keeps one plan and buffer set per input signature.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.sym.var("x")
    >>> op = mx.nd.CachedOp(x * 2 + 1)
    >>> op(mx.nd.ones((2,))).asnumpy().tolist()
    [3.0, 3.0]
    """

    def __init__(self, sym, flags=()):
        self.symbol = sym
        self.flags = list(flags)
        self._inputs = sym.list_inputs()
        self._graph = CachedGraph(sym, {n: i for i, n in enumerate(self._inputs)}, {}, flags)

    def __call__(self, *args, out=None, default_ctx=None, **kwargs):
        """Run the graph on ``args`` (NDArrays in ``list_inputs()`` order); one output is
        returned as an NDArray, several as a list. ``out`` receives the outputs instead."""
        if kwargs:
            raise TypeError(f"CachedOp.__call__ got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if len(args) != len(self._inputs):
            raise MXNetError(f"CachedOp: expected {len(self._inputs)} inputs "
                             f"{self._inputs}, got {len(args)}")
        for name, a in zip(self._inputs, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"CachedOp: input '{name}' must be an NDArray, got "
                                f"{type(a).__name__}")
        outs = self._graph(list(args))
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            if len(targets) != len(outs):
                raise MXNetError(f"CachedOp: expected {len(outs)} output arrays in out, got "
                                 f"{len(targets)}")
            for t, o in zip(targets, outs):
                t[:] = o
            return out
        return outs[0] if len(outs) == 1 else outs
