"""Elementwise binary operators (same shapes) and add_n, with MXNet 1.9.1's storage rows.

- elemwise_add/sub, _grad_add: R,R -> R; C,C -> C; a dense operand -> D. csr with
  row_sparse -> D is computed directly (MXNet falls back).
- elemwise_mul: R*R, R*D, D*R -> R; C*C, C*D, D*C -> C; C*R, R*C -> D (MXNet: fallback).
- elemwise_div, _power: dense result; R,R and mixes with a dense operand [ex].
- _maximum, _minimum, _hypot: R,R -> R; C,C -> C (zero-preserving on the union).
- _scatter_elemwise_div: lhs R -> R on lhs's rows only.
- comparisons, _mod, logical ops: dense only (sparse inputs fall back, as in MXNet).
- add_n: all R -> R; (D, C, D) and more than 4 inputs with a dense one -> D.
Gradients of mul/div/power/max/min/hypot are dense, as in MXNet.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...kernels import csr as kcsr
from ...kernels import onednn as konednn
from ...kernels import rsp as krsp
from ..core import rules
from ..core.grad import bw, bw_node, no_grad
from ..core.helpers import CSR, DNS, RSP, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register
from .unary import BINARY_PARTIALS, dense2, mod_or_zero, same_dtype


def _result(xs):
    return np.result_type(*[x.dtype for x in xs])


def _dense_binary(fn):
    """fn on densified operands, in the operands' common dtype."""
    def k(a, xs):
        x, y = st.todense(xs[0]), st.todense(xs[1])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (np.asarray(fn(x, y)).astype(_result(xs), copy=False),)
    return k


# ----------------------------------------------------------------------------- sparse kernels
def _rsp_add(alpha, beta):
    return lambda a, xs: (krsp.add_rsp_rsp(xs[0], xs[1], alpha, beta),)


def _csr_add(alpha, beta):
    return lambda a, xs: (kcsr.add_csr_csr(xs[0], xs[1], alpha, beta),)


def _add_sparse_dense(sign_l, sign_r):
    """sign_l*lhs + sign_r*rhs as dense: the dense operand copied once, the sparse one scattered."""
    def k(a, xs):
        x, y = xs
        dt = _result(xs)
        out = np.zeros(x.shape, dtype=dt)
        for v, sgn in ((x, sign_l), (y, sign_r)):
            if isinstance(v, np.ndarray):
                out += v if sgn > 0 else -v
            elif isinstance(v, st.RSP):
                if len(v.indices):
                    out[v.indices] += v.data if sgn > 0 else -v.data
            else:
                out = kcsr.add_csr_dns(kcsr.map_values(v, np.negative) if sgn < 0 else v, out)
        return (out.astype(dt, copy=False),)
    return k


def _mul_csr_rsp(a, xs):
    """csr * row_sparse (either order) as dense: csr entries whose row the rsp stores."""
    c, r = (xs[0], xs[1]) if isinstance(xs[0], st.CSR) else (xs[1], xs[0])
    out = np.zeros(c.shape, dtype=_result(xs))
    rows = np.repeat(np.arange(c.shape[0], dtype=np.int64), np.diff(c.indptr))
    cols = c.indices[:c.nnz]
    pos = krsp.rows_lookup(r.indices, rows)
    hit = pos >= 0
    out[rows[hit], cols[hit]] += c.data[:c.nnz][hit] * r.data[pos[hit], cols[hit]]
    return (out,)


def _union(fn):
    def k_rsp(a, xs):
        return (krsp.union_apply_rsp(xs[0], xs[1], fn),)

    def k_csr(a, xs):
        return (kcsr.union_apply_csr(xs[0], xs[1], fn),)
    return k_rsp, k_csr


