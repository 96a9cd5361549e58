"""Broadcasting binary operators with MXNet 1.9.1's storage rows.

- broadcast_add/sub: (csr, dense) and (dense, csr) -> dense, without densifying the csr;
- broadcast_mul/div: (csr, dense) -> csr on the csr's structure (the dense operand
  broadcast to it: shapes (1, n), (n,), (m, 1), (1, 1) or (m, n));
- everything else dense (sparse inputs fall back, as in MXNet).
Gradients reduce the broadcast ograd back to each operand's shape (dense).
"""
from __future__ import annotations

import math

import numpy as np

from ... import storage as st
from ...base import MXNetError, StorageError
from ...kernels import csr as kcsr
from ...kernels import reduce as kred
from ...kernels._arrays import quiet_fp
from ..core import rules
from ..core.grad import bw, bw_node, no_grad
from ..core.helpers import CSR, DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from .unary import BINARY_PARTIALS, PARTIALS_GUARDED, dense2, mod_or_zero, same_dtype


def reduce_to_shape(g, shape):
    """Sum a broadcast gradient back to ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    if g.size == math.prod(shape):  # only axes of size 1 differ: the same values
        return g.reshape(shape)
    extra = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(extra))) if extra > 0 else g
    axes = tuple(i for i, (s, t) in enumerate(zip(shape, g.shape)) if s == 1 and t != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def _mul(x, y):
    """x * y: compiled when y is a weight per row of x (or the reverse)."""
    out = kred.mul_by_column(x, y)
    return x * y if out is None else out


def _bwd(a, xs):
    g, x, y = [v if v.__class__ is np.ndarray else st.todense(v) for v in xs]
    unused = a.get("__unused__", ())
    fn = a.fn
    if fn == "add" and not unused and g.dtype == x.dtype == y.dtype:
        # both partials are g itself, reduced to each operand's shape
        return (np.ascontiguousarray(reduce_to_shape(g, x.shape)),
                np.ascontiguousarray(reduce_to_shape(g, y.shape)))
    if fn == "mul" and unused:
        # one operand wants no gradient (a feature-value weight, data): skip its product
        # and reduction, as large as the output
        ga = None if 0 in unused else _mul(g, y)
        gb = None if 1 in unused else _mul(g, x)
    elif fn in PARTIALS_GUARDED:
        with quiet_fp():
            ga, gb = BINARY_PARTIALS[fn](g, x, y)
    else:
        ga, gb = BINARY_PARTIALS[fn](g, x, y)
    out = []
    for k, (part, v) in enumerate(((ga, x), (gb, y))):
        if k in unused:
            out.append(None)
            continue
        part = reduce_to_shape(part if part.shape == g.shape else
                               np.broadcast_to(part, g.shape), v.shape)
        out.append(np.ascontiguousarray(part, dtype=v.dtype))
    return tuple(out)


def _bwd_grad(node, og):
    """Second-order rule of ``_backward_broadcast_binary`` (add, sub, mul): the outputs are
    reduce(g), reduce(+-g) and reduce(g*b), reduce(g*a); ``og`` has the operands' shapes."""
    g, a, b = node.inputs
    fn = node.params.fn
    oa, ob = og
    if fn in ("add", "sub"):
        op = "broadcast_add" if fn == "add" else "broadcast_sub"
        return [bw(op, [oa, ob], node, "grad_ograd"), None, None]
    if fn != "mul":
        raise MXNetError(f"the gradient of broadcast_{fn}'s backward (a higher-order "
                         "gradient) is not implemented")
    d_g = bw("broadcast_add", [bw("broadcast_mul", [oa, b], node, "grad_oa_b"),
                               bw("broadcast_mul", [ob, a], node, "grad_ob_a")],
             node, "grad_ograd")
    # reduce(g * ob) to a's shape and reduce(g * oa) to b's: the "add" backward reduces
    ra = bw_node("_backward_broadcast_binary", [bw("broadcast_mul", [g, ob], node, "grad_g_ob"),
                                                a, b], node, "grad_lhs", fn="add")
    rb = bw_node("_backward_broadcast_binary", [bw("broadcast_mul", [g, oa], node, "grad_g_oa"),
                                                a, b], node, "grad_rhs", fn="add")
    return [d_g, (ra, 0), (rb, 1)]


register(OpDef("_backward_broadcast_binary", inputs=("ograd", "lhs", "rhs"), num_outputs=2,
               output_names=("lhs_grad", "rhs_grad"),
               params=Params(fn=Field("str", choices=tuple(BINARY_PARTIALS))),
               dispatch=(Dispatch((DNS, DNS, DNS), (DNS, DNS), _bwd),
                         Dispatch(("*", "*", "*"), (DNS, DNS), _bwd)),
               infer_shape=rules.grads_like_inputs(1),
               infer_type=rules.grads_like_inputs_type(1),
               gradient=_bwd_grad, skips_unused_outputs=True,
               doc="Gradients of a broadcast binary op, reduced to each operand's shape."))


def _grad(kind):
    def grad(node, og):
        n = bw_node("_backward_broadcast_binary", [og[0], node.inputs[0], node.inputs[1]],
                    node, "backward", fn=kind)
        return [(n, 0), (n, 1)]
    return grad


def _result(xs):
    return np.result_type(*[x.dtype for x in xs])


