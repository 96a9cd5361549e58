"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: control flow as graph nodes.

The Python body is called once on fresh variables inside an ``AttrScope`` carrying a unique
``__subgraph_name__`` (MXNet's ``AttrScope._subgraph_names`` counts the names). The graph
it returns is cut where it reaches outside: every variable and every node not made in the
scope (a Parameter, an output of an earlier loop) becomes an input variable of the body
and an input of the loop node. The node (``_foreach``, ``_while_loop``, ``_cond``) carries
the body as a :class:`~sparsym.ops.control.control_flow.Subgraph`; its kernels run it and its
gradient runs the body's gradient step by step.
"""
from __future__ import annotations

from ..base import MXNetError, flatten_nested, regroup_nested
from ..ops.control.control_flow import Subgraph
from ..ops.core.node import Node
from ..ops.core.registry import get_op
from .naming import AttrScope, current, current_attr_scope
from .symbol import Symbol, Variable

__all__ = ["foreach", "while_loop", "cond", "LoopBodyError"]


class LoopBodyError(MXNetError, AssertionError):
    """A loop body that does not fit its loop (MXNet raises AssertionError for these)."""


def _unique_subgraph_name(name):
    outer = current_attr_scope()._attr.get("__subgraph_name__", "")
    if outer:
        name = f"{outer}${name}"
    AttrScope._subgraph_names[name] += 1
    return f"{name}{AttrScope._subgraph_names[name] - 1}"


def _entry(sym, what):
    if len(sym._outputs) != 1:
        raise ValueError(f"{what}: each element must be a single-output Symbol, got one with "
                         f"{len(sym._outputs)} outputs")
    return sym._outputs[0]


class _Cut:
    """Cuts body graphs at their boundary; shared by the subgraphs of one loop node so
    that an outside entry used by several of them becomes one input."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.map = {}
        self.vars = []
        self.outer = []
        self.reached = set()   # ids of the bodies' own variables the heads read

    def __call__(self, heads, sub_name, own):
        own_ids = {id(n) for n in own}
        copies, deps = {}, {}

        def depends(n):
            """Whether node ``n`` reads one of the body's own input variables."""
            hit = deps.get(id(n))
            if hit is None:
                hit = id(n) in own_ids or (n.op is not None and any(
                    depends(c) for c, _ in n.inputs))
                deps[id(n)] = hit
            return hit

        def entry(n, i):
            if id(n) in own_ids:
                self.reached.add(id(n))
                return (n, i)
            if n.op is None or (n.attr.get("__subgraph_name__") != sub_name
                                and not depends(n)):
                key = (id(n), i)
                v = self.map.get(key)
                if v is None:
                    v = self.map[key] = Node(None, f"{self.prefix}_in{len(self.vars)}")
                    self.vars.append(v)
                    self.outer.append((n, i))
                return (v, 0)
            c = copies.get(id(n))
            if c is None:
                c = Node(n.op, n.name, n.params, n.attr, [entry(p, j) for p, j in n.inputs],
                         dict(n.given))
                copies[id(n)] = c
            return (c, i)

        return [entry(n, i) for n, i in heads]


def _make(op_name, name, hint, inputs, n_out, **params):
    """A loop node of ``op_name`` over ``inputs`` (entries), as a Symbol of its outputs."""
    op = get_op(op_name)
    attrs = op.params.parse(op_name, params)
    node = Node(op, current().get(name, hint), attrs, current_attr_scope().get(None), inputs)
    return [Symbol([(node, i)]) for i in range(n_out)]


def _scoped_vars(sub_name, n, tag):
    return [Variable(f"{sub_name}_{tag}{i}") for i in range(n)]


def foreach(body, data, init_states, name="foreach"):
    """Run ``body`` over slices of ``data`` along axis 0, carrying states, as one node.

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)``: Symbols or (nested) lists.
    data : Symbol or list of Symbol
        Sliced along axis 0 (all the same length).
    init_states : Symbol or (nested) list of Symbol
    name : str

    Returns
    -------
    (outputs, states)
        Outputs stacked along a new axis 0, and the last states, in the formats the body
        and ``init_states`` use.
    """
    flat_data, data_fmt = flatten_nested(data, Symbol, "foreach data")
    flat_states, state_fmt = flatten_nested(init_states, Symbol, "foreach init_states")
    sub_name = _unique_subgraph_name(name)
    with AttrScope(__subgraph_name__=sub_name):
        d_vars = _scoped_vars(sub_name, len(flat_data), "data")
        s_vars = _scoped_vars(sub_name, len(flat_states), "state")
        outs, states = body(regroup_nested(d_vars, data_fmt)[0],
                            regroup_nested(s_vars, state_fmt)[0])
    flat_out, out_fmt = flatten_nested([] if outs is None else outs, Symbol, "foreach output")
    flat_new, new_fmt = flatten_nested([] if states is None else states, Symbol,
                                       "foreach states")
    if new_fmt != state_fmt:
        raise LoopBodyError("foreach: the body returned its states in another format than "
                            f"init_states ({new_fmt} vs {state_fmt})")
    cut = _Cut(sub_name)
    own = [v._outputs[0][0] for v in d_vars + s_vars]
    heads = cut([_entry(s, "foreach output") for s in flat_out + flat_new], sub_name, own)
    for what, vs in (("data", d_vars), ("state", s_vars)):
        if not all(id(v._outputs[0][0]) in cut.reached for v in vs):
            raise LoopBodyError(f"the {what} arrays have to be used in the loop body")
    sub = Subgraph(sub_name, heads, own + cut.vars)
    nd, ns = len(flat_data), len(flat_states)
    ins = [_entry(s, "foreach data") for s in flat_data + flat_states] + cut.outer
    res = _make("_foreach", name, "foreach", ins, len(heads), subgraph=sub, num_args=len(ins) + 1,
                num_outputs=len(heads), num_out_data=len(flat_out),
                in_data_locs=tuple(range(nd)), in_state_locs=tuple(range(nd, nd + ns)),
                remain_locs=tuple(range(nd + ns, len(ins))))
    outputs = regroup_nested(res[:len(flat_out)], out_fmt)[0]
    return outputs, regroup_nested(res[len(flat_out):], state_fmt)[0]


def _call_with(fn, flat_vars, fmt):
    grouped = regroup_nested(flat_vars, fmt)[0]
    return fn(grouped) if fmt == 0 else fn(*grouped)


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run ``func`` while ``cond`` holds (at most ``max_iterations`` times), as one node.

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars) -> Symbol`` with one value; nonzero continues.
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``; ``step_output`` may be None.
    loop_vars : Symbol or (nested) list of Symbol
    max_iterations : int
        Required; the stacked outputs have this length (padded with zeros).
    name : str

    Returns
    -------
    (outputs, final loop_vars)
    """
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = int(max_iterations)
    flat_vars, var_fmt = flatten_nested(loop_vars, Symbol, "while_loop loop_vars")
    if not flat_vars:
        raise ValueError("loop_vars should contain at least one element")
    nv = len(flat_vars)
    cond_name = _unique_subgraph_name(name + "_cond")
    with AttrScope(__subgraph_name__=cond_name):
        c_vars = _scoped_vars(cond_name, nv, "var")
        pred = _call_with(cond, c_vars, var_fmt)
    func_name = _unique_subgraph_name(name + "_func")
    with AttrScope(__subgraph_name__=func_name):
        f_vars = _scoped_vars(func_name, nv, "var")
        step_out, new_vars = _call_with(func, f_vars, var_fmt)
    step_out = [] if step_out is None else step_out
    new_vars = [] if new_vars is None else new_vars
    if isinstance(new_vars, Symbol):
        new_vars = [new_vars]
    flat_out, out_fmt = flatten_nested(step_out, Symbol, "while_loop step_output")
    flat_new, _ = flatten_nested(new_vars, Symbol, "while_loop new_loop_vars")
    if len(flat_new) != nv:
        raise ValueError("The length of loop_vars should be consistent during the loop")
    cut = _Cut(name)
    c_own = [v._outputs[0][0] for v in c_vars]
    f_own = [v._outputs[0][0] for v in f_vars]
    c_heads = cut([_entry(pred, "while_loop cond")], cond_name, c_own)
    f_heads = cut([_entry(s, "while_loop output") for s in flat_out + flat_new], func_name, f_own)
    ins = [_entry(s, "while_loop loop_vars") for s in flat_vars] + cut.outer
    n = len(ins)
    res = _make("_while_loop", name, "while_loop", ins, len(f_heads),
                cond=Subgraph(cond_name, c_heads, c_own + cut.vars),
                func=Subgraph(func_name, f_heads, f_own + cut.vars), num_args=n + 2,
                num_outputs=len(f_heads), num_out_data=len(flat_out),
                max_iterations=max_iterations, cond_input_locs=tuple(range(n)),
                func_input_locs=tuple(range(n)), func_var_locs=tuple(range(nv)))
    outputs = regroup_nested(res[:len(flat_out)], out_fmt)[0]
    return outputs, regroup_nested(res[len(flat_out):], var_fmt)[0]


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` if ``pred`` (a one-value Symbol) is nonzero, else ``else_func()``,
    as one node; both branches return the same number of Symbols.

    Parameters
    ----------
    pred : Symbol
    then_func, else_func : callable
        No arguments; return a Symbol or a (nested) list of Symbols.
    name : str

    Returns
    -------
    Symbol or list of Symbol
        In the format ``then_func`` returns.
    """
    cut = _Cut(name)
    pred_name = _unique_subgraph_name(name + "_pred")
    with AttrScope(__subgraph_name__=pred_name):
        p_heads = cut([_entry(pred, "cond pred")], pred_name, [])
    then_name = _unique_subgraph_name(name + "_then")
    with AttrScope(__subgraph_name__=then_name):
        then_out = then_func()
    else_name = _unique_subgraph_name(name + "_else")
    with AttrScope(__subgraph_name__=else_name):
        else_out = else_func()
    flat_then, then_fmt = flatten_nested(then_out, Symbol, "cond then_func output")
    flat_else, _ = flatten_nested(else_out, Symbol, "cond else_func output")
    if len(flat_then) != len(flat_else):
        raise ValueError(f"cond: then_func returned {len(flat_then)} outputs, else_func "
                         f"{len(flat_else)}; they must agree")
    t_heads = cut([_entry(s, "cond then_func output") for s in flat_then], then_name, [])
    e_heads = cut([_entry(s, "cond else_func output") for s in flat_else], else_name, [])
    n = len(cut.vars)
    res = _make("_cond", name, "cond", list(cut.outer), len(t_heads),
                cond=Subgraph(pred_name, p_heads, cut.vars),
                then_branch=Subgraph(then_name, t_heads, cut.vars),
                else_branch=Subgraph(else_name, e_heads, cut.vars), num_args=n + 3,
                num_outputs=len(t_heads), cond_input_locs=tuple(range(n)),
                then_input_locs=tuple(range(n)), else_input_locs=tuple(range(n)))
    return regroup_nested(res, then_fmt)[0]