def _scatter_div(a, xs):
    """lhs / rhs on lhs's stored rows only (MXNet's _scatter_elemwise_div)."""
    x, y = xs
    if isinstance(y, st.RSP):
        yr = krsp.take_rows_rsp(y, x.indices) if len(x.indices) else y.data[:0]
    elif isinstance(y, st.CSR):
        yr = kcsr.csr_to_dense(kcsr.take_rows_csr(y, x.indices))
    else:
        yr = y[x.indices]
    with np.errstate(divide="ignore", invalid="ignore"):
        data = (x.data / yr).astype(_result(xs), copy=False)
    return (st.RSP(data, x.indices, x.shape),)


# ----------------------------------------------------------------------------- gradients
def _add_grad(node, og):
    return [og[0], og[0]]


def _sub_grad(node, og):
    return [og[0], bw("negative", [og[0]], node, "neg_grad")]


def _two_grads(bname):
    def grad(node, og):
        n = bw_node(bname, [og[0], node.inputs[0], node.inputs[1]], node, "backward")
        return [(n, 0), (n, 1)]
    return grad


# the same-shape ops with a registered ``_backward_<kind>`` (add/sub have identity rules)
_BACKWARD_KINDS = ("mul", "div", "power", "maximum", "minimum", "hypot")


def _backward_binary(kind):
    """Dense partials (ograd*d/dlhs, ograd*d/drhs) on densified inputs."""
    def k(a, xs):
        g, x, y = (st.todense(v) for v in xs)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ga, gb = BINARY_PARTIALS[kind](g, x, y)
        return (np.asarray(ga).astype(x.dtype, copy=False),
                np.asarray(gb).astype(y.dtype, copy=False))
    return k


def _backward_mul_grad(node, og):
    """Second-order rule of ``_backward_mul(g, a, b) = (g*b, g*a)``."""
    g, a, b = node.inputs
    oa, ob = og
    d_g = bw("elemwise_add", [bw("elemwise_mul", [oa, b], node, "grad_oa_b"),
                              bw("elemwise_mul", [ob, a], node, "grad_ob_a")], node, "grad_ograd")
    return [d_g, bw("elemwise_mul", [g, ob], node, "grad_lhs"),
            bw("elemwise_mul", [g, oa], node, "grad_rhs")]


for _k in _BACKWARD_KINDS:
    register(OpDef(f"_backward_{_k}", inputs=("ograd", "lhs", "rhs"), num_outputs=2,
                   output_names=("lhs_grad", "rhs_grad"),
                   dispatch=(Dispatch((DNS, DNS, DNS), (DNS, DNS), _backward_binary(_k)),
                             Dispatch(("*", "*", "*"), (DNS, DNS), _backward_binary(_k))),
                   infer_shape=rules.grads_like_inputs(1),
                   infer_type=rules.grads_like_inputs_type(1),
                   gradient=_backward_mul_grad if _k == "mul" else None,
                   doc=f"Dense gradients of the elementwise {_k} (MXNet gives dense ones)."))


def _blocked_ok(fn):
    """The dense kernel of ``fn`` (f(0, 0) = 0), also on two oneDNN Tensors of one layout
    inside a plan (residual adds and gradient sums between convolutions)."""
    dense = dense2(fn)

    def k(attrs, xs):
        md, xs = konednn.one_layout(xs)
        if md is not None:
            return (konednn.Tensor(md, fn(xs[0].values(), xs[1].values()).view(np.uint8)),)
        return dense(attrs, [konednn.to_plain(x) for x in xs])
    return k


# ----------------------------------------------------------------------------- registration
_ADD_DOC = """Elementwise {what}.

    Storage: row_sparse {op} row_sparse -> row_sparse, csr {op} csr -> csr, with a dense
    operand -> dense; csr {op} row_sparse -> dense (MXNet falls back to dense there).
    """
