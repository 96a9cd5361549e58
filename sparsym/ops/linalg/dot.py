"""dot and batch_dot, with MXNet's sparse storage rows (csr . dense, csr.T . dense -> rsp...)."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...kernels import blas
from ...kernels import csr_dot as kdot
from ...kernels._arrays import rows2
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import CSR, DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_DOT = Params(
    transpose_a=Field("bool", False, doc="transpose the left operand"),
    transpose_b=Field("bool", False, doc="transpose the right operand"),
    forward_stype=Field("str_or_none", None, choices=(None, DNS, RSP, CSR),
                        doc="requested output storage type"))


def _t(x, flag):
    if not flag:
        return x
    return x.T if x.ndim == 2 else np.transpose(x, tuple(range(x.ndim))[::-1])


def _dot_dense(a, xs):
    x, y = _t(xs[0], a.transpose_a), _t(xs[1], a.transpose_b)
    if x.ndim == 2 and y.ndim == 2:
        with blas.gemm_threads(x.size * y.shape[1]):
            return (np.matmul(x, y),)
    if x.ndim == 1 and y.ndim == 1:
        if _row_times_column(x.shape, y.shape, a):
            return (x * y,)
        return (np.asarray(np.dot(x, y)).reshape(1),)
    with blas.gemm_threads(x.size * (y.size // max(y.shape[0], 1))):
        return (np.tensordot(x, y, axes=1),)


def _row_times_column(xs, ys, attrs):
    """A transposed 1-D operand is a row: (1,) against (n,) is then a (1 x 1) . (1 x n)
    product, shape (n,). MXNet rejects the pair; the gradients of vector . vector are
    exactly these products (d lhs = og . rhs^T, og of shape (1,))."""
    return ((attrs.transpose_a or attrs.transpose_b) and xs[0] != ys[0]
            and 1 in (xs[0], ys[0]))


def dot_shape(attrs, ins, outs):
    """Output (lhs dims but last) + (rhs dims but first), after transposes."""
    a, b = ins
    ta = tuple(a[::-1]) if a is not None and attrs.transpose_a else a
    tb = tuple(b[::-1]) if b is not None and attrs.transpose_b else b
    if (ta is not None and tb is not None and len(ta) == 1 and len(tb) == 1
            and None not in ta + tb and _row_times_column(ta, tb, attrs)):
        rules.set_shape(outs, 0, (max(ta[0], tb[0]),), "output")
        return ins, outs
    if ta is not None and tb is not None:
        if ta[-1] is not None and tb[0] is not None and ta[-1] != tb[0]:
            raise rules.Conflict("shape", 1, "input", ta, tb)
        out = tuple(ta[:-1]) + tuple(tb[1:])
        if len(ta) == 1 and len(tb) == 1:
            out = (1,)
        rules.set_shape(outs, 0, out, "output")
    return ins, outs


def _fs(*allowed):
    return lambda a, s: a.forward_stype in allowed


def _plain(a):
    return not a.transpose_a and not a.transpose_b


def _dot_dns_rsp(x, w, transpose_b):
    """x . w or x . w^T for a row_sparse w (only its stored rows are touched); x of any rank
    is contracted on its last axis."""
    dt = np.result_type(x.dtype, w.dtype)
    nnr = len(w.indices)
    if transpose_b:  # (..., k) . (n, k)^T -> (..., n): columns w.indices
        if len(w.shape) != 2:  # w^T reverses every axis of an N-D w
            return np.tensordot(x, _t(st.todense(w), True), axes=1).astype(dt, copy=False)
        out = np.zeros(x.shape[:-1] + (w.shape[0],), dtype=dt)
        if nnr:
            out[..., w.indices] = x @ w.data.T
        return out
    if x.ndim == 1 and len(w.shape) == 1:  # vector . vector: MXNet's shape (1,)
        return np.asarray(x[w.indices] @ w.data, dtype=dt).reshape(1)
    out_shape = x.shape[:-1] + tuple(w.shape[1:])
    if nnr == 0:
        return np.zeros(out_shape, dtype=dt)
    return (x[..., w.indices] @ rows2(w.data, nnr)).astype(dt, copy=False).reshape(out_shape)


def _dot_rsp_dns(r, b, transpose_a):
    """r . b (or r^T . b) for a row_sparse r and dense b: only r's stored rows are touched."""
    rows = rows2(r.data, len(r.indices))
    bb = rows2(b, b.shape[0])
    dt = np.result_type(r.data.dtype, b.dtype)
    if transpose_a:  # (m, n)^T . (m, k) -> (n, k): sum over the stored rows only
        out = rows.T @ bb[r.indices] if len(r.indices) else np.zeros((rows.shape[1], bb.shape[1]))
        return out.astype(dt, copy=False).reshape((r.shape[-1],) + b.shape[1:])
    out = np.zeros((r.shape[0], bb.shape[1]), dtype=dt)
    if len(r.indices):
        out[r.indices] = rows @ bb
    return out.reshape((r.shape[0],) + b.shape[1:])


