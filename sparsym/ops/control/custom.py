"""Custom: operators written in Python (MXNet's CustomOp / CustomOpProp protocol).

A user registers a ``CustomOpProp`` subclass under a name (``mx.operator.register``);
``Custom(..., op_type=name, **kwargs)`` nodes then take their inputs, outputs, auxiliary
states, shapes, dtypes and storage types from that class, and run its operator's
``forward``/``backward`` on NDArrays. One record serves ``nd.Custom``, ``sym.Custom``,
the executor and autograd.
"""
from __future__ import annotations

import threading

import numpy as np

from ... import storage as st
from ...base import MXNetError, ParamError
from ..core import rules
from ..core.grad import bw_node, make_node
from ..core.params import Attrs, Field, Params
from ..core.registry import Dispatch, OpDef, register

# name -> CustomOpProp subclass (filled by mx.operator.register)
PROPS: dict = {}
_LOCK = threading.Lock()
_PROP_CACHE: dict = {}
_OP_CACHE: dict = {}
_CACHE_MAX = 1024


class _Hooks:
    """Services of upper layers that custom kernels need (NDArray wrapping, the current
    context, profiler scopes), installed by sparsym.operator so that ops/ imports nothing
    above it."""

    wrap = None
    current_context = None
    scope = None


HOOKS = _Hooks()


class CustomParams(Params):
    """``op_type`` plus any keyword, kept as the string MXNet hands the prop's constructor."""

    def accepts(self, key):
        return not (key.startswith("__") and key.endswith("__"))

    def parse(self, op_name, kwargs):
        out = {}
        for key, value in kwargs.items():
            if value is None:
                continue
            out[key] = value if isinstance(value, str) else str(value)
        if "op_type" not in out:
            raise ParamError(f"operator {op_name}: required parameter 'op_type' is missing "
                             f"(the name a CustomOpProp was registered under)")
        if out["op_type"] not in PROPS:
            raise MXNetError(f"Cannot find custom operator {out['op_type']}; registered: "
                             f"{sorted(PROPS)} (use mx.operator.register)")
        return Attrs(out)


_PARAMS = CustomParams(op_type=Field("str", doc="name the CustomOpProp is registered under"))


def prop_of(attrs):
    """The CustomOpProp instance for these parameters (one per distinct parameter set)."""
    hit = _PROP_CACHE.get(attrs)
    if hit is not None:
        return hit
    kwargs = {k: v for k, v in attrs.items() if k != "op_type" and not k.startswith("__")}
    return _remember(_PROP_CACHE, attrs, PROPS[attrs["op_type"]](**kwargs))


def _remember(cache, key, value):
    """Store ``value`` under ``key`` in a bounded cache (cleared when full); returns it."""
    with _LOCK:
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[key] = value
    return value


def _names(attrs):
    p = prop_of(attrs)
    return tuple(p.list_arguments()) + tuple(p.list_auxiliary_states())


def _aux_names(attrs):
    return tuple(prop_of(attrs).list_auxiliary_states())


def _n_out(attrs):
    return len(prop_of(attrs).list_outputs())


def _user_code(fn):
    """Run a rule or kernel that calls the user's Python classes: their exceptions surface
    as MXNetError naming the custom op (MXNet reports them through its C API the same way);
    sparsym's own errors and shape/type conflicts pass unchanged."""
    def wrapped(attrs, *args):
        try:
            return fn(attrs, *args)
        except (MXNetError, rules.Conflict):
            raise
        except Exception as e:
            raise MXNetError(f"Error in custom operator {attrs.get('op_type')!r} "
                             f"({fn.__name__.strip('_')}): {type(e).__name__}: {e}") from e
    wrapped.__name__ = fn.__name__
    return wrapped


def _split(result, what, n_in, n_out, n_aux):
    """(in, out, aux) lists from a prop's infer_* result of 2 or 3 lists, checked."""
    if len(result) == 2:
        ins, outs = result
        aux = []
    elif len(result) == 3:
        ins, outs, aux = result
    else:
        raise MXNetError(f"{what} must return 2 or 3 lists")
    if len(ins) != n_in or len(outs) != n_out or len(aux) != n_aux:
        raise MXNetError(f"{what} Error: expecting {n_in}, {n_out} and {n_aux} entries for "
                         f"inputs, outputs and auxiliary states, got {len(ins)}, {len(outs)} "
                         f"and {len(aux)}")
    return list(ins), list(outs), list(aux)


