"""Control-flow operators carrying subgraphs: _foreach, _while_loop and _cond (MXNet's
names), with their backward ops.

A node of these ops holds its body as :class:`Subgraph` parameters (graph entries over
input variables of its own). The forward kernel runs the body once per step; the backward
kernel replays the loop to recover each step's inputs and then runs the body's gradient
step by step in reverse, so gradients flow through the loop states and accumulate for
the free variables. Running and inferring a subgraph needs the executor and the passes,
which live above this layer: ``sparsym.executor.subgraph`` installs them in ``HOOKS``.
Front ends: ``mx.sym.contrib.foreach/while_loop/cond`` build the nodes;
``mx.nd.contrib``'s run the Python body imperatively, as MXNet's do.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import MXNetError, ParamError
from ..core import rules
from ..core.grad import bw_node
from ..core.params import Attrs, Field, Params
from ..core.registry import Dispatch, OpDef, register

__all__ = ["Subgraph", "HOOKS"]


class Subgraph:
    """A body graph: ``heads`` (entries) over the variable nodes ``inputs`` (in order).

    Compared and hashed by identity (a node's parameters key plan caches); ``cache`` holds
    the runner's bound executors for this body.
    """

    __slots__ = ("name", "heads", "inputs", "cache", "__weakref__")

    def __init__(self, name, heads, inputs):
        self.name = name
        self.heads = list(heads)
        self.inputs = list(inputs)
        self.cache = {}

    def __repr__(self):
        # the identity matters: a node's given strings key the plan cache
        return (f"<subgraph {self.name} at 0x{id(self):x}: {len(self.inputs)} inputs, "
                f"{len(self.heads)} outputs>")


class _Hooks:
    """Services of upper layers (installed by sparsym.executor.subgraph).

    infer_shape(sub, in_shapes, out_shapes) / infer_type(sub, in_types, out_types) return
    the completed (ins, outs); run(sub, raws, is_train) returns the body's outputs;
    grad(sub, raws, ograds, is_train) returns (outputs, one dense gradient per input).
    """

    infer_shape = None
    infer_type = None
    run = None
    grad = None


HOOKS = _Hooks()


class _LoopParams(Params):
    """Parameters of a control-flow node: ``subgraphs`` names the Subgraph-valued ones
    (written to JSON as the node's ``subgraphs``, not as attributes); ``align`` maps the
    locs parameters of a node read from JSON onto sparsym's layout (see :meth:`attach`)."""

    def __init__(self, subgraphs, align, **fields):
        super().__init__(**fields)
        self.subgraphs = subgraphs
        self.align = align

    def parse(self, op_name, kwargs):
        attrs = super().parse(op_name, kwargs)
        for key in self.subgraphs:
            if not isinstance(attrs[key], Subgraph):
                raise ParamError(f"operator {op_name}: parameter {key!r} must be a subgraph "
                                 "(built by mx.sym.contrib.foreach/while_loop/cond), got "
                                 f"{type(attrs[key]).__name__}")
        return attrs

    def attach(self, op_name, name, given, graphs):
        """(parsed parameters, node input order, given strings) of a node read from JSON.

        ``graphs``: one (heads, input variables in ``arg_nodes`` order) per subgraph, in
        ``self.subgraphs`` order. MXNet's locs parameters say which node input each
        subgraph input is; sparsym keeps every subgraph's inputs aligned with the node's
        inputs (loop variables first), so the subgraphs are rebuilt that way, the locs
        become plain ranges, and the node's inputs are taken in the returned order.
        """
        if len(graphs) != len(self.subgraphs):
            raise ParamError(f"operator {op_name}: node {name!r} carries {len(graphs)} "
                             f"subgraphs, {len(self.subgraphs)} expected")
        raw = super().parse(op_name, {**given, **dict.fromkeys(self.subgraphs)})
        subs, order, locs = self.align(raw, graphs)
        values = dict(given, **locs)
        for key, (heads, inputs) in zip(self.subgraphs, subs):
            values[key] = Subgraph(f"{name}_{key}", heads, inputs)
        params = self.parse(op_name, values)
        subs_given = {k: repr(params[k]) for k in self.subgraphs}  # (the plan cache key)
        return params, order, dict(given, **Attrs(locs).to_strings(), **subs_given)


def _aligned(inputs, locs, n):
    """Subgraph inputs indexed by node input: ``locs[k]`` is the node input of input k;
    node inputs the subgraph does not read get a placeholder variable."""
    from ..core.node import Node
    out = [None] * n
    for var, p in zip(inputs, locs):
        out[p] = var
    return [v if v is not None else Node(None, f"_unused{p}") for p, v in enumerate(out)]


def _align_foreach(a, graphs):
    heads, inputs = graphs[0]
    sub_pos = list(a.in_data_locs) + list(a.in_state_locs) + list(a.remain_locs)
    n = len(sub_pos)
    ordered = [inputs[k] for k in sub_pos]
    nd, ns = len(a.in_data_locs), len(a.in_state_locs)
    return [(heads, ordered)], list(range(n)), dict(
        in_data_locs=tuple(range(nd)), in_state_locs=tuple(range(nd, nd + ns)),
        remain_locs=tuple(range(nd + ns, n)))


def _align_while(a, graphs):
    (c_heads, c_in), (f_heads, f_in) = graphs
    n = _n_in(a)
    var_pos = [a.func_input_locs[k] for k in a.func_var_locs]
    order = var_pos + [p for p in range(n) if p not in var_pos]
    back = {p: i for i, p in enumerate(order)}
    c_locs = [back[p] for p in a.cond_input_locs]
    f_locs = [back[p] for p in a.func_input_locs]
    nv = len(var_pos)
    return ([(c_heads, _aligned(c_in, c_locs, n)), (f_heads, _aligned(f_in, f_locs, n))],
            order, dict(cond_input_locs=tuple(range(n)), func_input_locs=tuple(range(n)),
                        func_var_locs=tuple(range(nv))))


def _align_cond(a, graphs):
    n = _n_in(a)
    subs = [(h, _aligned(i, locs, n)) for (h, i), locs in zip(
        graphs, (a.cond_input_locs, a.then_input_locs, a.else_input_locs))]
    rng = tuple(range(n))
    return subs, list(range(n)), dict(cond_input_locs=rng, then_input_locs=rng,
                                      else_input_locs=rng)


def _locs():
    return Field("shape", ())


_FOREACH = _LoopParams(
    ("subgraph",), _align_foreach,
    num_args=Field("int", doc="number of inputs, the subgraphs included (as MXNet)"),
    num_outputs=Field("int", doc="number of outputs (stacked outputs, then final states)"),
    num_out_data=Field("int", doc="number of stacked outputs"),
    in_state_locs=_locs(), in_data_locs=_locs(), remain_locs=_locs(),
    subgraph=Field("any", None, doc="the loop body"))

_WHILE = _LoopParams(
    ("cond", "func"), _align_while,
    num_args=Field("int", doc="number of inputs, the subgraphs included (as MXNet)"),
    num_outputs=Field("int", doc="number of outputs (stacked outputs, then final loop vars)"),
    num_out_data=Field("int", doc="number of stacked outputs"),
    max_iterations=Field("int", doc="most iterations; stacked outputs have this length"),
    cond_input_locs=_locs(), func_input_locs=_locs(), func_var_locs=_locs(),
    cond=Field("any", None, doc="the condition graph"),
    func=Field("any", None, doc="the loop body"))

_COND = _LoopParams(
    ("cond", "then_branch", "else_branch"), _align_cond,
    num_args=Field("int", doc="number of inputs, the subgraphs included (as MXNet)"),
    num_outputs=Field("int", doc="number of outputs"),
    cond_input_locs=_locs(), then_input_locs=_locs(), else_input_locs=_locs(),
    cond=Field("any", None, doc="the predicate"), then_branch=Field("any", None),
    else_branch=Field("any", None))


_SUBGRAPH_KEYS = ("subgraph", "cond", "func", "then_branch", "else_branch")


def _n_in(a):
    """Data inputs of a loop node: MXNet's num_args counts its subgraphs too."""
    return a.num_args - sum(1 for k in _SUBGRAPH_KEYS if k in a)


def _n_outputs(a):
    return a.num_outputs


def _n_args(a):
    return tuple(f"arg{i}" for i in range(_n_in(a)))


def _grad_names(a):
    return tuple(f"arg{i}_grad" for i in range(_n_in(a)))


def _truth(raw):
    """A predicate output as a Python bool (MXNet: a nonzero scalar)."""
    v = st.todense(raw)
    if v.size != 1:
        raise MXNetError(f"the loop/branch condition must give one value, got shape {v.shape}")
    return bool(v.reshape(()))


# ----------------------------------------------------------------------------- foreach
def _foreach_split(a, xs):
    nd = len(a.in_data_locs)
    ns = len(a.in_state_locs)
    return list(xs[:nd]), list(xs[nd:nd + ns]), list(xs[nd + ns:])


def _foreach_shape(a, ins, outs):
    nd, ns, no = len(a.in_data_locs), len(a.in_state_locs), a.num_out_data
    steps = None
    for s in ins[:nd]:
        if s is not None and len(s):
            steps = s[0] if steps is None else steps
    for s in outs[:no]:
        if s is not None and len(s) and steps is None:
            steps = s[0]
    body_in = [None if s is None else tuple(s[1:]) for s in ins[:nd]] + list(ins[nd:])
    body_out = [None if s is None else tuple(s[1:]) for s in outs[:no]] + list(outs[no:])
    for i in range(ns):  # a state keeps its shape from step to step
        body_out[no + i] = rules.merge_shape(body_out[no + i], body_in[nd + i]) \
            if body_out[no + i] is not None or body_in[nd + i] is not None else None
        body_in[nd + i] = body_out[no + i]
    b_in, b_out = HOOKS.infer_shape(a.subgraph, body_in, body_out)
    for i in range(ns):
        merged = rules.merge_shape(b_in[nd + i], b_out[no + i])
        b_in[nd + i] = b_out[no + i] = merged
    for i in range(nd):
        if b_in[i] is not None:
            rules.set_shape(ins, i, (steps,) + tuple(b_in[i]))
    for i in range(nd, len(ins)):
        if b_in[i] is not None:
            rules.set_shape(ins, i, b_in[i])
    _set_loop_outs(outs, b_out, no, steps)
    return ins, outs


def _set_loop_outs(outs, b_out, no, steps):
    """Output shapes from the body's: the first ``no`` stacked along a new axis of length
    ``steps``, the loop states as they are."""
    for i, s in enumerate(b_out):
        if s is not None:
            rules.set_shape(outs, i, ((steps,) + tuple(s)) if i < no else s, "output")


def _set_types(ins, outs, new_ins, new_outs):
    """Merge the dtypes a subgraph inferred into the node's."""
    for i, t in enumerate(new_ins):
        rules.set_type(ins, i, t)
    for i, t in enumerate(new_outs):
        rules.set_type(outs, i, t, "output")
    return ins, outs


def _loop_type(sub, ins, outs, first_state, n_states, no):
    """Dtypes through the body; a state (input ``first_state + i``, output ``no + i``)
    keeps its dtype from step to step."""
    i2, o2 = HOOKS.infer_type(sub, list(ins), list(outs))
    for i in range(n_states):
        t = i2[first_state + i] if i2[first_state + i] is not None else o2[no + i]
        i2[first_state + i] = o2[no + i] = t
    return _set_types(ins, outs, i2, o2)


def _foreach_type(a, ins, outs):
    return _loop_type(a.subgraph, ins, outs, len(a.in_data_locs), len(a.in_state_locs),
                      a.num_out_data)


def _stack(steps, n, shapes, dtypes, length):
    """Stack ``n`` per-step outputs into (length, ...) arrays, zero-padded after the steps
    (shapes/dtypes: the inferred stacked outputs, used when no step ran)."""
    out = []
    for k in range(n):
        if steps:
            first = st.todense(steps[0][k])
            buf = np.zeros((length,) + first.shape, first.dtype)
            for t, s in enumerate(steps):
                buf[t] = st.todense(s[k])
        else:
            buf = np.zeros(shapes[k] if shapes is not None else (length,), dtypes[k])
        out.append(buf)
    return out


def _out_meta(a):
    """The inferred output shapes the executor hands the kernel (None from ``nd.*``)."""
    return a.get("__out_shapes__")


def _foreach_forward(a, xs):
    data, states, free = _foreach_split(a, xs)
    train = bool(a.get("__is_train__", False))
    data = [st.todense(d) for d in data]
    length = data[0].shape[0] if data else 0
    steps = []
    for t in range(length):
        res = HOOKS.run(a.subgraph, [d[t] for d in data] + states + free, train)
        steps.append(res[:a.num_out_data])
        states = list(res[a.num_out_data:])
    dtypes = [_body_dtype(a, k) for k in range(a.num_out_data)]
    outs = _stack(steps, a.num_out_data, _out_meta(a), dtypes, length)
    return tuple(outs) + tuple(st.todense(s) for s in states)


def _body_dtype(a, k):
    """The dtype of stacked output ``k`` when no step ran: MXNet's default, float32."""
    return np.dtype(np.float32)


def _foreach_backward(a, xs):
    no, n_out = a.num_out_data, a.num_outputs
    ograds, ins = list(xs[:n_out]), list(xs[n_out:])
    data, states, free = _foreach_split(a, ins)
    train = bool(a.get("__is_train__", True))
    data = [st.todense(d) for d in data]
    length = data[0].shape[0] if data else 0
    history = []
    for t in range(length):  # replay: the states each step started from
        history.append(states)
        res = HOOKS.run(a.subgraph, [d[t] for d in data] + states + free, train)
        states = list(res[no:])
    g_states = [st.todense(g) for g in ograds[no:]]
    g_data = [np.zeros(d.shape, d.dtype) for d in data]
    g_free = [np.zeros(st.todense(f).shape, st.todense(f).dtype) for f in free]
    og_data = [st.todense(g) for g in ograds[:no]]
    nd, ns = len(data), len(history[0]) if history else 0
    for t in reversed(range(length)):
        step_in = [d[t] for d in data] + history[t] + free
        _, grads = HOOKS.grad(a.subgraph, step_in, [g[t] for g in og_data] + g_states, train)
        for i in range(nd):
            g_data[i][t] = grads[i]
        g_states = grads[nd:nd + ns]
        for i, g in enumerate(grads[nd + ns:]):
            g_free[i] += g
    return tuple(g_data) + tuple(g_states) + tuple(g_free)


def _loop_gradient(bwd_op):
    def gradient(node, og):
        b = bw_node(bwd_op, list(og) + list(node.inputs), node, "backward",
                    **dict(node.params))
        return [(b, i) for i in range(len(node.inputs))]
    return gradient




def _bwd_inputs(a):
    return tuple(f"ograd{i}" for i in range(a.num_outputs)) + _n_args(a)


def _register(name, params, forward, backward, shape, dtype, doc):
    """A control-flow op ``_<name>`` and its ``_backward_<name>`` (inputs: the head
    gradients, then the forward inputs; outputs: one gradient per forward input)."""
    register(OpDef(
        f"_{name}", params=params, inputs=_n_args, num_outputs=_n_outputs,
        dispatch=(Dispatch(("...",), ("default",), forward),), infer_shape=shape,
        infer_type=dtype, gradient=_loop_gradient(f"_backward_{name}"), needs_is_train=True,
        needs_out_shapes=True, doc=doc))
    register(OpDef(
        f"_backward_{name}", params=params, inputs=_bwd_inputs, num_outputs=_n_in,
        output_names=_grad_names, dispatch=(Dispatch(("...",), ("default",), backward),),
        infer_shape=rules.grads_like_inputs(_n_outputs),
        infer_type=rules.grads_like_inputs_type(_n_outputs), needs_is_train=True))


_register(
    "foreach", _FOREACH, _foreach_forward, _foreach_backward, _foreach_shape, _foreach_type,
    """Run a subgraph over slices of the data along axis 0, carrying states
    (``mx.sym.contrib.foreach`` builds it).""")


# ----------------------------------------------------------------------------- while_loop
def _while_n_vars(a):
    return len(a.func_var_locs)


def _while_shape(a, ins, outs):
    nv, no, m = _while_n_vars(a), a.num_out_data, a.max_iterations
    body_out = [None if s is None else tuple(s[1:]) for s in outs[:no]] + list(outs[no:])
    body_in = list(ins)
    for i in range(nv):
        merged = rules.merge_shape(body_in[i], body_out[no + i]) \
            if body_in[i] is not None or body_out[no + i] is not None else None
        body_in[i] = body_out[no + i] = merged
    b_in, b_out = HOOKS.infer_shape(a.func, body_in, body_out)
    c_in, _ = HOOKS.infer_shape(a.cond, b_in, [None])
    for i in range(nv):
        merged = rules.merge_shape(c_in[i], b_out[no + i])
        c_in[i] = b_out[no + i] = merged
    for i, s in enumerate(c_in):
        if s is not None:
            rules.set_shape(ins, i, s)
    _set_loop_outs(outs, b_out, no, m)
    return ins, outs


def _while_type(a, ins, outs):
    return _loop_type(a.func, ins, outs, 0, _while_n_vars(a), a.num_out_data)


def _while_replay(a, xs, train):
    """(per-step loop vars, per-step outputs, final loop vars) of one run of the loop."""
    nv = _while_n_vars(a)
    lv, free = list(xs[:nv]), list(xs[nv:])
    history, steps = [], []
    while len(steps) < a.max_iterations and _truth(HOOKS.run(a.cond, lv + free, train)[0]):
        history.append(lv)
        res = HOOKS.run(a.func, lv + free, train)
        steps.append(res[:a.num_out_data])
        lv = list(res[a.num_out_data:])
    return history, steps, lv


def _while_forward(a, xs):
    train = bool(a.get("__is_train__", False))
    _, steps, lv = _while_replay(a, xs, train)
    dtypes = [_body_dtype(a, k) for k in range(a.num_out_data)]
    outs = _stack(steps, a.num_out_data, _out_meta(a), dtypes, a.max_iterations)
    return tuple(outs) + tuple(st.todense(v) for v in lv)


def _while_backward(a, xs):
    no, n_out, nv = a.num_out_data, a.num_outputs, _while_n_vars(a)
    ograds, ins = list(xs[:n_out]), list(xs[n_out:])
    train = bool(a.get("__is_train__", True))
    history, _, _ = _while_replay(a, ins, train)
    free = ins[nv:]
    g_vars = [st.todense(g) for g in ograds[no:]]
    g_free = [np.zeros(st.todense(f).shape, st.todense(f).dtype) for f in free]
    og = [st.todense(g) for g in ograds[:no]]
    for t in reversed(range(len(history))):
        _, grads = HOOKS.grad(a.func, history[t] + free, [g[t] for g in og] + g_vars, train)
        g_vars = grads[:nv]
        for i, g in enumerate(grads[nv:]):
            g_free[i] += g
    return tuple(g_vars) + tuple(g_free)


_register(
    "while_loop", _WHILE, _while_forward, _while_backward, _while_shape, _while_type,
    """Run a body subgraph while a condition subgraph holds, at most max_iterations
    times (``mx.sym.contrib.while_loop`` builds it).""")


# ----------------------------------------------------------------------------- cond
def _cond_shape(a, ins, outs):
    i1, o1 = HOOKS.infer_shape(a.then_branch, list(ins), list(outs))
    i2, o2 = HOOKS.infer_shape(a.else_branch, list(i1), list(o1))
    i3, _ = HOOKS.infer_shape(a.cond, list(i2), [None])
    for i, s in enumerate(i3):
        if s is not None:
            rules.set_shape(ins, i, s)
    for i, s in enumerate(o2):
        if s is not None:
            rules.set_shape(outs, i, s, "output")
    return ins, outs


def _cond_type(a, ins, outs):
    i1, o1 = HOOKS.infer_type(a.then_branch, list(ins), list(outs))
    i2, o2 = HOOKS.infer_type(a.else_branch, list(i1), list(o1))
    i3, _ = HOOKS.infer_type(a.cond, list(i2), [None])
    return _set_types(ins, outs, i3, o2)


def _branch(a, xs, train):
    return a.then_branch if _truth(HOOKS.run(a.cond, list(xs), train)[0]) else a.else_branch


def _cond_forward(a, xs):
    train = bool(a.get("__is_train__", False))
    return tuple(st.todense(o) for o in HOOKS.run(_branch(a, xs, train), list(xs), train))


def _cond_backward(a, xs):
    n_out = a.num_outputs
    ograds, ins = list(xs[:n_out]), list(xs[n_out:])
    train = bool(a.get("__is_train__", True))
    _, grads = HOOKS.grad(_branch(a, ins, train), ins, [st.todense(g) for g in ograds], train)
    return tuple(grads)


_register(
    "cond", _COND, _cond_forward, _cond_backward, _cond_shape, _cond_type,
    """Run the then or the else subgraph as a predicate subgraph decides
    (``mx.sym.contrib.cond`` builds it).""")