for _name, _alpha, _beta, _grad, _al, _what, _op in (
        ("elemwise_add", 1.0, 1.0, _add_grad, ("_add", "_plus", "_Plus"), "sum", "+"),
        ("elemwise_sub", 1.0, -1.0, _sub_grad, ("_sub", "_minus", "_Minus"), "difference", "-")):
    _dense = _blocked_ok(np.add if _beta > 0 else np.subtract)
    _sd = _add_sparse_dense(1, 1 if _beta > 0 else -1)
    register(OpDef(
        _name, inputs=("lhs", "rhs"),
        dispatch=(Dispatch((DNS, DNS), (DNS,), _dense, blocked=True),
                  Dispatch((RSP, RSP), (RSP,), _rsp_add(_alpha, _beta)),
                  Dispatch((CSR, CSR), (CSR,), _csr_add(_alpha, _beta)),
                  Dispatch((DNS, CSR), (DNS,), _sd), Dispatch((CSR, DNS), (DNS,), _sd),
                  Dispatch((DNS, RSP), (DNS,), _sd), Dispatch((RSP, DNS), (DNS,), _sd),
                  Dispatch((CSR, RSP), (DNS,), _sd), Dispatch((RSP, CSR), (DNS,), _sd)),
        gradient=_grad, aliases=(f"_sparse_{_name}",) + _al, sums_inputs=_beta > 0,
        doc=_ADD_DOC.format(what=_what, op=_op)))

register(OpDef(
    "_grad_add", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _blocked_ok(np.add), blocked=True),
              Dispatch((RSP, RSP), (RSP,), _rsp_add(1.0, 1.0)),
              Dispatch((CSR, CSR), (CSR,), _csr_add(1.0, 1.0))),
    gradient=_add_grad, doc="Gradient accumulation sum (elemwise_add's rules; mixes fall back)."))

register(OpDef(
    "elemwise_mul", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), dense2(np.multiply)),
              Dispatch((RSP, RSP), (RSP,), lambda a, xs: (krsp.mul_rsp_rsp(xs[0], xs[1]),)),
              Dispatch((RSP, DNS), (RSP,), lambda a, xs: (krsp.mul_rsp_dns(xs[0], xs[1]),)),
              Dispatch((DNS, RSP), (RSP,), lambda a, xs: (krsp.mul_rsp_dns(xs[1], xs[0]),)),
              Dispatch((CSR, CSR), (CSR,), lambda a, xs: (kcsr.mul_csr_csr(xs[0], xs[1]),)),
              Dispatch((CSR, DNS), (CSR,), lambda a, xs: (kcsr.mul_csr_dns(xs[0], xs[1]),)),
              Dispatch((DNS, CSR), (CSR,), lambda a, xs: (kcsr.mul_csr_dns(xs[1], xs[0]),)),
              Dispatch((CSR, RSP), (DNS,), _mul_csr_rsp),
              Dispatch((RSP, CSR), (DNS,), _mul_csr_rsp)),
    gradient=_two_grads("_backward_mul"), aliases=("_sparse_elemwise_mul", "_mul", "_Mul"),
    doc="""Elementwise product.

    Storage: row_sparse with row_sparse or dense -> row_sparse; csr with csr or dense -> csr;
    csr with row_sparse -> dense (computed directly; MXNet falls back). Gradients are dense.
    """))

_DIV_ROWS = ((RSP, RSP), (DNS, RSP), (RSP, DNS), (DNS, CSR), (CSR, DNS))
for _name, _fn, _bk, _al in (("elemwise_div", np.divide, "_backward_div",
                              ("_sparse_elemwise_div", "_div", "_Div")),
                             ("_power", np.power, "_backward_power", ("_Power",))):
    register(OpDef(
        _name, inputs=("lhs", "rhs"),
        dispatch=(Dispatch((DNS, DNS), (DNS,), dense2(same_dtype(_fn))),)
        + tuple(Dispatch(s, (DNS,), _dense_binary(_fn)) for s in _DIV_ROWS),
        gradient=_two_grads(_bk), aliases=_al,
        doc=f"Elementwise {_fn.__name__}; the result is dense (MXNet's rows: R,R and a dense "
            "operand; csr with csr or row_sparse falls back)."))