def _rows():
    k = kdot
    return (
        Dispatch((DNS, DNS), (DNS,), _dot_dense, when=_fs(None, DNS)),
        Dispatch((CSR, DNS), (DNS,), lambda a, xs: (k.dot_csr_dns(xs[0], xs[1]),),
                 when=lambda a, s: _plain(a) and a.forward_stype in (None, DNS)),
        Dispatch((CSR, RSP), (DNS,), lambda a, xs: (k.dot_csr_rsp(xs[0], xs[1]),),
                 when=lambda a, s: _plain(a) and a.forward_stype in (None, DNS)),
        # beyond MXNet: dense . row_sparse(^T) without a fallback (the csr-data gradient path)
        Dispatch((DNS, RSP), (DNS,), lambda a, xs: (_dot_dns_rsp(xs[0], xs[1], a.transpose_b),),
                 when=lambda a, s: not a.transpose_a and a.forward_stype in (None, DNS)),
        # MXNet: dot(csr.T, dense) -> row_sparse by default, dense when requested
        Dispatch((CSR, DNS), (RSP,), lambda a, xs: (k.dot_csrT_dns_rsp(xs[0], xs[1]),),
                 when=lambda a, s: a.transpose_a and not a.transpose_b
                 and a.forward_stype in (None, RSP)),
        Dispatch((CSR, DNS), (DNS,), lambda a, xs: (k.dot_csrT_dns(xs[0], xs[1]),),
                 when=lambda a, s: a.transpose_a and not a.transpose_b and a.forward_stype == DNS),
        Dispatch((CSR, RSP), (RSP,), lambda a, xs: (k.dot_csrT_rsp_rsp(xs[0], xs[1]),),
                 when=lambda a, s: a.transpose_a and not a.transpose_b
                 and a.forward_stype in (None, RSP)),
        # beyond MXNet (it fails at run time): dot(csr.T, rsp) with forward_stype='default'
        Dispatch((CSR, RSP), (DNS,), lambda a, xs: (st.todense(k.dot_csrT_rsp_rsp(xs[0], xs[1])),),
                 when=lambda a, s: a.transpose_a and not a.transpose_b and a.forward_stype == DNS),
        Dispatch((DNS, CSR), (CSR,), lambda a, xs: (k.dot_dns_csr_csr(xs[0], xs[1]),),
                 when=lambda a, s: _plain(a) and a.forward_stype in (None, CSR)),
        Dispatch((DNS, CSR), (DNS,), lambda a, xs: (k.dot_dns_csr(xs[0], xs[1]),),
                 when=lambda a, s: _plain(a) and a.forward_stype == DNS),
        Dispatch((DNS, CSR), (DNS,), lambda a, xs: (k.dot_dns_csrT(xs[0], xs[1]),),
                 when=lambda a, s: not a.transpose_a and a.transpose_b and a.forward_stype == DNS),
        # MXNet gives csr here (through its fallback); we compute it directly
        Dispatch((DNS, CSR), (CSR,), lambda a, xs: (st.dense_to_csr(k.dot_dns_csrT(xs[0], xs[1])),),
                 when=lambda a, s: not a.transpose_a and a.transpose_b
                 and a.forward_stype in (None, CSR)),
        # beyond MXNet (fallback there): row_sparse . dense touches only the stored rows
        Dispatch((RSP, DNS), (DNS,), lambda a, xs: (_dot_rsp_dns(xs[0], xs[1], a.transpose_a),),
                 when=lambda a, s: not a.transpose_b and a.forward_stype in (None, DNS)),
    )


