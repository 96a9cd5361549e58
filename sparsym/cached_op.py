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

from . import autograd
from . import storage as st
from .base import MXNetError
from .ndarray.ndarray import NDArray, wrap

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
        ``hybridize`` options (kept for inspection).
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
        self.last_executor = None

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

    def _executor(self, key, ctx, args, auxs, reqs, recording):
        """A bound executor for this signature that no pending backward still needs."""
        pool = self._execs.setdefault(key, [])
        for entry in pool:
            exe, owner = entry
            if not recording or owner is None or owner() is None or exe._state != "train":
                entry[1] = None
                return entry
        entry = [self._bind(ctx, args, auxs, reqs), None]
        pool.append(entry)
        return entry

    def __call__(self, data):
        """Outputs (list of NDArray) of the graph on the inputs ``data``."""
        if not data:
            raise MXNetError("a hybridized Block needs at least one NDArray input")
        ctx = data[0].context
        args = [data[s] if isinstance(s, int) else self._param_array(s, ctx)
                for s in self._arg_src]
        auxs = [data[s] if isinstance(s, int) else self._param_array(s, ctx)
                for s in self._aux]
        ag = autograd
        recording = ag.is_recording()
        if recording:
            reqs = tuple(
                ("write" if a._ag is not None else "null") if isinstance(s, int) else
                ("write" if s.grad_req != "null" else "null")
                for s, a in zip(self._arg_src, args))
            recording = any(r != "null" for r in reqs)
        if not recording:
            reqs = ("null",) * len(args)
        key = (ctx, reqs) + tuple((a.shape, a._raw.dtype, a.stype) for a in args) + \
            tuple((a.shape, a._raw.dtype, a.stype) for a in auxs)
        entry = self._executor(key, ctx, args, auxs, reqs, recording)
        exe = entry[0]
        exe.arg_arrays[:] = args
        exe.aux_arrays[:] = auxs
        self.last_executor = exe
        is_train = ag.is_training()
        if not recording:
            outs = exe.forward(is_train=is_train)
            return [wrap(o._raw, ctx) for o in outs]
        fn = _GraphCall(exe, reqs, is_train, ctx)
        entry[1] = weakref.ref(fn)
        outs = fn(*args)
        return [outs] if not isinstance(outs, (list, tuple)) else list(outs)


class _GraphCall(autograd.Function):
    """One recorded call of a bound graph: forward and backward run the executor."""

    def __init__(self, exe, reqs, is_train, ctx):
        super().__init__()
        self._exe = exe
        self._reqs = reqs
        self._is_train = is_train
        self._ctx = ctx

    def forward(self, *args):
        outs = self._exe.forward(is_train=self._is_train)
        outs = [wrap(o._raw, self._ctx) for o in outs]
        return outs[0] if len(outs) == 1 else outs

    def backward(self, *ograds):
        exe = self._exe
        exe.backward(list(ograds))
        grads = []
        for g, a in zip(exe.grad_arrays, exe.arg_arrays):
            if g is None:
                grads.append(wrap(np.zeros(a.shape, a._raw.dtype), self._ctx))
                continue
            grads.append(wrap(g._raw, self._ctx))
            # the next backward writes into fresh buffers, not into this result
            g._raw = st.zeros_raw(g.stype, g.shape, g._raw.dtype)
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
