"""Elementwise unary, binary, scalar and broadcast operators with their storage rows."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..kernels import csr as kcsr
from ..kernels import rsp as krsp
from . import rules
from .params import Field, Params
from .registry import Dispatch, OpDef, register

D, R, C = "default", "row_sparse", "csr"


def bw(op_name, inputs, node, tag, **params):
    """Entry of a new backward node named after the forward node."""
    from ..passes.gradient import make_node
    return (make_node(op_name, inputs, f"{node.name}_{tag}", **params), 0)


def dense1(fn):
    """Kernel applying a numpy function to one dense input."""
    return lambda attrs, xs: (fn(xs[0]),)


def dense2(fn):
    return lambda attrs, xs: (fn(xs[0], xs[1]),)


def _map_csr(fn):
    return lambda attrs, xs: (kcsr.map_values(xs[0], fn),)


def _map_rsp(fn):
    return lambda attrs, xs: (krsp.map_values(xs[0], fn),)


def _same_dtype(fn):
    """Keep the input dtype (numpy may promote float32 math with Python scalars)."""
    def g(x, *a):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = fn(x, *a)
        return r.astype(x.dtype, copy=False) if isinstance(r, np.ndarray) else np.asarray(r, x.dtype)
    return g


# ----------------------------------------------------------------------------- unary
def unary(name, fn, dfn=None, keeps_zero=True, aliases=(), doc=""):
    """Register ``name`` and ``_backward_<name>(ograd, x)``; sparse rows when fn(0) == 0.

    dfn(x) is the derivative; a None dfn means zero gradient.
    """
    fn = _same_dtype(fn)
    rows = [Dispatch((D,), (D,), dense1(fn))]
    if keeps_zero:
        rows += [Dispatch((C,), (C,), _map_csr(fn)), Dispatch((R,), (R,), _map_rsp(fn))]
    grad = None
    if dfn is not None:
        bname = "_backward_" + name
        register(OpDef(
            bname, inputs=("ograd", "data"),
            dispatch=(Dispatch((D, D), (D,), _dense_grad(dfn)),
                      Dispatch((R, R), (R,), _rsp_grad(dfn)) if keeps_zero else
                      Dispatch((R, R), (D,), _rsp_grad_dense(dfn)),
                      # dense head gradient, sparse input: a dense gradient (no fallback)
                      Dispatch((D, "*"), (D,), _rsp_grad_dense(dfn))),
            infer_shape=rules.same_shape, infer_type=rules.same_type))

        def grad(node, og, _b=bname):
            return [bw(_b, [og[0], node.inputs[0]], node, "backward")]
    elif dfn is None and keeps_zero is not None:
        def grad(node, og):
            return [None]
    return register(OpDef(name, dispatch=tuple(rows), gradient=grad, aliases=tuple(aliases),
                          doc=doc or f"Elementwise {name}."))


def _dense_grad(dfn):
    def k(attrs, xs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ((xs[0] * dfn(xs[1])).astype(xs[0].dtype, copy=False),)
    return k


def _rsp_grad(dfn):
    def k(attrs, xs):
        og, x = xs
        both = krsp.retain(x, og.indices)
        vals = krsp.retain(og, both.indices)
        return (st.RSP((vals.data * dfn(both.data)).astype(og.dtype, copy=False), both.indices,
                       og.shape),)
    return k


def _rsp_grad_dense(dfn):
    dense = _dense_grad(dfn)
    return lambda attrs, xs: dense(attrs, [st.todense(xs[0]), st.todense(xs[1])])


def _sign(x):
    return np.sign(x)


_erf = np.vectorize(__import__("math").erf, otypes=[np.float64])
_gamma = np.vectorize(__import__("math").gamma, otypes=[np.float64])
_lgamma = np.vectorize(__import__("math").lgamma, otypes=[np.float64])

unary("negative", np.negative, lambda x: -np.ones_like(x))
unary("abs", np.abs, _sign)
unary("sign", np.sign, lambda x: np.zeros_like(x))
unary("square", np.square, lambda x: 2 * x)
unary("sqrt", np.sqrt, lambda x: 0.5 / np.sqrt(x))
unary("cbrt", np.cbrt, lambda x: 1.0 / (3 * np.cbrt(x) ** 2))
unary("relu", lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(x.dtype))
unary("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2)
unary("sin", np.sin, np.cos)
unary("sinh", np.sinh, np.cosh)
unary("tan", np.tan, lambda x: 1 + np.tan(x) ** 2)
unary("arcsin", np.arcsin, lambda x: 1 / np.sqrt(1 - x * x))
unary("arcsinh", np.arcsinh, lambda x: 1 / np.sqrt(x * x + 1))
unary("arctan", np.arctan, lambda x: 1 / (1 + x * x))
unary("arctanh", np.arctanh, lambda x: 1 / (1 - x * x))
unary("expm1", np.expm1, np.exp)
unary("log1p", np.log1p, lambda x: 1 / (1 + x))
unary("degrees", np.degrees, lambda x: np.full_like(x, 180 / np.pi))
unary("radians", np.radians, lambda x: np.full_like(x, np.pi / 180))
for _n, _f in (("ceil", np.ceil), ("floor", np.floor), ("round", np.round), ("rint", np.rint),
               ("fix", np.fix), ("trunc", np.trunc)):
    unary(_n, _f, lambda x: np.zeros_like(x))
unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)),
      lambda x: (1 / (1 + np.exp(-x))) * (1 - 1 / (1 + np.exp(-x))), keeps_zero=False)
unary("exp", np.exp, np.exp, keeps_zero=False)
unary("log", np.log, lambda x: 1 / x, keeps_zero=False)
unary("log2", np.log2, lambda x: 1 / (x * np.log(2)), keeps_zero=False)
unary("log10", np.log10, lambda x: 1 / (x * np.log(10)), keeps_zero=False)
unary("cos", np.cos, lambda x: -np.sin(x), keeps_zero=False)
unary("cosh", np.cosh, np.sinh, keeps_zero=False)
unary("arccos", np.arccos, lambda x: -1 / np.sqrt(1 - x * x), keeps_zero=False)
unary("arccosh", np.arccosh, lambda x: 1 / np.sqrt(x * x - 1), keeps_zero=False)
unary("rsqrt", lambda x: 1 / np.sqrt(x), lambda x: -0.5 * x ** -1.5, keeps_zero=False)
unary("rcbrt", lambda x: 1 / np.cbrt(x), lambda x: -1 / (3 * x * np.cbrt(x)), keeps_zero=False)
unary("reciprocal", lambda x: 1 / x, lambda x: -1 / (x * x), keeps_zero=False)
unary("softsign", lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2,
      keeps_zero=False)
unary("erf", _erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), keeps_zero=False)
unary("gamma", _gamma, None, keeps_zero=False)
unary("gammaln", _lgamma, None, keeps_zero=False)


def _identity_grad(node, og):
    return [og[0]]


def _no_grad(node, og):
    return [None] * len(node.inputs)


_same_rows = (Dispatch((D,), (D,), lambda a, xs: (xs[0].copy(),)),
              Dispatch((C,), (C,), lambda a, xs: (xs[0].copy(),)),
              Dispatch((R,), (R,), lambda a, xs: (xs[0].copy(),)))
register(OpDef("_copy", dispatch=_same_rows, gradient=_identity_grad, aliases=("identity",),
               doc="Return a copy of the input."))
register(OpDef("BlockGrad", dispatch=_same_rows, gradient=_no_grad, aliases=("stop_gradient",),
               doc="Pass the input through; no gradient flows back."))
register(OpDef(
    "zeros_like",
    dispatch=(Dispatch((D,), (D,), dense1(np.zeros_like)),
              Dispatch((C,), (C,), lambda a, xs: (st.zeros_raw(C, xs[0].shape, xs[0].dtype),)),
              Dispatch((R,), (R,), lambda a, xs: (st.zeros_raw(R, xs[0].shape, xs[0].dtype),))),
    gradient=_no_grad, doc="An all-zero array like the input, keeping its storage type."))
register(OpDef("ones_like", dispatch=(Dispatch((D,), (D,), dense1(np.ones_like)),),
               gradient=_no_grad, doc="An all-one dense array like the input."))


# ----------------------------------------------------------------------------- cast_storage
def _cast_row(src, dst):
    return Dispatch((src,), (dst,), lambda a, xs: (st.cast_raw(xs[0], a.stype),),
                    when=lambda a, s, _d=dst: a.stype == _d)


def _cast_grad(node, og):
    return [bw("cast_storage", [og[0]], node, "backward", stype=D)]


register(OpDef(
    "cast_storage",
    params=Params(stype=Field("str", choices=(D, R, C), doc="output storage type")),
    dispatch=tuple(_cast_row(s, d) for s in (D, R, C) for d in (D, R, C)),
    gradient=_cast_grad, aliases=("_sparse_cast_storage",),
    doc="Cast to another storage type (csr <-> row_sparse included, which MXNet lacks)."))


# ----------------------------------------------------------------------------- binary elemwise
def _rsp_add(alpha, beta):
    return lambda a, xs: (krsp.add_rsp_rsp(xs[0], xs[1], alpha, beta),)


def _csr_add(alpha, beta):
    return lambda a, xs: (kcsr.add_csr_csr(xs[0], xs[1], alpha, beta),)


def _mixed(fn):
    return lambda a, xs: (fn(st.todense(xs[0]), st.todense(xs[1])).astype(
        np.result_type(xs[0].dtype, xs[1].dtype), copy=False),)


def _add_grad(node, og):
    return [og[0], og[0]]


def _sub_grad(node, og):
    return [og[0], bw("negative", [og[0]], node, "neg_grad")]


def _mul_grad(node, og):
    a, b = node.inputs
    return [bw("elemwise_mul", [og[0], b], node, "lhs_grad"),
            bw("elemwise_mul", [og[0], a], node, "rhs_grad")]


def _div_grad(node, og):
    a, b = node.inputs
    return [bw("_backward_div_lhs", [og[0], b], node, "lhs_grad"),
            bw("_backward_div_rhs", [og[0], a, b], node, "rhs_grad")]


register(OpDef(
    "elemwise_add", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((D, D), (D,), dense2(np.add)),
              Dispatch((R, R), (R,), _rsp_add(1.0, 1.0)),
              Dispatch((C, C), (C,), _csr_add(1.0, 1.0)),
              Dispatch((D, C), (D,), _mixed(np.add)), Dispatch((C, D), (D,), _mixed(np.add)),
              Dispatch((D, R), (D,), _mixed(np.add)), Dispatch((R, D), (D,), _mixed(np.add))),
    gradient=_add_grad, aliases=("_sparse_elemwise_add", "_add", "_plus", "_Plus"),
    doc="Elementwise sum; rsp+rsp -> row_sparse, csr+csr -> csr, with a dense operand -> dense."))
register(OpDef(
    "elemwise_sub", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((D, D), (D,), dense2(np.subtract)),
              Dispatch((R, R), (R,), _rsp_add(1.0, -1.0)),
              Dispatch((C, C), (C,), _csr_add(1.0, -1.0)),
              Dispatch((D, C), (D,), _mixed(np.subtract)),
              Dispatch((C, D), (D,), _mixed(np.subtract)),
              Dispatch((D, R), (D,), _mixed(np.subtract)),
              Dispatch((R, D), (D,), _mixed(np.subtract))),
    gradient=_sub_grad, aliases=("_sparse_elemwise_sub", "_sub", "_minus", "_Minus"),
    doc="Elementwise difference."))
register(OpDef(
    "elemwise_mul", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((D, D), (D,), dense2(np.multiply)),
              Dispatch((R, R), (R,), lambda a, xs: (krsp.mul_rsp_rsp(xs[0], xs[1]),)),
              Dispatch((R, D), (R,), lambda a, xs: (krsp.mul_rsp_dns(xs[0], xs[1]),)),
              Dispatch((D, R), (R,), lambda a, xs: (krsp.mul_rsp_dns(xs[1], xs[0]),)),
              Dispatch((C, C), (C,), lambda a, xs: (kcsr.mul_csr_csr(xs[0], xs[1]),)),
              Dispatch((C, D), (C,), lambda a, xs: (kcsr.mul_csr_dns(xs[0], xs[1]),)),
              Dispatch((D, C), (C,), lambda a, xs: (kcsr.mul_csr_dns(xs[1], xs[0]),))),
    gradient=_mul_grad, aliases=("_sparse_elemwise_mul", "_mul", "_Mul"),
    doc="Elementwise product; keeps sparsity where MXNet does."))
register(OpDef(
    "elemwise_div", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((D, D), (D,), dense2(np.divide)),
              Dispatch((R, R), (D,), _mixed(np.divide))),
    gradient=_div_grad, aliases=("_sparse_elemwise_div", "_div", "_Div"),
    doc="Elementwise quotient (dense result)."))
register(OpDef("_backward_div_lhs", inputs=("ograd", "rhs"),
               dispatch=(Dispatch((D, D), (D,), dense2(np.divide)),)))
register(OpDef("_backward_div_rhs", inputs=("ograd", "lhs", "rhs"),
               dispatch=(Dispatch((D, D, D), (D,),
                                  lambda a, xs: (-xs[0] * xs[1] / (xs[2] * xs[2]),)),),
               infer_shape=lambda a, i, o: rules.grads_like_inputs(2)(a, i, o)))


def _binary_dense(name, fn, grad=None, aliases=()):
    register(OpDef(name, inputs=("lhs", "rhs"),
                   dispatch=(Dispatch((D, D), (D,), dense2(_same_dtype(fn))),),
                   gradient=grad or _no_grad, aliases=aliases))


def _cmp(fn):
    return lambda x, y: fn(x, y).astype(np.result_type(x, y))


_binary_dense("_power", np.power, aliases=("_Power",))
_binary_dense("_maximum", np.maximum, aliases=("_Maximum",))
_binary_dense("_minimum", np.minimum, aliases=("_Minimum",))
_binary_dense("_mod", np.mod, aliases=("_Mod",))
_binary_dense("_hypot", np.hypot)
for _n, _f in (("_equal", np.equal), ("_not_equal", np.not_equal), ("_greater", np.greater),
               ("_greater_equal", np.greater_equal), ("_lesser", np.less),
               ("_lesser_equal", np.less_equal), ("_logical_and", np.logical_and),
               ("_logical_or", np.logical_or), ("_logical_xor", np.logical_xor)):
    _binary_dense(_n, _cmp(_f))


# ----------------------------------------------------------------------------- scalar ops
_SCALAR = Params(scalar=Field("float", 1.0, doc="scalar operand"),
                 is_int=Field("bool", False, doc="treat the scalar as an integer"))


def scalar_op(name, fn, zero_keeps=None, dfn=None):
    """Register ``name(data, scalar)``; sparse rows when ``zero_keeps(scalar)`` holds."""
    def k(a, xs):
        x = xs[0]
        return (np.asarray(fn(x, a.scalar)).astype(x.dtype, copy=False),)
    rows = [Dispatch((D,), (D,), k)]
    if zero_keeps is not None:
        cond = lambda a, s, _z=zero_keeps: _z(a.scalar)
        rows += [Dispatch((C,), (C,), lambda a, xs: (kcsr.map_values(
                     xs[0], lambda v: np.asarray(fn(v, a.scalar)).astype(v.dtype)),), when=cond),
                 Dispatch((R,), (R,), lambda a, xs: (krsp.map_values(
                     xs[0], lambda v: np.asarray(fn(v, a.scalar)).astype(v.dtype)),), when=cond)]
    grad = _no_grad
    if dfn is not None:
        def grad(node, og, _d=dfn):
            return [bw("_backward_scalar", [og[0], node.inputs[0]], node, "backward",
                       fn=_d, scalar=node.params.scalar)]
    register(OpDef(name, params=_SCALAR, dispatch=tuple(rows), gradient=grad))


_DERIV = {
    "one": lambda x, s: np.ones_like(x), "neg_one": lambda x, s: -np.ones_like(x),
    "mul": lambda x, s: np.full_like(x, s), "div": lambda x, s: np.full_like(x, 1.0 / s),
    "rdiv": lambda x, s: -s / (x * x), "pow": lambda x, s: s * x ** (s - 1),
    "rpow": lambda x, s: np.log(s) * s ** x,
    "max": lambda x, s: (x >= s).astype(x.dtype), "min": lambda x, s: (x <= s).astype(x.dtype),
}
register(OpDef("_backward_scalar", inputs=("ograd", "data"),
               params=Params(fn=Field("str", choices=tuple(_DERIV)), scalar=Field("float", 1.0)),
               dispatch=(Dispatch((D, D), (D,), lambda a, xs: (
                   (xs[0] * _DERIV[a.fn](xs[1], a.scalar)).astype(xs[0].dtype, copy=False),)),)))

scalar_op("_plus_scalar", np.add, lambda s: s == 0, "one")
scalar_op("_minus_scalar", np.subtract, lambda s: s == 0, "one")
scalar_op("_rminus_scalar", lambda x, s: s - x, None, "neg_one")
scalar_op("_mul_scalar", np.multiply, lambda s: True, "mul")
scalar_op("_div_scalar", np.divide, lambda s: True, "div")
scalar_op("_rdiv_scalar", lambda x, s: s / x, None, "rdiv")
scalar_op("_power_scalar", np.power, None, "pow")
scalar_op("_rpower_scalar", lambda x, s: np.power(s, x), None, "rpow")
scalar_op("_maximum_scalar", np.maximum, None, "max")
scalar_op("_minimum_scalar", np.minimum, None, "min")
scalar_op("_mod_scalar", np.mod, None)
scalar_op("_rmod_scalar", lambda x, s: np.mod(s, x), None)
for _n, _f in (("_equal_scalar", np.equal), ("_not_equal_scalar", np.not_equal),
               ("_greater_scalar", np.greater), ("_greater_equal_scalar", np.greater_equal),
               ("_lesser_scalar", np.less), ("_lesser_equal_scalar", np.less_equal)):
    # sparse result only when op(0, s) is false (MXNet's rule)
    scalar_op(_n, _f, lambda s, _f=_f: not bool(_f(0.0, s)))


# ----------------------------------------------------------------------------- broadcast
def _is_vec_for(csr_shape, d):
    """MXNet: the dense operand of broadcast with csr must be (1,n), (n,) or (m,1)."""
    m, n = csr_shape
    return tuple(d) in ((1, n), (n,), (m, 1))


def _bcast_grad(node, og):
    a, b = node.inputs
    return [bw("_backward_broadcast_reduce", [og[0], a], node, "lhs_grad"),
            bw("_backward_broadcast_reduce", [og[0], b], node, "rhs_grad")]


def _bcast_sub_grad(node, og):
    a, b = node.inputs
    neg = bw("negative", [og[0]], node, "neg_ograd")
    return [bw("_backward_broadcast_reduce", [og[0], a], node, "lhs_grad"),
            bw("_backward_broadcast_reduce", [neg, b], node, "rhs_grad")]


def _bcast_mul_grad(node, og):
    a, b = node.inputs
    ga = bw("broadcast_mul", [og[0], b], node, "lhs_prod")
    gb = bw("broadcast_mul", [og[0], a], node, "rhs_prod")
    return [bw("_backward_broadcast_reduce", [ga, a], node, "lhs_grad"),
            bw("_backward_broadcast_reduce", [gb, b], node, "rhs_grad")]


def _bcast_div_grad(node, og):
    a, b = node.inputs
    ga = bw("broadcast_div", [og[0], b], node, "lhs_quot")
    gb = bw("_backward_bdiv_rhs", [og[0], a, b], node, "rhs_part")
    return [bw("_backward_broadcast_reduce", [ga, a], node, "lhs_grad"),
            bw("_backward_broadcast_reduce", [gb, b], node, "rhs_grad")]


def reduce_to_shape(g, shape):
    """Sum a broadcast gradient back to ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(extra))) if extra > 0 else g
    axes = tuple(i for i, (s, t) in enumerate(zip(shape, g.shape)) if s == 1 and t != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


register(OpDef("_backward_broadcast_reduce", inputs=("ograd", "like"),
               dispatch=(Dispatch((D, "*"), (D,), lambda a, xs: (
                   reduce_to_shape(st.todense(xs[0]), xs[1].shape),)),),
               infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))
register(OpDef("_backward_bdiv_rhs", inputs=("ograd", "lhs", "rhs"),
               dispatch=(Dispatch((D, D, D), (D,),
                                  lambda a, xs: (-xs[0] * xs[1] / (xs[2] * xs[2]),)),),
               infer_shape=rules.first_input_shape, infer_type=rules.same_type))


def _csr_vec(fn):
    def k(a, xs):
        x, y = xs
        return (np.asarray(fn(st.todense(x), st.todense(y))).astype(
            np.result_type(x.dtype, y.dtype), copy=False),)
    return k


def broadcast_op(name, fn, grad, sparse_rows=(), aliases=()):
    rows = (Dispatch((D, D), (D,), dense2(_same_dtype(fn))),) + tuple(sparse_rows)
    register(OpDef(name, inputs=("lhs", "rhs"), dispatch=rows, gradient=grad,
                   infer_shape=rules.broadcast_shape, aliases=aliases))


broadcast_op("broadcast_add", np.add, _bcast_grad,
             (Dispatch((C, D), (D,), _csr_vec(np.add)), Dispatch((D, C), (D,), _csr_vec(np.add))),
             aliases=("broadcast_plus", "_sparse_broadcast_add"))
broadcast_op("broadcast_sub", np.subtract, _bcast_sub_grad,
             (Dispatch((C, D), (D,), _csr_vec(np.subtract)),
              Dispatch((D, C), (D,), _csr_vec(np.subtract))),
             aliases=("broadcast_minus", "_sparse_broadcast_sub"))
broadcast_op("broadcast_mul", np.multiply, _bcast_mul_grad,
             (Dispatch((C, D), (C,), lambda a, xs: (kcsr.broadcast_mul_csr_vec(xs[0], xs[1]),)),),
             aliases=("_sparse_broadcast_mul",))
broadcast_op("broadcast_div", np.divide, _bcast_div_grad,
             (Dispatch((C, D), (C,), lambda a, xs: (kcsr.broadcast_div_csr_vec(xs[0], xs[1]),)),),
             aliases=("_sparse_broadcast_div",))
for _n, _f in (("broadcast_power", np.power), ("broadcast_maximum", np.maximum),
               ("broadcast_minimum", np.minimum), ("broadcast_mod", np.mod),
               ("broadcast_hypot", np.hypot)):
    broadcast_op(_n, _f, _no_grad)
for _n, _f in (("broadcast_equal", np.equal), ("broadcast_not_equal", np.not_equal),
               ("broadcast_greater", np.greater), ("broadcast_greater_equal", np.greater_equal),
               ("broadcast_lesser", np.less), ("broadcast_lesser_equal", np.less_equal),
               ("broadcast_logical_and", np.logical_and), ("broadcast_logical_or", np.logical_or),
               ("broadcast_logical_xor", np.logical_xor)):
    broadcast_op(_n, _cmp(_f), _no_grad)


# ----------------------------------------------------------------------------- add_n
def _add_n_dense(a, xs):
    out = st.todense(xs[0]).copy()
    for x in xs[1:]:
        out += st.todense(x)
    return (out,)


def _add_n_grad(node, og):
    return [og[0]] * len(node.inputs)


def _n_inputs(attrs):
    return tuple(f"arg{i}" for i in range(attrs.num_args))


register(OpDef(
    "add_n", params=Params(num_args=Field("int", doc="number of inputs")), inputs=_n_inputs,
    key_var_num_args="num_args",
    dispatch=(Dispatch((D, "..."), (D,), _add_n_dense),
              Dispatch((R, "..."), (R,), lambda a, xs: (krsp.add_n_rsp(list(xs)),)),
              Dispatch(("*", "..."), (D,), _add_n_dense,
                       when=lambda a, s: (len(s) > 4 and D in s) or tuple(s) == (D, C, D))),
    gradient=_add_n_grad, aliases=("ElementWiseSum", "_sparse_add_n", "_sparse_ElementWiseSum"),
    doc="Sum of all inputs; all row_sparse -> row_sparse."))