def _grad_dot_call(which, a):
    """The 2-D dot computing ``which`` gradient: (dot attrs, operand order over (ograd, lhs,
    rhs)). MXNet: the lhs gradient is always dense; the rhs one is row_sparse for
    dot(csr, x), and dense when forward_stype='csr' (its _backward_dot falls back)."""
    ta, tb = a.transpose_a, a.transpose_b
    if which == "lhs":
        if not ta:
            return dict(transpose_b=not tb, forward_stype=DNS), (0, 2)
        return dict(transpose_a=tb, transpose_b=True, forward_stype=DNS), (2, 0)
    if not tb:
        fwd = DNS if a.forward_stype == CSR else None
        return dict(transpose_a=not ta, forward_stype=fwd), (1, 0)
    return dict(transpose_a=True, transpose_b=ta, forward_stype=DNS), (0, 1)


_GRAD_ROWS: dict = {}


def _grad_dot_row(which, a, in_stypes):
    """(sub-dot attrs, operand order, dot's row, its output stype, whether it is a
    fallback) for a sparse gradient; resolved once per (gradient, attrs, stypes), since a
    training step asks again every step."""
    key = (which, a, tuple(in_stypes))
    try:
        hit = _GRAD_ROWS.get(key)
    except TypeError:  # attrs that do not hash (a plain dict): resolve every time
        key, hit = None, None
    if hit is not None:
        return hit
    from ..core.registry import get_op, resolve_dispatch
    kw, order = _grad_dot_call(which, a)
    op = get_op("dot")
    sub = op.params.parse("dot", kw)
    row, outs, mode = resolve_dispatch(op, sub, tuple(in_stypes[i] for i in order), 1)
    hit = (sub, order, row, outs[0], mode == "fallback")
    if key is not None:
        if len(_GRAD_ROWS) > 256:  # attrs are few in a program; bound it anyway
            _GRAD_ROWS.clear()
        _GRAD_ROWS[key] = hit
    return hit


def _dot_grad_dense(which):
    """Gradient of dot on dense operands of any rank (MXNet contracts lhs's last axis with
    rhs's first, after transposes that reverse every axis)."""
    def kernel(a, xs):
        g, x, y = xs
        xt, yt = _t(x, a.transpose_a), _t(y, a.transpose_b)
        if xt.ndim == 1 and yt.ndim == 1:  # vector . vector: out (1,)
            r = g.reshape(()) * (yt if which == "lhs" else xt)
        elif which == "lhs":  # contract g's rhs-axes with yt's trailing axes
            n = yt.ndim - 1
            with blas.gemm_threads(g.size * yt.shape[0]):
                r = np.tensordot(g, yt, axes=(tuple(range(g.ndim - n, g.ndim)),
                                              tuple(range(1, yt.ndim))))
        else:
            m = xt.ndim - 1
            with blas.gemm_threads(g.size * xt.shape[-1]):
                r = np.tensordot(xt, g, axes=(tuple(range(m)), tuple(range(m))))
        flag = a.transpose_a if which == "lhs" else a.transpose_b
        out = _t(r, flag)
        dt = (x if which == "lhs" else y).dtype
        return (np.ascontiguousarray(out, dtype=dt),)
    return kernel


def _dot_grad_sparse(which):
    """A sparse operand: the 2-D dot row MXNet's _backward_dot uses (csr.T . dense...)."""
    def kernel(a, xs):
        sub, order, row, stype, fallback = _grad_dot_row(which, a, [st.stype_of(x) for x in xs])
        ins = [xs[i] for i in order]
        if fallback:
            ins = [st.todense(x) for x in ins]
        out = row.kernel(sub, ins)[0]
        return (out if st.stype_of(out) == stype else st.cast_raw(out, stype),)
    return kernel


def _dot_grad_grad(which):
    """Both gradients are bilinear: <h, lhs_grad(g, b)> = <g, dot(h, b)> and
    <h, rhs_grad(g, a)> = <g, dot(a, h)>, so their own gradients are dots again."""
    def grad(node, og):
        g, x, y = node.inputs
        h = og[0]
        kw = dict(transpose_a=node.params.transpose_a, transpose_b=node.params.transpose_b)
        if which == "lhs":
            d_g = bw("dot", [h, y], node, "grad_ograd", **kw)
            d_y = bw("_backward_dot_rhs", [g, h, y], node, "grad_rhs", **kw)
            return [d_g, None, d_y]
        d_g = bw("dot", [x, h], node, "grad_ograd", **kw)
        d_x = bw("_backward_dot_lhs", [g, x, h], node, "grad_lhs", **kw)
        return [d_g, d_x, None]
    return grad


