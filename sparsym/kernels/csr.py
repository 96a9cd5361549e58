"""CSR kernels over :class:`sparsym.storage.CSR` (int64 indices/indptr).

Every kernel is a pure function: raw values in, NEW raw values out. Outputs may
alias the *structure* arrays (indices/indptr) of an input when the docstring says
so; data arrays are never shared with an input unless stated. "canonical" means
column indices sorted and unique within every row.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..base import ShapeError
from ..storage import CSR, IDX, RSP, install_csr_kernels
from ._arrays import as_c, common
from ._f16 import f16_safe
from ._twins import twin


# ----------------------------------------------------------------------------- helpers
def _row_ids(a: CSR) -> np.ndarray:
    return np.repeat(np.arange(a.shape[0], dtype=IDX), np.diff(a.indptr))


# ----------------------------------------------------------------------------- casts
@twin
def _scatter_rows(data, indices, indptr, out):
    for i in prange(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            out[i, indices[k]] += data[k]


@f16_safe
def csr_to_dense(a: CSR) -> np.ndarray:
    """Densify; duplicates are summed (contract: any column order)."""
    out = np.zeros(a.shape, dtype=a.data.dtype)
    if a.nnz:
        _scatter_rows(a.nnz, a.data, a.indices, a.indptr, out)
    return out


@twin
def _dense_count(x, cnt):
    for i in prange(x.shape[0]):
        c = 0
        for j in range(x.shape[1]):
            if x[i, j] != 0:
                c += 1
        cnt[i + 1] = c


@twin
def _dense_fill(x, indptr, data, indices):
    for i in prange(x.shape[0]):
        p = indptr[i]
        for j in range(x.shape[1]):
            v = x[i, j]
            if v != 0:
                data[p] = v
                indices[p] = j
                p += 1


@f16_safe
def dense_to_csr(x: np.ndarray) -> CSR:
    """Compress a 2-D array; output columns sorted, explicit zeros dropped."""
    x = np.ascontiguousarray(x)
    m = x.shape[0]
    indptr = np.zeros(m + 1, dtype=IDX)
    if x.size == 0:
        return CSR(np.zeros(0, x.dtype), np.zeros(0, IDX), indptr, x.shape)
    _dense_count(x.size, x, indptr)
    np.cumsum(indptr, out=indptr)
    nnz = int(indptr[-1])
    data = np.empty(nnz, dtype=x.dtype)
    indices = np.empty(nnz, dtype=IDX)
    if nnz:
        _dense_fill(x.size, x, indptr, data, indices)
    return CSR(data, indices, indptr, x.shape)


def csr_to_rsp(a: CSR) -> RSP:
    """Rows with stored entries become dense row_sparse rows (duplicates summed); canonical."""
    rows = np.flatnonzero(np.diff(a.indptr)).astype(IDX)
    return RSP(csr_to_dense(take_rows_csr(a, rows)), rows, a.shape)


def rsp_to_csr(r: RSP) -> CSR:
    """Compress a 2-D canonical row_sparse array (explicit zeros dropped); canonical output."""
    if len(r.shape) != 2:
        raise ShapeError(f"cast_storage to csr needs a 2-D array, got shape {tuple(r.shape)}")
    m = r.shape[0]
    sub = dense_to_csr(np.ascontiguousarray(r.data).reshape(len(r.indices), r.shape[1]))
    counts = np.zeros(m, dtype=IDX)
    counts[r.indices] = np.diff(sub.indptr)
    indptr = np.zeros(m + 1, dtype=IDX)
    np.cumsum(counts, out=indptr[1:])
    return CSR(sub.data, sub.indices, indptr, r.shape)


def canonicalize_csr(a: CSR) -> CSR:
    """Any column order/duplicates in; output canonical (sorted unique, dups summed, zeros kept)."""
    m, n = a.shape
    nnz = a.nnz
    if nnz == 0:
        return CSR(a.data[:0].copy(), np.zeros(0, IDX), np.zeros(m + 1, IDX), a.shape)
    rows = _row_ids(a)
    cols = np.asarray(a.indices[:nnz], dtype=IDX)
    key = rows * max(n, 1) + cols
    data = a.data[:nnz]
    if np.any(key[1:] <= key[:-1]):
        order = np.argsort(key, kind="stable")
        key = key[order]
        data = data[order]
        first = np.empty(nnz, dtype=np.bool_)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        data = np.add.reduceat(data, starts) if len(starts) < nnz else data
        key = key[starts]
    else:
        data = data.copy()
    new_rows = key // max(n, 1)
    indptr = np.zeros(m + 1, dtype=IDX)
    np.cumsum(np.bincount(new_rows, minlength=m), out=indptr[1:])
    return CSR(np.ascontiguousarray(data), (key - new_rows * max(n, 1)).astype(IDX), indptr,
               a.shape)


# The matrix products live in csr_dot.py (it uses take_rows_csr from here).


# ----------------------------------------------------------------------------- slicing
def slice_rows(a: CSR, begin, end) -> CSR:
    """Rows [begin, end) (Python slice rules); indices/data are views of a, indptr is new."""
    m = a.shape[0]
    if not (begin.__class__ is int and end.__class__ is int and 0 <= begin <= end <= m):
        # Python slice rules (None, negative, past the end...)
        begin, end, _ = slice(begin, end).indices(m)
        end = max(begin, end)
    ptr = a.indptr[begin:end + 1]
    lo, hi = int(ptr[0]), int(ptr[-1])
    return CSR(a.data[lo:hi], a.indices[lo:hi], ptr - lo, (end - begin, a.shape[1]))


def slice_csr(a: CSR, begin, end) -> CSR:
    """2-D slice a[r0:r1, c0:c1] (None entries allowed); columns renumbered, order of a kept."""
    r0, c0 = (tuple(begin) + (None, None))[:2]
    r1, c1 = (tuple(end) + (None, None))[:2]
    sub = slice_rows(a, r0, r1)
    c0, c1, _ = slice(c0, c1).indices(a.shape[1])
    c1 = max(c0, c1)
    if c0 == 0 and c1 == a.shape[1]:
        return CSR(sub.data.copy(), sub.indices.copy(), sub.indptr, sub.shape)
    ind = sub.indices
    mask = (ind >= c0) & (ind < c1)
    cm = np.zeros(len(ind) + 1, dtype=IDX)
    np.cumsum(mask, out=cm[1:])
    return CSR(sub.data[mask], (ind[mask] - c0).astype(IDX), cm[sub.indptr],
               (sub.shape[0], c1 - c0))


def take_rows_csr(a: CSR, idx) -> CSR:
    """Rows idx (in order, repeats ok, negatives wrap) as a new csr; per-row column order kept."""
    m = a.shape[0]
    idx = np.asarray(idx, dtype=IDX).reshape(-1)
    if len(idx) and (idx.min() < -m or idx.max() >= m):
        raise IndexError(f"take_rows_csr: row index out of range [-{m}, {m})")
    idx = np.where(idx < 0, idx + m, idx)
    lens = a.indptr[idx + 1] - a.indptr[idx]
    indptr = np.zeros(len(idx) + 1, dtype=IDX)
    np.cumsum(lens, out=indptr[1:])
    src = np.empty(int(indptr[-1]), dtype=IDX)
    if len(src):
        _gather_pos(len(src), a.indptr, idx, indptr, src)
    return CSR(a.data[src], a.indices[src].astype(IDX, copy=False), indptr,
               (len(idx), a.shape[1]))


@twin
def _gather_pos(indptr, idx, out_ptr, src):
    # index-only (dtype independent): source position of every output entry
    for r in prange(len(idx)):
        s = indptr[idx[r]]
        o = out_ptr[r]
        for t in range(out_ptr[r + 1] - o):
            src[o + t] = s + t


def concat_rows_csr(arrs) -> CSR:
    """Concatenate along dim 0; column order of each input kept; output owns new arrays."""
    arrs = list(arrs)
    if not arrs:
        raise ShapeError("concat_rows_csr: need at least one array")
    n = arrs[0].shape[1]
    for x in arrs:
        if x.shape[1] != n:
            raise ShapeError(f"concat_rows_csr: column counts differ, {arrs[0].shape} vs {x.shape}")
    dt = common(*[x.data.dtype for x in arrs])
    data = np.concatenate([x.data[:x.nnz] for x in arrs]).astype(dt, copy=False)
    indices = np.concatenate([x.indices[:x.nnz] for x in arrs]).astype(IDX, copy=False)
    parts = [np.zeros(1, IDX)]
    off = 0
    for x in arrs:
        parts.append(x.indptr[1:] + off)
        off += x.nnz
    m = sum(x.shape[0] for x in arrs)
    return CSR(data, indices, np.concatenate(parts).astype(IDX, copy=False), (m, n))


# ----------------------------------------------------------------------------- elementwise
def map_values(a: CSR, fn) -> CSR:
    """fn (zero-preserving ufunc) on stored values; indices/indptr alias a, data is new."""
    return CSR(np.asarray(fn(a.data)), a.indices, a.indptr, a.shape)


@twin
def _union_count(ai, ap, bi, bp, cnt):
    for i in prange(len(ap) - 1):
        p, pe, q, qe = ap[i], ap[i + 1], bp[i], bp[i + 1]
        c = 0
        while p < pe and q < qe:
            if ai[p] < bi[q]:
                p += 1
            elif ai[p] > bi[q]:
                q += 1
            else:
                p += 1
                q += 1
            c += 1
        cnt[i + 1] = c + (pe - p) + (qe - q)


@twin
def _union_fill(ai, ap, bi, bp, op, oi, sa, sb):
    # index-only: output column plus source position in a / b (-1 when absent)
    for i in prange(len(ap) - 1):
        p, pe, q, qe = ap[i], ap[i + 1], bp[i], bp[i + 1]
        o = op[i]
        while p < pe or q < qe:
            if q >= qe or (p < pe and ai[p] < bi[q]):
                oi[o] = ai[p]
                sa[o] = p
                sb[o] = -1
                p += 1
            elif p >= pe or ai[p] > bi[q]:
                oi[o] = bi[q]
                sa[o] = -1
                sb[o] = q
                q += 1
            else:
                oi[o] = ai[p]
                sa[o] = p
                sb[o] = q
                p += 1
                q += 1
            o += 1


@twin
def _inter_count(ai, ap, bi, bp, cnt):
    for i in prange(len(ap) - 1):
        p, pe, q, qe = ap[i], ap[i + 1], bp[i], bp[i + 1]
        c = 0
        while p < pe and q < qe:
            if ai[p] < bi[q]:
                p += 1
            elif ai[p] > bi[q]:
                q += 1
            else:
                c += 1
                p += 1
                q += 1
        cnt[i + 1] = c


@twin
def _inter_fill(ai, ap, bi, bp, op, oi, sa, sb):
    # index-only: output column plus source positions in a and b
    for i in prange(len(ap) - 1):
        p, pe, q, qe = ap[i], ap[i + 1], bp[i], bp[i + 1]
        o = op[i]
        while p < pe and q < qe:
            if ai[p] < bi[q]:
                p += 1
            elif ai[p] > bi[q]:
                q += 1
            else:
                oi[o] = ai[p]
                sa[o] = p
                sb[o] = q
                o += 1
                p += 1
                q += 1


def _check_same(a, b, what):
    if tuple(a.shape) != tuple(b.shape):
        raise ShapeError(f"{what}: shapes differ, {tuple(a.shape)} vs {tuple(b.shape)}")


def _merged_struct(a: CSR, b: CSR, count, fill, what):
    """Structure of a row-by-row merge of canonical a and b: count, prefix-sum, fill."""
    _check_same(a, b, what)
    m = a.shape[0]
    indptr = np.zeros(m + 1, dtype=IDX)
    if m:
        count(a.nnz + b.nnz, a.indices, a.indptr, b.indices, b.indptr, indptr)
    np.cumsum(indptr, out=indptr)
    nnz = int(indptr[-1])
    indices = np.empty(nnz, dtype=IDX)
    sa = np.empty(nnz, dtype=IDX)
    sb = np.empty(nnz, dtype=IDX)
    if nnz:
        fill(a.nnz + b.nnz, a.indices, a.indptr, b.indices, b.indptr, indptr, indices, sa, sb)
    return indices, indptr, sa, sb


def union_struct(a: CSR, b: CSR):
    """Union structure of canonical a and b: (indices, indptr, src in a, src in b; -1 absent)."""
    return _merged_struct(a, b, _union_count, _union_fill, "union(csr, csr)")


def inter_struct(a: CSR, b: CSR):
    """Intersection structure of canonical a and b: (indices, indptr, src in a, src in b)."""
    return _merged_struct(a, b, _inter_count, _inter_fill, "intersect(csr, csr)")


def _gather_or_zero(data, src, dt):
    out = np.zeros(len(src), dtype=dt)
    hit = src >= 0
    out[hit] = data[src[hit]]
    return out


def union_apply_csr(a: CSR, b: CSR, fn) -> CSR:
    """fn(a, b) on the union structure (absent entries read 0); fn(0, 0) must be 0.

    Inputs canonical; output canonical, new arrays; explicit zeros produced by fn are kept.
    """
    indices, indptr, sa, sb = union_struct(a, b)
    dt = common(a.data.dtype, b.data.dtype)
    va, vb = _gather_or_zero(a.data, sa, dt), _gather_or_zero(b.data, sb, dt)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        data = np.asarray(fn(va, vb)).astype(dt, copy=False)
    return CSR(data, indices, indptr, a.shape)


def add_csr_csr(a: CSR, b: CSR, alpha=1.0, beta=1.0) -> CSR:
    """alpha*a + beta*b; inputs canonical; output canonical on the union structure (zeros kept)."""
    indices, indptr, sa, sb = union_struct(a, b)
    dt = common(a.data.dtype, b.data.dtype)
    data = np.zeros(len(indices), dtype=dt)
    ha, hb = sa >= 0, sb >= 0
    va, vb = a.data[sa[ha]].astype(dt, copy=False), b.data[sb[hb]].astype(dt, copy=False)
    data[ha] = va * dt.type(alpha) if alpha != 1 else va
    data[hb] += vb * dt.type(beta) if beta != 1 else vb
    return CSR(data, indices, indptr, a.shape)


def mul_csr_csr(a: CSR, b: CSR) -> CSR:
    """a * b elementwise; inputs canonical; output canonical on the intersection structure."""
    indices, indptr, sa, sb = inter_struct(a, b)
    dt = common(a.data.dtype, b.data.dtype)
    data = (a.data[sa] * b.data[sb]).astype(dt, copy=False)
    return CSR(data, indices, indptr, a.shape)


def mul_csr_dns(a: CSR, d: np.ndarray) -> CSR:
    """a * d (same shape) on a's structure; indices/indptr alias a, data is new."""
    _check_same(a, d, "mul(csr, dense)")
    vals = d[_row_ids(a), a.indices[:a.nnz]]
    return CSR(a.data[:a.nnz] * vals, a.indices, a.indptr, a.shape)


