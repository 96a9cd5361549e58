"""mx.autograd: record imperative calls, then differentiate them.

Recorded calls are graph nodes of the same operators (see ``sparsym.ndarray.tape``).
``backward`` and ``grad`` hand that graph to the symbolic machinery: the gradient pass
appends the backward nodes and the executor runs them, with the plan cached per tape
signature (ops, parameters, wiring, and the variables' shapes, dtypes and storage types),
so a training loop builds its backward plan once. Sparse gradients, storage fallbacks and
their reports are the executor's, as in the symbolic front end.

With ``create_graph=True`` the backward nodes run one by one as recorded imperative calls
instead, so the gradients are themselves on the tape and can be differentiated again.
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

import numpy as np

from . import storage as st
from .base import MXNetError
from .context import current_context
from .graph import IndexedGraph, Node
from .ndarray.ndarray import NDArray, array, wrap
from .ndarray.tape import STATE, TapeNode, install_autograd, mark
from .ops.control.autograd_function import CUSTOM_FUNCTION
from .ops.core.registry import get_op
from .symbol.symbol import Symbol

__all__ = ["set_recording", "set_training", "is_recording", "is_training", "record", "pause",
           "train_mode", "predict_mode", "mark_variables", "backward", "grad", "get_symbol",
           "Function", "NDArray", "Symbol", "array"]
__reexported__ = ("NDArray", "Symbol", "array")  # MXNet's autograd module exports them too

_REQS = ("null", "write", "add")
_NOT_IN_GRAPH = (
    "Cannot differentiate node because it is not in a computational graph. You need to set "
    "is_recording to true or use autograd.record() to save computational graphs for "
    "backward. If you want to differentiate the same graph twice, you need to pass "
    "retain_graph=True to backward.")


# ----------------------------------------------------------------------------- state
def set_recording(is_recording):
    """Turn recording on or off for this thread; returns the previous state."""
    prev = STATE.recording
    STATE.recording = bool(is_recording)
    return prev


def set_training(train_mode):
    """Turn training mode on or off for this thread; returns the previous state."""
    prev = STATE.training
    STATE.training = bool(train_mode)
    return prev


def is_recording():
    """Whether imperative calls are being recorded for a backward pass."""
    return STATE.recording


def is_training():
    """Whether operators run in training mode (Dropout drops, BatchNorm uses batch stats)."""
    return STATE.training


class _RecordingStateScope:
    """Set recording / training on entry and restore the previous state on exit."""

    def __init__(self, is_record, train_mode):
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record = None
        self._prev_train_mode = None

    def __enter__(self):
        if self._enter_is_record is not None:
            self._prev_is_record = set_recording(self._enter_is_record)
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)

    def __exit__(self, ptype, value, trace):
        if self._enter_is_record is not None and self._prev_is_record != self._enter_is_record:
            set_recording(self._prev_is_record)
        if self._enter_train_mode is not None and \
                self._prev_train_mode != self._enter_train_mode:
            set_training(self._prev_train_mode)


def record(train_mode=True):
    """Scope in which imperative calls are recorded for :func:`backward` / :func:`grad`.

    Parameters
    ----------
    train_mode : bool, default True
        Run the recorded operators in training mode.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([1.0, 2.0, 3.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad.asnumpy().tolist()
    [2.0, 4.0, 6.0]
    """
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):
    """Scope in which calls are not recorded (inside :func:`record`)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope running operators in training mode; recording is unchanged."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope running operators in inference mode; recording is unchanged."""
    return _RecordingStateScope(None, False)


# ----------------------------------------------------------------------------- variables
def _as_list(x, what):
    if isinstance(x, NDArray):
        return [x], True
    if isinstance(x, (list, tuple)):
        for v in x:
            if not isinstance(v, NDArray):
                raise TypeError(f"{what} must be NDArrays, got {type(v).__name__}")
        return list(x), False
    raise TypeError(f"{what} must be an NDArray or a list of NDArrays, got {type(x).__name__}")


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables whose gradients backward stores in ``gradients``.

    Parameters
    ----------
    variables : NDArray or list of NDArray
    gradients : NDArray or list of NDArray
        Gradient buffers, one per variable (same shape).
    grad_reqs : str or list of str, default 'write'
        'write' overwrites the buffer, 'add' accumulates into it, 'null' skips it.
    """
    variables, _ = _as_list(variables, "variables")
    gradients, _ = _as_list(gradients, "gradients")
    if len(variables) != len(gradients):
        raise ValueError(f"mark_variables: {len(variables)} variables but {len(gradients)} "
                         "gradients")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise ValueError(f"mark_variables: {len(variables)} variables but {len(reqs)} "
                         "grad_reqs")
    for v, g, r in zip(variables, gradients, reqs):
        if r not in _REQS:
            raise ValueError(f"grad_req must be one of {list(_REQS)}, got {r!r}")
        if tuple(g.shape) != tuple(v.shape):
            raise ValueError(f"mark_variables: gradient shape {g.shape} differs from the "
                             f"variable's {v.shape}")
        mark(v, g, r)


# ----------------------------------------------------------------------------- backward
def _heads(heads, head_grads):
    heads, _ = _as_list(heads, "heads")
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    else:
        head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError(f"heads and head_grads must have the same length: {len(heads)} vs "
                         f"{len(head_grads)}")
    entries = []
    for h, g in zip(heads, head_grads):
        if h._ag is None:
            raise MXNetError(_NOT_IN_GRAPH)
        if g is not None and not isinstance(g, NDArray):
            raise TypeError(f"head_grads must be NDArrays or None, got {type(g).__name__}")
        if g is not None and tuple(g.shape) != tuple(h.shape):
            raise ValueError(f"head gradient shape {g.shape} differs from its head's "
                             f"{h.shape}")
        entries.append(h._ag)
    return heads, entries, head_grads


def _check_alive(graph):
    for n in graph.nodes:
        if n.values is None:
            raise MXNetError(_NOT_IN_GRAPH)


def _free(graph):
    """Drop the recorded values (backward without retain_graph)."""
    for n in graph.nodes:
        if n.op is not None:
            n.values = None


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of ``heads`` with respect to the marked variables.

    Each variable's gradient is stored in its buffer according to its grad_req.

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Outputs recorded under :func:`record`.
    head_grads : NDArray or list of (NDArray or None), optional
        Gradients of the heads (ones where None).
    retain_graph : bool, default False
        Keep the recorded graph for another backward pass.
    train_mode : bool, default True
        Run the backward ops in training mode.
    """
    heads, entries, head_grads = _heads(heads, head_grads)
    fwd = IndexedGraph(entries)
    _check_alive(fwd)
    wrt = {id(n): (n.grad, n.grad_req) for n in fwd.input_nodes
           if n.grad is not None and n.grad_req != "null"}
    _run_compiled(fwd, heads, head_grads, wrt, train_mode)
    for n in fwd.input_nodes:
        if id(n) in wrt:
            n.fresh = True
    if not retain_graph:
        _free(fwd)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Return the gradients of ``heads`` with respect to ``variables``.

    The variables' own gradient buffers are left alone.

    Parameters
    ----------
    heads : NDArray or list of NDArray
    variables : NDArray or list of NDArray
        Marked variables (:meth:`NDArray.attach_grad`) the heads depend on.
    head_grads : NDArray or list of (NDArray or None), optional
    retain_graph : bool, optional
        Keep the graph for another pass; defaults to ``create_graph``.
    create_graph : bool, default False
        Record the gradient computation, so the results can be differentiated again.
    train_mode : bool, default True

    Returns
    -------
    NDArray or list of NDArray
        One gradient per variable (a list even for a single variable, as in MXNet).

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([1.0, 2.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * x * x
    ...     dx = mx.autograd.grad(y, x, create_graph=True)[0]
    >>> dx.asnumpy().tolist()
    [3.0, 12.0]
    >>> dx.backward()
    >>> x.grad.asnumpy().tolist()
    [6.0, 12.0]
    """
    heads, entries, head_grads = _heads(heads, head_grads)
    variables, _ = _as_list(variables, "variables")
    if retain_graph is None:
        retain_graph = create_graph
    fwd = IndexedGraph(entries)
    _check_alive(fwd)
    for i, v in enumerate(variables):
        if v._ag is None or v._ag[0].op is not None or id(v._ag[0]) not in fwd.node_id:
            raise MXNetError(f"Cannot differentiate with respect to the {i + 1}-th variable "
                             "because it is unreachable from the outputs.")
    if create_graph:
        out = _run_recorded(fwd, entries, head_grads, variables, train_mode)
    else:
        out = []
        wrt = {}
        for v in variables:
            n = v._ag[0]
            if id(n) not in wrt:
                g = wrap(st.zeros_raw(_grad_stype(n, v), v.shape, v._raw.dtype), v._ctx)
                wrt[id(n)] = (g, "write")
            out.append(wrt[id(n)][0])
        _run_compiled(fwd, heads, head_grads, wrt, train_mode)
    if not retain_graph:
        _free(fwd)
    return out


def _grad_stype(node, v):
    return node.grad.stype if node.grad is not None else "default"


# ----------------------------------------------------------------------------- compiled path
_PLANS: OrderedDict[tuple, tuple] = OrderedDict()
_PLANS_MAX = 64
# plans of tapes holding a hybridized block's call keep that block's bound executor (its
# input and gradient arrays) alive through the node's parameters: keep only a few, so
# blocks a program has dropped do not stay in memory (a steady training loop needs one)
_BOUND_PLANS: OrderedDict[tuple, tuple] = OrderedDict()
_BOUND_PLANS_MAX = 4
_PLANS_LOCK = threading.Lock()


def _signature(fwd, heads, reqs):
    """Tape structure: ops, parameters and wiring, the variables' value types, the heads
    and the grad_reqs; None when the tape holds a user Function (its node is one-off; a
    hybridized block's call is marked ``autograd_stable``: the same node every step)."""
    sig = []
    app = sig.append
    for n, ins in zip(fwd.nodes, fwd._in_eids):
        if n.op is None:
            v = n.values[0]
            app((type(v), v.shape, v.dtype))
        elif n.op is CUSTOM_FUNCTION and \
                not getattr(n.params.function, "autograd_stable", False):
            return None
        elif n.op.value_dependent_shape:
            app((n.op.name, n.params, tuple(ins), tuple(v.shape for v in n.values)))
        else:
            app((n.op.name, n.params, tuple(ins)))
    app(tuple(fwd.head_eids()))
    app(tuple(reqs))
    return tuple(sig)


def _copy_graph(fwd):
    """The forward graph as fresh nodes (the plan cache must not keep tape values alive),
    and the recorded shapes of value-dependent outputs by (copied node, index)."""
    new, seeds = {}, {}
    for n in fwd.nodes:
        c = Node(n.op, n.name, n.params, n.attr, [(new[id(p)], i) for p, i in n.inputs],
                 n.given)
        new[id(n)] = c
        if n.op is not None and n.op.value_dependent_shape:
            seeds.update({(c, i): tuple(v.shape) for i, v in enumerate(n.values)})
    return IndexedGraph([(new[id(n)], i) for n, i in fwd.heads]), seeds


def _plan_for(fwd, reqs):
    """(plan, executor) for this tape's structure, built on the first use."""
    key = _signature(fwd, fwd.heads, reqs)
    cache, limit = ((_BOUND_PLANS, _BOUND_PLANS_MAX)
                    if any(n.op is CUSTOM_FUNCTION for n in fwd.nodes) else (_PLANS, _PLANS_MAX))
    if key is not None:
        with _PLANS_LOCK:
            hit = cache.get(key)
            if hit is not None:
                cache.move_to_end(key)
                return hit
    from .executor.executor import Executor
    from .executor.plan import build_plan
    g, seeds = _copy_graph(fwd)
    shapes, dtypes, stypes, grad_reqs = {}, {}, {}, {}
    for n, c, r in zip(fwd.input_nodes, g.input_nodes, reqs):
        v = n.values[0]
        shapes[c.name] = tuple(v.shape)
        dtypes[c.name] = np.dtype(v.dtype)
        stypes[c.name] = st.stype_of(v)
        grad_reqs[c.name] = r
    plan = build_plan(g, shapes, dtypes, stypes, grad_reqs, seeds)
    n_args = len(plan.arg_eids)
    exe = Executor(g, None, plan, [None] * n_args, [None] * n_args,
                   [None] * len(plan.aux_eids), list(plan.grad_reqs))
    hit = (plan, exe, threading.Lock())
    if key is not None:
        with _PLANS_LOCK:
            cache[key] = hit
            if len(cache) > limit:
                cache.popitem(last=False)
    return hit


def _run_compiled(fwd, heads, head_grads, wrt, train_mode):
    """Run the cached backward plan of ``fwd``; ``wrt``: {id(var node): (buffer, req)}."""
    inputs = fwd.input_nodes
    reqs = [wrt[id(n)][1] if id(n) in wrt else "null" for n in inputs]
    plan, exe, lock = _plan_for(fwd, reqs)
    ctx = current_context()
    grads = [wrt[id(n)][0] if id(n) in wrt else None for n in inputs]
    if fwd.aux_nodes:
        pos = {id(n): i for i, n in enumerate(inputs)}
        aux = [wrap(n.values[0], ctx) for n in fwd.aux_nodes]
        grads = [grads[pos[id(n)]] for n in fwd.arg_nodes]
    else:  # no auxiliary states: the arguments are the inputs, in order
        aux = []
    env = [None] * plan.graph.num_entries
    pst = plan.stypes
    off = 0
    for n in fwd.nodes:
        for v in n.values:
            if v.__class__ is not np.ndarray or pst[off] != "default":
                if st.stype_of(v) != pst[off]:  # e.g. an out= target of another stype
                    v = st.cast_raw(v, pst[off])
            env[off] = v
            off += 1
    ograds = []
    for h, g in zip(heads, head_grads):
        ograds.append(g if g is not None else wrap(np.ones(h.shape, h._raw.dtype), ctx))
    prev = set_recording(False)  # Function.backward code must not be recorded
    try:
        with lock:
            # the environment holds every recorded value: backward never reads the
            # argument arrays (no forward is rerun), so they are not wrapped
            exe.backward_from_values(env, ograds, grads, aux, is_train=train_mode)
    finally:
        set_recording(prev)


# ----------------------------------------------------------------------------- recorded path
def _run_recorded(fwd, entries, head_grads, variables, train_mode):
    """Gradients computed by imperative calls of the backward ops, recorded on the tape."""
    from .ndarray.op import invoke_op
    from .passes.gradient import gradient
    hg_vars = [Node(None, f"_head_grad_{i}") for i in range(len(entries))]
    wrt = [v._ag[0] for v in variables]
    gents = gradient(entries, wrt, [(v, 0) for v in hg_vars], fwd)
    vals = {}
    for v, h, g in zip(hg_vars, entries, head_grads):
        n, i = h
        vals[(id(v), 0)] = g if g is not None else wrap(
            np.ones(n.values[i].shape, n.values[i].dtype))

    def value(node, i):
        got = vals.get((id(node), i))
        if got is None:  # a tape entry: an array that is that entry
            got = wrap(node.values[i])
            got._ag = (node, i)
            vals[(id(node), i)] = got
        return got

    targets = [e for e in gents if e is not None]
    with _RecordingStateScope(True, train_mode):
        if targets:
            for node in IndexedGraph(targets).nodes:
                if node.op is None or isinstance(node, TapeNode):
                    continue
                outs = invoke_op(node.op, node.params, [value(c, i) for c, i in node.inputs])
                for i, o in enumerate(outs):
                    vals[(id(node), i)] = o
    out = []
    for v, e in zip(variables, gents):
        if e is None:
            out.append(wrap(st.zeros_raw("default", v.shape, v._raw.dtype), v._ctx))
        else:
            out.append(value(*e))
    return out


# ----------------------------------------------------------------------------- get_symbol
def get_symbol(x):
    """The recorded graph that computed ``x``, as a Symbol (variables ``var0``...,
    operator nodes ``node_0``...)."""
    if not isinstance(x, NDArray) or x._ag is None:
        raise MXNetError(_NOT_IN_GRAPH)
    g = IndexedGraph([x._ag])
    new = {}
    nv, no = itertools.count(), itertools.count()
    for n in g.nodes:
        name = f"var{next(nv)}" if n.op is None else f"node_{next(no)}"
        new[id(n)] = Node(n.op, name, n.params, n.attr,
                          [(new[id(p)], i) for p, i in n.inputs], dict(n.given))
    node, i = x._ag
    return Symbol([(new[id(node)], i)])


# ----------------------------------------------------------------------------- Function
_fn_ids = itertools.count()


class Function:
    """A differentiable function with a hand-written backward.

    Subclass it, define ``forward(*inputs)`` and ``backward(*output_grads)`` on NDArrays
    (``save_for_backward`` keeps what backward needs), and call an instance once.

    Examples
    --------
    >>> import sparsym as mx
    >>> class Sigmoid(mx.autograd.Function):
    ...     def forward(self, x):
    ...         y = 1 / (1 + mx.nd.exp(-x))
    ...         self.save_for_backward(y)
    ...         return y
    ...     def backward(self, dy):
    ...         y, = self.saved_tensors
    ...         return dy * y * (1 - y)
    >>> x = mx.nd.array([0.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = Sigmoid()(x)
    >>> y.backward()
    >>> x.grad.asnumpy().tolist()
    [0.25]
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        """Keep arrays for :meth:`backward` (as ``self.saved_tensors``)."""
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError("autograd.Function subclasses define forward")

    def backward(self, *output_grads):
        raise NotImplementedError("autograd.Function subclasses define backward")

    def __call__(self, *inputs):
        if self._used:
            raise MXNetError("Each Function instance can only be called once. Please create "
                             "another instance.")
        self._used = True
        for x in inputs:
            if not isinstance(x, NDArray):
                raise TypeError(f"Function inputs must be NDArrays, got {type(x).__name__}")
        with pause(train_mode=STATE.training):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        for o in outs:
            if not isinstance(o, NDArray):
                raise TypeError(f"Function.forward must return NDArrays, got "
                                f"{type(o).__name__}")
        if STATE.recording and any(x._ag is not None for x in inputs):
            from .ndarray.tape import record as tape_record
            op = get_op("_CustomFunction")
            attrs = op.params.parse("_CustomFunction", {
                "num_inputs": len(inputs), "num_outputs": len(outs), "function": self,
                "out_shapes": tuple(tuple(o.shape) for o in outs),
                "out_dtypes": tuple(np.dtype(o.dtype).name for o in outs)})
            tape_record(op, attrs, list(inputs), tuple(o._raw for o in outs), outs)
        return outputs

    def _backward_raw(self, ograds):
        """Run :meth:`backward` on raw head gradients; returns dense raw input gradients."""
        with pause():
            res = self.backward(*[wrap(g) for g in ograds])
        res = [res] if isinstance(res, NDArray) else list(res)
        out = []
        for r in res:
            if not isinstance(r, NDArray):
                raise TypeError(f"Function.backward must return NDArrays, got "
                                f"{type(r).__name__}")
            out.append(st.todense(r._raw))
        return out


# NDArray.attach_grad / NDArray.backward reach autograd through this hook (the array layer
# sits below autograd and never imports it)
install_autograd(mark_variables, backward)