@_user_code
def _shape_rule(attrs, ins, outs):
    """The prop's infer_shape, called (as MXNet does) once some argument shape is known:
    unknown shapes are passed as [] and a returned () stays unknown."""
    prop = prop_of(attrs)
    n_arg = len(prop.list_arguments())
    n_aux = len(ins) - n_arg
    if n_arg and not any(rules.known(s) for s in ins[:n_arg]):
        return ins, outs
    got = prop.infer_shape([list(s) if rules.known(s) else [] for s in ins[:n_arg]])
    i_s, o_s, a_s = _split(got, "InferShape", n_arg, len(outs), n_aux)
    for i, s in enumerate(i_s + a_s):
        if s is not None and len(s):
            rules.set_shape(ins, i, s)
    for i, s in enumerate(o_s):
        if s is not None and len(s):
            rules.set_shape(outs, i, s, "output")
    return ins, outs


@_user_code
def _type_rule(attrs, ins, outs):
    """The prop's infer_type once every argument dtype is known."""
    prop = prop_of(attrs)
    n_arg = len(prop.list_arguments())
    n_aux = len(ins) - n_arg
    if n_arg and all(t is None for t in ins[:n_arg]):
        return ins, outs
    # MXNet hands unknown dtypes over as -1 too; the default rule copies the first input's
    got = prop.infer_type([np.dtype(t).type if t is not None else None for t in ins[:n_arg]])
    i_t, o_t, a_t = _split(got, "InferType", n_arg, len(outs), n_aux)
    for i, t in enumerate(i_t + a_t):
        if t is not None:
            rules.set_type(ins, i, np.dtype(t))
    for i, t in enumerate(o_t):
        if t is not None:
            rules.set_type(outs, i, np.dtype(t), "output")
    return ins, outs


@_user_code
def _forward_stypes(attrs, in_stypes):
    """Output storage types from the prop's infer_storage_type."""
    prop = prop_of(attrs)
    n_arg = len(prop.list_arguments())
    got = prop.infer_storage_type(list(in_stypes[:n_arg]))
    _, outs, _ = _split(got, "InferStorageType", n_arg, len(prop.list_outputs()),
                        len(in_stypes) - n_arg)
    return tuple(st.check_stype(s, "Custom infer_storage_type") for s in outs)


def _layout(prop, n_ins):
    """(n_out, n_arg, n_aux) of a _backward_Custom node with ``n_ins`` inputs."""
    n_out = len(prop.list_outputs())
    n_arg = len(prop.list_arguments())
    return n_out, n_arg, n_ins - 2 * n_out - n_arg


@_user_code
def _backward_stypes(attrs, in_stypes):
    """Input-gradient storage types from the prop's infer_storage_type_backward."""
    prop = prop_of(attrs)
    n_out, n_arg, n_aux = _layout(prop, len(in_stypes))
    og = list(in_stypes[:n_out])
    ind = list(in_stypes[n_out:n_out + n_arg])
    od = list(in_stypes[n_out + n_arg:2 * n_out + n_arg])
    aux = list(in_stypes[2 * n_out + n_arg:])
    # the gradients a graph asks for are dense unless a rule says otherwise (MXNet passes
    # the stypes it knows, default for gradients nobody constrained)
    got = prop.infer_storage_type_backward(og, ind, od, ["default"] * n_arg, aux)
    if len(got) != 5 or len(got[3]) != n_arg:
        raise MXNetError("infer_storage_type_backward must return 5 lists, the fourth (input "
                         f"gradients) with {n_arg} entries")
    igrad = []
    for s in got[3]:
        if s in ("undefined", None):
            raise MXNetError("infer_storage_type_backward returned an undefined storage type "
                             "for an input gradient")
        igrad.append(st.check_stype(s, "Custom infer_storage_type_backward"))
    return tuple(igrad)


def operator_of(attrs, shapes, dtypes):
    """The CustomOp instance for a parameter set and input signature (shared by forward
    and backward, so state an operator keeps between them survives)."""
    key = (attrs, tuple(shapes), tuple(dtypes))
    hit = _OP_CACHE.get(key)
    if hit is None:
        hit = _remember(_OP_CACHE, key, prop_of(attrs).create_operator(
            HOOKS.current_context(), [list(s) for s in shapes], [np.dtype(t).type for t in dtypes]))
    return hit


def _plain(attrs):
    """The parameters without the executor's hidden keys (the operator cache's key)."""
    if any(k.startswith("__") for k in attrs):
        return Attrs({k: v for k, v in attrs.items() if not k.startswith("__")})
    return attrs


def _new_outputs(prop, attrs, args, stypes):
    """Zero NDArrays for the forward outputs: the prop's shapes, dtypes and ``stypes``."""
    wrap = HOOKS.wrap
    n_aux = len(prop.list_auxiliary_states())
    n_out = len(prop.list_outputs())
    _, shapes, _ = _split(prop.infer_shape([list(a.shape) for a in args]), "InferShape",
                          len(args), n_out, n_aux)
    _, types, _ = _split(prop.infer_type([np.dtype(a.dtype).type for a in args]), "InferType",
                         len(args), n_out, n_aux)
    return [wrap(st.zeros_raw(s, tuple(shp), np.dtype(t)))
            for s, shp, t in zip(stypes, shapes, types)]