def _bcast_vals(a: CSR, v, axis_shape, what):
    m, n = a.shape
    v = np.asarray(v)
    if axis_shape is not None:
        v = v.reshape(axis_shape)
    if v.ndim == 1:
        v = v.reshape(1, -1)
    if v.ndim != 2:
        raise ShapeError(f"{what}: rhs must be 1-D or 2-D, got shape {v.shape}")
    nnz = a.nnz
    if v.shape == (m, n):
        return v[_row_ids(a), a.indices[:nnz]]
    if v.shape == (1, n):
        return v[0, a.indices[:nnz]]
    if v.shape == (m, 1):
        return np.repeat(v[:, 0], np.diff(a.indptr))
    if v.shape == (1, 1):
        return v[0, 0]
    raise ShapeError(f"{what}: cannot broadcast shape {v.shape} to csr shape {a.shape}; "
                     f"expected (1, {n}), ({n},), ({m}, 1) or ({m}, {n})")


def broadcast_mul_csr_vec(a: CSR, v, axis_shape=None) -> CSR:
    """a * v, v (1,n)|(n,)|(m,1)|(1,1)|(m,n) (reshaped to axis_shape if given); a's structure."""
    vals = _bcast_vals(a, v, axis_shape, "broadcast_mul(csr, dense)")
    return CSR(a.data[:a.nnz] * vals, a.indices, a.indptr, a.shape)


