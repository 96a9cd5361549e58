"""Sparse-specific operators: _sparse_retain, _square_sum, _contrib_getnnz, _contrib_quadratic.

MXNet 1.9.1 raises "Operator not implemented" for retain on dense/csr data, a row_sparse
ograd of retain, _square_sum of dense/csr data or without an axis, and getnnz of
non-csr data or along axis 0; here every one of them computes its answer (docs/sparse.md).
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ShapeError
from ...kernels import csr as kcsr
from ...kernels import rsp as krsp
from ...kernels._arrays import sorted_unique
from ..core import rules
from ..core.grad import bw
from ..core.helpers import CSR, DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from ..reduce.reduce import red_axes


# ----------------------------------------------------------------------------- retain
def row_ids(x, nrows: int, strict: bool = False) -> np.ndarray:
    """Sorted distinct int64 row ids from an index array (any dtype, shape, order); ids
    outside [0, nrows) are dropped, or with ``strict`` raise ValueError. The retain
    operators and the local store's row_sparse_pull share it."""
    ids = np.asarray(st.todense(x)).astype(np.int64, copy=False).reshape(-1)
    if not strict:
        ids = ids[(ids >= 0) & (ids < nrows)]
    return sorted_unique(ids, nrows)


def _retain_rsp(a, xs):
    return (krsp.retain(xs[0], row_ids(xs[1], xs[0].shape[0])),)


def _retain_dense(a, xs):
    x = xs[0]
    ids = row_ids(xs[1], x.shape[0])
    return (st.RSP(np.ascontiguousarray(x[ids]), ids, x.shape),)