def _add_csr_vec(sign_l, sign_r):
    """(csr, dense) or (dense, csr) -> dense: the dense operand broadcast once, csr scattered."""
    def k(a, xs):
        x, y = xs
        shape = rules.broadcast_shapes(x.shape, y.shape)
        dt = _result(xs)
        c, d, sc, sd = (x, y, sign_l, sign_r) if isinstance(x, st.CSR) else (y, x, sign_r, sign_l)
        out = np.array(np.broadcast_to(d if sd > 0 else -d, shape), dtype=dt)
        if tuple(c.shape) != shape:  # csr is the broadcast operand: densify (small by shape)
            out += np.broadcast_to(st.todense(c) * sc, shape)
            return (out,)
        return (kcsr.add_csr_dns(kcsr.map_values(c, np.negative) if sc < 0 else c, out),)
    return k


def _mul_csr_vec(div):
    def k(a, xs):
        x, y = xs
        shape = tuple(rules.broadcast_shapes(x.shape, y.shape))
        if len(shape) != 2:  # MXNet 1.9.1 returns a "csr" of this shape, which no csr holds
            op = "broadcast_div" if div else "broadcast_mul"
            raise StorageError(f"{op}(csr, default): the csr result must be 2-D, but the "
                               f"operands {x.shape} and {y.shape} broadcast to {shape}; "
                               "cast the csr operand to default storage first")
        if shape != tuple(x.shape):
            # the csr itself is broadcast: compute densely, return csr as the row promises
            with np.errstate(divide="ignore", invalid="ignore"):
                d = (np.divide if div else np.multiply)(st.todense(x), y)
            return (kcsr.dense_to_csr(np.ascontiguousarray(d, dtype=_result(xs))),)
        fn = kcsr.broadcast_div_csr_vec if div else kcsr.broadcast_mul_csr_vec
        with np.errstate(divide="ignore", invalid="ignore"):
            out = fn(x, y)
        return (st.CSR(np.asarray(out.data).astype(_result(xs), copy=False), out.indices,
                       out.indptr, out.shape),)
    return k


def _mul_fwd(a, xs):
    out = kred.mul_by_column(xs[0], xs[1])
    return _MUL_NUMPY(a, xs) if out is None else (out,)


_MUL_NUMPY = dense2(same_dtype(np.multiply))


def broadcast_op(name, fn, kind=None, sparse_rows=(), aliases=(), doc="", dense=None):
    rows = (Dispatch((DNS, DNS), (DNS,), dense or dense2(same_dtype(fn))),) + tuple(sparse_rows)
    register(OpDef(name, inputs=("lhs", "rhs"), dispatch=rows,
                   gradient=_grad(kind) if kind else no_grad,
                   infer_shape=rules.broadcast_shape, aliases=aliases,
                   doc=doc or f"Broadcasting {name[len('broadcast_'):]} (dense)."))


broadcast_op("broadcast_add", np.add, "add",
             (Dispatch((CSR, DNS), (DNS,), _add_csr_vec(1, 1)),
              Dispatch((DNS, CSR), (DNS,), _add_csr_vec(1, 1))),
             aliases=("broadcast_plus", "_sparse_broadcast_add", "_sparse_broadcast_plus"),
             doc="Broadcasting sum; (csr, dense) and (dense, csr) give dense results.")
broadcast_op("broadcast_sub", np.subtract, "sub",
             (Dispatch((CSR, DNS), (DNS,), _add_csr_vec(1, -1)),
              Dispatch((DNS, CSR), (DNS,), _add_csr_vec(1, -1))),
             aliases=("broadcast_minus", "_sparse_broadcast_sub", "_sparse_broadcast_minus"),
             doc="Broadcasting difference; (csr, dense) and (dense, csr) give dense results.")
broadcast_op("broadcast_mul", np.multiply, "mul",
             (Dispatch((CSR, DNS), (CSR,), _mul_csr_vec(False)),),
             aliases=("_sparse_broadcast_mul",), dense=_mul_fwd,
             doc="Broadcasting product; (csr, dense) keeps the csr structure.")
broadcast_op("broadcast_div", np.divide, "div",
             (Dispatch((CSR, DNS), (CSR,), _mul_csr_vec(True)),),
             aliases=("_sparse_broadcast_div",),
             doc="Broadcasting quotient; (csr, dense) keeps the csr structure.")
for _n, _k in (("broadcast_power", "power"), ("broadcast_maximum", "maximum"),
               ("broadcast_minimum", "minimum"), ("broadcast_hypot", "hypot")):
    broadcast_op(_n, getattr(np, "power" if _k == "power" else _k), _k)
broadcast_op("broadcast_mod", mod_or_zero, "mod")


def _cmp(fn):
    return lambda x, y: fn(x, y).astype(np.result_type(x, y))


for _n, _f in (("broadcast_equal", np.equal), ("broadcast_not_equal", np.not_equal),
               ("broadcast_greater", np.greater), ("broadcast_greater_equal", np.greater_equal),
               ("broadcast_lesser", np.less), ("broadcast_lesser_equal", np.less_equal),
               ("broadcast_logical_and", np.logical_and), ("broadcast_logical_or", np.logical_or),
               ("broadcast_logical_xor", np.logical_xor)):
    broadcast_op(_n, _cmp(_f))