def broadcast_div_csr_vec(a: CSR, v, axis_shape=None) -> CSR:
    """a / v broadcast like broadcast_mul_csr_vec; only stored entries divided (a's structure)."""
    vals = _bcast_vals(a, v, axis_shape, "broadcast_div(csr, dense)")
    return CSR(a.data[:a.nnz] / vals, a.indices, a.indptr, a.shape)


# MXNet spells the op broadcast_div; keep a short alias too.
broadcast_div = broadcast_div_csr_vec
broadcast_mul = broadcast_mul_csr_vec


@f16_safe
def add_csr_dns(a: CSR, d: np.ndarray) -> np.ndarray:
    """a + d as a new dense array; csr any column order (duplicates summed)."""
    _check_same(a, d, "add(csr, dense)")
    dt = common(a.data.dtype, d.dtype)
    out = np.array(d, dtype=dt, order="C", copy=True)
    if a.nnz:
        _scatter_rows(a.nnz, as_c(a.data, dt), a.indices, a.indptr, out)
    return out


def where_csr_dns_dns(cond: CSR, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x where cond != 0 else y (new dense); cond any order (each stored copy tested alone)."""
    _check_same(cond, x, "where(csr, dense, dense)")
    _check_same(cond, y, "where(csr, dense, dense)")
    dt = common(x.dtype, y.dtype)
    out = np.array(y, dtype=dt, order="C", copy=True)
    if cond.nnz:
        hit = cond.data[:cond.nnz] != 0
        r, c = _row_ids(cond)[hit], cond.indices[:cond.nnz][hit]
        out[r, c] = x[r, c]
    return out


# ----------------------------------------------------------------------------- reductions
def _axis(axis, what):
    if axis is None:
        return None
    if axis in (0, -2):
        return 0
    if axis in (1, -1):
        return 1
    raise ShapeError(f"{what}: axis must be None, 0 or 1 for a 2-D csr, got {axis}")


def _reduce(a: CSR, axis, square, what):
    axis = _axis(axis, what)
    data = a.data[:a.nnz]
    if axis is None:
        return np.asarray((data * data if square else data).sum(dtype=data.dtype))
    if axis == 0:
        w = data * data if square else data
        out = np.bincount(a.indices[:a.nnz], weights=w, minlength=a.shape[1])
        return out.astype(a.data.dtype, copy=False)
    out = np.zeros(a.shape[0], dtype=a.data.dtype)
    starts = a.indptr[:-1]
    full = a.indptr[1:] > starts
    if len(data):
        # segments run from one non-empty row start to the next, i.e. exactly that row
        out[full] = np.add.reduceat(data * data if square else data, starts[full])
    return out


def sum_csr(a: CSR, axis=None) -> np.ndarray:
    """Sum as dense: 1-D for axis 0/1, 0-d for None; csr any column order."""
    return _reduce(a, axis, False, "sum(csr)")


def norm_csr(a: CSR, axis=None) -> np.ndarray:
    """L2 norm as dense (0-d for None, 1-D for axis 0/1); csr must be canonical."""
    return np.sqrt(_reduce(a, axis, True, "norm(csr)"))


def getnnz(a: CSR, axis=None) -> np.ndarray:
    """Stored-entry counts as int64 dense: 0-d for None, per column (axis 0) or per row (axis 1)."""
    axis = _axis(axis, "getnnz(csr)")
    if axis is None:
        return np.asarray(a.nnz, dtype=IDX)
    if axis == 0:
        return np.bincount(a.indices[:a.nnz], minlength=a.shape[1]).astype(IDX, copy=False)
    return np.diff(a.indptr).astype(IDX, copy=False)


install_csr_kernels(csr_to_dense, dense_to_csr)