def _retain_csr(a, xs):
    x = xs[0]
    keep = np.zeros(x.shape[0], dtype=bool)
    keep[row_ids(xs[1], x.shape[0])] = True
    lens = np.where(keep, np.diff(x.indptr), 0)
    sub = kcsr.take_rows_csr(x, np.flatnonzero(keep))
    indptr = np.zeros(x.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    return (st.CSR(sub.data, sub.indices, indptr, x.shape),)


def _retain_shape(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_shape(outs, 0, ins[0], "output")
    return ins, outs


def _retain_grad(node, og):
    return [bw("_backward_sparse_retain", [og[0], node.inputs[1]], node, "backward"), None]


register(OpDef(
    "_sparse_retain", inputs=("data", "indices"),
    dispatch=(Dispatch((RSP, DNS), (RSP,), _retain_rsp),
              Dispatch((DNS, DNS), (RSP,), _retain_dense),
              Dispatch((CSR, DNS), (CSR,), _retain_csr)),
    infer_shape=_retain_shape, infer_type=rules.first_input_type, gradient=_retain_grad,
    aliases=("retain",),
    doc="""Keep only the rows listed in ``indices`` (any order; repeats, out-of-range ids ignored).

    Storage: row_sparse -> row_sparse (MXNet); dense -> row_sparse and csr -> csr go beyond
    MXNet, which raises "Operator not implemented" there.
    """))


def _bretain_dense(a, xs):
    g = xs[0]
    ids = row_ids(xs[1], g.shape[0])
    return (st.RSP(np.ascontiguousarray(g[ids]), ids, g.shape),)


def _bretain_rsp(a, xs):
    return (krsp.retain(xs[0], row_ids(xs[1], xs[0].shape[0])),)


register(OpDef(
    "_backward_sparse_retain", inputs=("ograd", "indices"),
    dispatch=(Dispatch((DNS, DNS), (RSP,), _bretain_dense),
              Dispatch((RSP, DNS), (RSP,), _bretain_rsp)),
    infer_shape=rules.first_input_shape, infer_type=rules.first_input_type,
    doc="The ograd's rows at ``indices`` (row_sparse)."))


# ----------------------------------------------------------------------------- _square_sum
_REDUCE = Params(axis=Field("shape_or_none", None, doc="axes to reduce (None: all)"),
                 keepdims=Field("bool", False, doc="keep reduced axes with size 1"),
                 exclude=Field("bool", False, doc="reduce every axis but ``axis``"))


def _axes(attrs, ndim):
    return red_axes(attrs, ndim, "_square_sum")


def _reduced_shape(attrs, shape):
    axes = _axes(attrs, len(shape))
    if attrs.keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out or (1,)


def _reduce_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        rules.set_shape(outs, 0, _reduced_shape(attrs, ins[0]), "output")
    return ins, outs


def _sqsum_dense(a, xs):
    x = st.todense(xs[0])
    out = np.square(x).sum(axis=_axes(a, x.ndim), keepdims=a.keepdims, dtype=x.dtype)
    return (np.asarray(out).reshape(_reduced_shape(a, x.shape)),)


def _sqsum_rsp(a, xs):
    r = xs[0]
    axes = _axes(a, len(r.shape))
    if axes == (1,) and a.keepdims and len(r.shape) == 2:
        return (krsp.square_sum_rsp(r, 1, True),)
    if len(axes) == 1:
        out = krsp.square_sum_rsp(r, axes[0], a.keepdims)
        return (np.asarray(out).reshape(_reduced_shape(a, r.shape)),)
    return _sqsum_dense(a, [krsp.map_values(r, lambda v: v)])


def _sqsum_csr(a, xs):
    c = xs[0]
    axes = _axes(a, 2)
    sq = kcsr.map_values(c, np.square)
    if len(axes) == 2:
        out = kcsr.sum_csr(sq, None)
    else:
        out = kcsr.sum_csr(sq, axes[0])
    return (np.asarray(out, dtype=c.dtype).reshape(_reduced_shape(a, c.shape)),)


def _is_row_keep(a, s):
    return a.keepdims and not a.exclude and a.axis is not None and tuple(a.axis) in ((1,), (-1,))


def _sqsum_grad(node, og):
    return [bw("_backward_square_sum", [og[0], node.inputs[0]], node, "backward",
               axis=node.params.axis, keepdims=node.params.keepdims,
               exclude=node.params.exclude)]


register(OpDef(
    "_square_sum", params=_REDUCE,
    dispatch=(Dispatch((DNS,), (DNS,), _sqsum_dense),
              Dispatch((RSP,), (RSP,), _sqsum_rsp, when=_is_row_keep),
              Dispatch((RSP,), (DNS,), _sqsum_rsp),
              Dispatch((CSR,), (DNS,), _sqsum_csr)),
    infer_shape=_reduce_shape, infer_type=rules.same_type, gradient=_sqsum_grad,
    doc="""sum(data ** 2) over ``axis``.

    Storage: row_sparse with axis=1 and keepdims -> row_sparse (rows kept), other row_sparse
    reductions -> dense (MXNet). Dense and csr data and reductions over all axes go beyond
    MXNet ("Operator not implemented" there).
    """))


def _bsqsum(a, xs):
    og, x = xs
    shape = x.shape
    keep = tuple(1 if i in _axes(a, len(shape)) else d for i, d in enumerate(shape))
    if isinstance(x, st.RSP) and isinstance(og, st.RSP) and keep[0] != 1:
        # rows kept: only rows stored in both can have a gradient (MXNet keeps the
        # intersection, so a lazy optimizer leaves the other stored rows alone)
        idx, px, pg = krsp.intersect_rows(x.indices, og.indices)
        gr = og.data[pg].reshape((len(idx),) + keep[1:])
        return (st.RSP((2 * x.data[px] * gr).astype(x.dtype, copy=False), idx, shape),)
    g = st.todense(og).reshape(keep)
    if isinstance(x, st.RSP):
        # the stored rows' gradient: g's rows at x.indices, or g itself when axis 0 was
        # reduced (it broadcasts) or every row is stored; no gather from a broadcast view
        gathered = keep[0] != 1 and len(x.indices) != shape[0]
        gr = g[x.indices] if gathered else g
        return (st.RSP((2 * x.data * gr).astype(x.dtype, copy=False), x.indices, shape),)
    xd = st.todense(x)
    return ((2 * xd * g).astype(xd.dtype, copy=False),)


register(OpDef(
    "_backward_square_sum", inputs=("ograd", "data"), params=_REDUCE,
    dispatch=(Dispatch((DNS, DNS), (DNS,), _bsqsum), Dispatch(("*", RSP), (RSP,), _bsqsum),
              Dispatch(("*", "*"), (DNS,), _bsqsum)),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1),
    doc="2 * data * ograd (broadcast); row_sparse data gives a row_sparse gradient (on the "
        "rows stored in both data and a row_sparse ograd)."))


# ----------------------------------------------------------------------------- getnnz
def _getnnz_shape(attrs, ins, outs):
    s = ins[0]
    if s is not None and len(s) != 2:
        raise ShapeError(f"_contrib_getnnz: data must be 2-D, got shape {tuple(s)}")
    if rules.known(s):
        if attrs.axis is None:
            out = (1,)
        else:
            ax = attrs.axis % 2
            out = (s[1],) if ax == 0 else (s[0],)
        rules.set_shape(outs, 0, out, "output")
    return ins, outs


def _getnnz(a, xs):
    x = xs[0]
    if isinstance(x, st.CSR):
        out = kcsr.getnnz(x, a.axis)
    elif isinstance(x, st.RSP):
        m, n = x.shape
        if a.axis is None:
            out = np.asarray(len(x.indices) * n)
        elif a.axis % 2 == 0:
            out = np.full(n, len(x.indices))
        else:
            out = np.zeros(m, np.int64)
            out[x.indices] = n
    else:
        m, n = x.shape
        out = np.asarray(m * n) if a.axis is None else np.full(n if a.axis % 2 == 0 else m,
                                                                 m if a.axis % 2 == 0 else n)
    return (np.asarray(out, dtype=np.int64).reshape(-1),)


def _int64_type(attrs, ins, outs):
    rules.set_type(outs, 0, np.dtype(np.int64), "output")
    return ins, outs


register(OpDef(
    "_contrib_getnnz", params=Params(axis=Field("int_or_none", None, doc="None, 0 or 1")),
    dispatch=(Dispatch((DNS,), (DNS,), _getnnz), Dispatch((CSR,), (DNS,), _getnnz),
              Dispatch((RSP,), (DNS,), _getnnz)),
    infer_shape=_getnnz_shape, infer_type=_int64_type, gradient=None,
    doc="""Number of stored values (int64): in total, per column (axis 0) or per row (axis 1).

    MXNet supports csr with axis None or 1 only; axis 0 and dense/row_sparse inputs
    (counted as storing every value of their stored rows) go beyond it.
    """))


# ----------------------------------------------------------------------------- quadratic
_QUAD = Params(a=Field("float", 0.0, doc="coefficient of x**2"),
               b=Field("float", 0.0, doc="coefficient of x"),
               c=Field("float", 0.0, doc="constant term"))


def _quad(a, x):
    return (a.a * x * x + a.b * x + a.c).astype(x.dtype, copy=False)


def _quad_grad(node, og):
    return [bw("_contrib_backward_quadratic", [og[0], node.inputs[0]], node, "backward",
               a=node.params.a, b=node.params.b, c=node.params.c)]


register(OpDef(
    "_contrib_quadratic", params=_QUAD,
    dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (_quad(a, xs[0]),)),
              Dispatch((CSR,), (CSR,),
                       lambda a, xs: (kcsr.map_values(xs[0], lambda v: _quad(a, v)),),
                       when=lambda a, s: a.c == 0)),
    gradient=_quad_grad,
    doc="a*x**2 + b*x + c; csr stays csr when c == 0 (other sparse inputs fall back)."))
register(OpDef(
    "_contrib_backward_quadratic", inputs=("ograd", "data"), params=_QUAD,
    dispatch=(Dispatch(("*", "*"), (DNS,), lambda a, xs: (
        (st.todense(xs[0]) * (2 * a.a * st.todense(xs[1]) + a.b)).astype(xs[0].dtype,
                                                                         copy=False),)),),
    infer_shape=rules.same_shape, doc="ograd * (2*a*x + b) (dense)."))