@_user_code
def _forward_kernel(attrs, xs):
    wrap = HOOKS.wrap
    plain = _plain(attrs)
    prop = prop_of(plain)
    n_arg = len(prop.list_arguments())
    args = [wrap(x) for x in xs[:n_arg]]
    aux = [wrap(x) for x in xs[n_arg:]]
    outs = _new_outputs(prop, plain, args, _forward_stypes(plain, [st.stype_of(x) for x in xs]))
    op = operator_of(plain, [a.shape for a in args], [a.dtype for a in args])
    with HOOKS.scope(plain["op_type"]):
        op.forward(is_train=bool(attrs.get("__is_train__", False)), req=["write"] * len(outs),
                   in_data=args, out_data=outs, aux=aux)
    return tuple(o._raw for o in outs)


@_user_code
def _backward_kernel(attrs, xs):
    wrap = HOOKS.wrap
    plain = _plain(attrs)
    prop = prop_of(plain)
    n_out, n_arg, _ = _layout(prop, len(xs))
    nds = [wrap(x) for x in xs]
    ograd, ind = nds[:n_out], nds[n_out:n_out + n_arg]
    od, aux = nds[n_out + n_arg:2 * n_out + n_arg], nds[2 * n_out + n_arg:]
    stypes = _backward_stypes(plain, [st.stype_of(x) for x in xs])
    igrad = [wrap(st.zeros_raw(s, a.shape, a.dtype)) for s, a in zip(stypes, ind)]
    op = operator_of(plain, [a.shape for a in ind], [a.dtype for a in ind])
    with HOOKS.scope("_backward_" + plain["op_type"]):
        op.backward(req=["write"] * n_arg, out_grad=ograd, in_data=ind, out_data=od,
                    in_grad=igrad, aux=aux)
    return tuple(g._raw for g in igrad)


def _gradient(node, ograds):
    prop = prop_of(node.params)
    n_arg = len(prop.list_arguments())
    n_out = len(prop.list_outputs())
    outs = [(node, i) for i in range(n_out)]
    og_ids = list(range(n_out))
    deps = prop.declare_backward_dependency(og_ids, list(range(n_out, n_out + n_arg)),
                                            list(range(n_out + n_arg, 2 * n_out + n_arg)))
    if not set(og_ids) & set(deps):
        # a loss-like op (need_top_grad=False) ignores its head gradients, so backward
        # must not ask the caller for them (MXNet: Module.backward() without out_grads)
        ograds = [(make_node("zeros_like", [o], f"{node.name}_nohead{i}"), 0)
                  for i, o in enumerate(outs)]
    inputs = list(ograds) + list(node.inputs[:n_arg]) + outs + list(node.inputs[n_arg:])
    bwd = bw_node("_backward_Custom", inputs, node, "backward", **dict(node.params))
    return [(bwd, i) for i in range(n_arg)] + [None] * (len(node.inputs) - n_arg)


def _backward_shape(attrs, ins, outs):
    n_out, n_arg, _ = _layout(prop_of(attrs), len(ins))
    for i in range(n_arg):
        rules.set_shape(outs, i, ins[n_out + i], "output")
    return ins, outs


def _backward_type(attrs, ins, outs):
    n_out, n_arg, _ = _layout(prop_of(attrs), len(ins))
    for i in range(n_arg):
        rules.set_type(outs, i, ins[n_out + i], "output")
    return ins, outs


register(OpDef(
    "Custom", params=_PARAMS, inputs=_names, aux=_aux_names, num_outputs=_n_out,
    output_names=lambda a: tuple(prop_of(a).list_outputs()),
    dispatch=(Dispatch(("...",), ("default",), _forward_kernel, infer_stypes=_forward_stypes),),
    infer_shape=_shape_rule, infer_type=_type_rule, gradient=_gradient, needs_is_train=True,
    doc="""Apply a custom operator implemented in Python.

Parameters
----------
*data : NDArray or Symbol
    The inputs, in the order of the prop's ``list_arguments()`` (then its auxiliary states).
op_type : str
    The name the ``CustomOpProp`` subclass was registered under (``mx.operator.register``).
**kwargs
    Passed, as strings, to the prop's constructor.
"""))

register(OpDef(
    "_backward_Custom", params=_PARAMS,
    inputs=lambda a: ("ograd",) * len(prop_of(a).list_outputs()) + _names(a)[:len(
        prop_of(a).list_arguments())] + tuple(prop_of(a).list_outputs()) + _aux_names(a),
    num_outputs=lambda a: len(prop_of(a).list_arguments()),
    output_names=lambda a: tuple(f"{n}_grad" for n in prop_of(a).list_arguments()),
    dispatch=(Dispatch(("...",), ("default",), _backward_kernel,
                       infer_stypes=_backward_stypes),),
    infer_shape=_backward_shape, infer_type=_backward_type))