for _name, _fn, _al in (("_maximum", np.maximum, ("_Maximum",)),
                        ("_minimum", np.minimum, ("_Minimum",)),
                        ("_hypot", np.hypot, ())):
    _kr, _kc = _union(_fn)
    register(OpDef(
        _name, inputs=("lhs", "rhs"),
        dispatch=(Dispatch((DNS, DNS), (DNS,), dense2(same_dtype(_fn))),
                  Dispatch((RSP, RSP), (RSP,), _kr), Dispatch((CSR, CSR), (CSR,), _kc)),
        gradient=_two_grads("_backward_" + _name[1:]), aliases=_al,
        doc=f"Elementwise {_fn.__name__}; R,R -> R and C,C -> C on the union of entries."))

register(OpDef(
    "_scatter_elemwise_div", inputs=("lhs", "rhs"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), dense2(same_dtype(np.divide))),
              Dispatch((RSP, "*"), (RSP,), _scatter_div)),
    gradient=no_grad,
    doc="lhs / rhs computed only where the row_sparse lhs stores rows (result row_sparse)."))


def _cmp(fn):
    return lambda x, y: fn(x, y).astype(np.result_type(x, y))


def _mod_grad(node, og):
    """d lhs = ograd, d rhs = -ograd * floor(lhs / rhs) (broadcast_mod's backward)."""
    n = bw_node("_backward_broadcast_binary", [og[0], node.inputs[0], node.inputs[1]], node,
                "backward", fn="mod")
    return [(n, 0), (n, 1)]


for _n, _f in (("_mod", mod_or_zero), ("_equal", _cmp(np.equal)),
               ("_not_equal", _cmp(np.not_equal)),
               ("_greater", _cmp(np.greater)), ("_greater_equal", _cmp(np.greater_equal)),
               ("_lesser", _cmp(np.less)), ("_lesser_equal", _cmp(np.less_equal)),
               ("_logical_and", _cmp(np.logical_and)), ("_logical_or", _cmp(np.logical_or)),
               ("_logical_xor", _cmp(np.logical_xor))):
    register(OpDef(_n, inputs=("lhs", "rhs"),
                   dispatch=(Dispatch((DNS, DNS), (DNS,), dense2(same_dtype(_f))),),
                   gradient=_mod_grad if _n == "_mod" else no_grad,
                   aliases=("_Mod",) if _n == "_mod" else (),
                   doc=f"Elementwise {_n.strip('_')} (dense; sparse inputs fall back as in "
                       "MXNet)."))


# ----------------------------------------------------------------------------- add_n
def _add_n_dense(a, xs):
    dt = _result(xs)
    out = np.zeros(xs[0].shape, dtype=dt)
    for x in xs:
        if isinstance(x, np.ndarray):
            out += x
        elif isinstance(x, st.RSP):
            if len(x.indices):
                out[x.indices] += x.data
        else:
            out = kcsr.add_csr_dns(x, out)
    return (out,)


def _add_n_grad(node, og):
    return [og[0]] * len(node.inputs)


def _n_inputs(attrs):
    return tuple(f"arg{i}" for i in range(attrs.num_args))


def _add_n_check(op, a):
    # MXNet: "value 0 for Parameter num_args should be greater equal to 1"
    require(a.num_args >= 1, op, f"num_args must be >= 1 (at least one input), got "
                                 f"{a.num_args}")


register(OpDef(
    "add_n", params=Checked(_add_n_check, num_args=Field("int", doc="number of inputs")),
    inputs=_n_inputs,
    key_var_num_args="num_args",
    dispatch=(Dispatch((DNS, "..."), (DNS,), _add_n_dense),
              Dispatch((RSP, "..."), (RSP,), lambda a, xs: (krsp.add_n_rsp(list(xs)),)),
              Dispatch(("*", "..."), (DNS,), _add_n_dense,
                       when=lambda a, s: (len(s) > 4 and DNS in s) or tuple(s) == (DNS, CSR, DNS))),
    gradient=_add_n_grad, aliases=("ElementWiseSum", "_sparse_add_n", "_sparse_ElementWiseSum"),
    doc="""Sum of all inputs.

    Storage: all row_sparse -> row_sparse; (dense, csr, dense) and more than four inputs with
    a dense one -> dense, without densifying the sparse ones; other mixes fall back.
    """))