for _w in ("lhs", "rhs"):
    register(OpDef(
        f"_backward_dot_{_w}", params=_DOT, inputs=("ograd", "lhs", "rhs"),
        dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _dot_grad_dense(_w)),
                  Dispatch(("*", "*", "*"), (DNS,), _dot_grad_sparse(_w),
                           infer_stypes=lambda a, s, _w=_w: (_grad_dot_row(_w, a, s)[3],))),
        infer_shape=rules.grads_like_inputs(1, sources=(0 if _w == "lhs" else 1,)),
        infer_type=rules.grads_like_inputs_type(1, sources=(0 if _w == "lhs" else 1,)),
        gradient=_dot_grad_grad(_w),
        doc=f"The {_w} gradient of dot (operands of any rank; sparse ones through dot's "
            "storage rows)."))


def dot_grad(node, og):
    """d lhs = og . rhs^T, d rhs = lhs^T . og (transposes folded) by _backward_dot_lhs/rhs,
    separate nodes so that an unwanted gradient (a csr data batch's) is never computed;
    dot(csr, w) yields a row_sparse weight gradient from the csr.T . dense row."""
    a, b = node.inputs
    kw = kept(node)
    return [bw("_backward_dot_lhs", [og[0], a, b], node, "lhs_grad", **kw),
            bw("_backward_dot_rhs", [og[0], a, b], node, "rhs_grad", **kw)]


register(OpDef(
    "dot", params=_DOT, inputs=("lhs", "rhs"), dispatch=_rows(), gradient=dot_grad,
    infer_shape=dot_shape, infer_type=rules.same_type, aliases=("_sparse_dot",),
    doc="""Dot product of two arrays.

    Parameters
    ----------
    lhs, rhs : NDArray or Symbol
    transpose_a, transpose_b : bool
    forward_stype : {None, 'default', 'row_sparse', 'csr'}

    Storage: csr . dense -> dense, csr . row_sparse -> dense, csr.T . dense -> row_sparse,
    dense . csr -> csr (as MXNet 1.9 on CPU).
    """))


def _batch_dot(a, xs):
    x, y = xs
    if a.transpose_a:
        x = np.swapaxes(x, -1, -2)
    if a.transpose_b:
        y = np.swapaxes(y, -1, -2)
    with blas.gemm_threads(x.size * y.shape[-1]):
        return (np.matmul(x, y),)


def batch_dot_shape(attrs, ins, outs):
    a, b = ins
    for i, s in enumerate(ins):
        if s is not None and len(s) < 3:  # MXNet's check (matmul would take 2-D operands)
            raise rules.Conflict("shape", i, "input", "an N-D array with N >= 3 (batch_dot "
                                 "currently only support N-D*N-D array (N >= 3))", s)
    if a is None or b is None:
        return ins, outs
    ta = a[:-2] + (a[-1], a[-2]) if attrs.transpose_a else a
    tb = b[:-2] + (b[-1], b[-2]) if attrs.transpose_b else b
    if ta[-1] is None or tb[-2] is None:  # MXNet: an unknown inner size decides nothing
        return ins, outs
    try:
        batch = rules.merge_shape(tuple(ta[:-2]), tuple(tb[:-2]))
    except ValueError:
        raise rules.Conflict("shape", 1, "input", ta, tb) from None
    if ta[-1] != tb[-2]:
        raise rules.Conflict("shape", 1, "input", ta, tb)
    # an unknown batch size stays unknown in the output (MXNet's partial inference)
    rules.set_shape(outs, 0, tuple(batch) + (ta[-2], tb[-1]), "output")
    return ins, outs


def batch_dot_grad(node, og):
    a, b = node.inputs
    ta, tb = node.params.transpose_a, node.params.transpose_b
    g = og[0]
    ga = (bw("batch_dot", [g, b], node, "lhs_grad", transpose_b=not tb) if not ta else
          bw("batch_dot", [b, g], node, "lhs_grad", transpose_a=tb, transpose_b=True))
    gb = (bw("batch_dot", [a, g], node, "rhs_grad", transpose_a=not ta) if not tb else
          bw("batch_dot", [g, a], node, "rhs_grad", transpose_a=True, transpose_b=ta))
    return [ga, gb]


register(OpDef(
    "batch_dot", params=_DOT, inputs=("lhs", "rhs"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _batch_dot),), gradient=batch_dot_grad,
    infer_shape=batch_dot_shape, infer_type=rules.same_type,
    doc="Batched matrix product over the leading axis."))
