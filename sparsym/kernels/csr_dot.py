"""Sparse matrix products over :class:`sparsym.storage.CSR` .

Storage contracts (every function is pure: new outputs, inputs untouched):

- csr operands may have unsorted or duplicated columns within a row (duplicates are summed);
- row_sparse operands are canonical (sorted unique row indices);
- dense operands are any C-contiguous-able ndarray; results are new arrays.

Hot loops index with unsigned integers: Numba then drops the negative-index wraparound
check, which doubles the speed of these gather-bound loops. Each product kernel is written
once over a range of rows (or stored columns); kernels/_twins.py runs it whole or over
nnz-balanced blocks in parallel, as its measured gate decides (:class:`_twins.Blockwise`).
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from ..base import ShapeError
from ..storage import CSR, IDX, RSP, todense
from . import _twins
from ._arrays import (
    MAP_FACTOR,
    as_c,
    cols2,
    common,
    find_sorted,
    hash_find,
    hash_shift,
    hash_table,
    popcount,
    rows2,
    trailing_zeros,
    unique_positions,
)
from ._f16 import f16_safe
from ._twins import balanced_bounds, blockwise, twin
from .csr import take_rows_csr


# ----------------------------------------------------------------------------- csr . dense
@blockwise
def _mv(lo, hi, data, indices, indptr, b, out):
    # k == 1; writes out[lo:hi]. Carrying each row's end into the next row's start and
    # summing from zero (not out[i]) takes a load off every row: 8% of this gather loop.
    end = np.uint64(indptr[lo])
    for i in range(lo, hi):
        start, end = end, np.uint64(indptr[i + 1])
        acc = out.dtype.type(0)
        for p in range(start, end):
            acc += data[p] * b[np.uint64(indices[p])]
        out[i] = acc


@blockwise
def _mm(lo, hi, data, indices, indptr, b, out):
    # out zero-initialised
    k = np.uint64(b.shape[1])
    for i in range(lo, hi):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = np.uint64(indices[p])
            v = data[p]
            for j in range(k):
                out[ui, j] += v * b[c, j]


@blockwise
def _mm_map(lo, hi, data, indices, indptr, b, out, cmap):
    # row_sparse rhs: b row = cmap[column], -1 when the row is absent
    k = np.uint64(b.shape[1])
    for i in range(lo, hi):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = cmap[np.uint64(indices[p])]
            if c >= 0:
                uc = np.uint64(c)
                v = data[p]
                for j in range(k):
                    out[ui, j] += v * b[uc, j]


@blockwise
def _mv_map(lo, hi, data, indices, indptr, b, out, cmap):
    # k == 1, row_sparse rhs through cmap (-1: absent row); writes out[lo:hi] (as _mv)
    end = np.uint64(indptr[lo])
    for i in range(lo, hi):
        start, end = end, np.uint64(indptr[i + 1])
        acc = out.dtype.type(0)
        for p in range(start, end):
            c = cmap[np.uint64(indices[p])]
            if c >= 0:
                acc += data[p] * b[np.uint64(c)]
        out[i] = acc


@blockwise
def _mm_hash(lo, hi, data, indices, indptr, b, out, tab):
    # row_sparse rhs with huge n and few stored rows: the column's row from a hash table
    k = np.uint64(b.shape[1])
    shift = hash_shift(tab)
    for i in range(lo, hi):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = hash_find(tab, shift, indices[p])
            if c >= 0:
                uc = np.uint64(c)
                v = data[p]
                for j in range(k):
                    out[ui, j] += v * b[uc, j]


@blockwise
def _mm_search(lo, hi, data, indices, indptr, b, out, keys):
    # row_sparse rhs with huge n: binary search the column among the stored row ids
    k = np.uint64(b.shape[1])
    for i in range(lo, hi):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = find_sorted(keys, indices[p])
            if c >= 0:
                uc = np.uint64(c)
                v = data[p]
                for j in range(k):
                    out[ui, j] += v * b[uc, j]


def _spmm(data, a: CSR, b2, out, cmap=None, tab=None, keys=None):
    """out (zeros; 1-D when b2 is) += a @ b2 with b2 rows looked up directly, via the dense
    map cmap, in the hash table tab, or by binary search in keys."""
    m = a.shape[0]
    ptr = a.indptr
    k = b2.shape[1] if b2.ndim == 2 else 1
    work = 0 if m < 2 else len(data) * k + m
    # one gate per kernel and power of two of k: how well a product splits depends on k
    if cmap is not None and b2.ndim == 1:
        key, kern, extra = "mv_map", _mv_map, (b2, out, cmap)
    elif cmap is not None:
        key, kern, extra = ("map", k.bit_length()), _mm_map, (b2, out, cmap)
    elif tab is not None:
        key, kern, extra = ("hash", k.bit_length()), _mm_hash, (b2, out, tab)
    elif keys is not None:
        key, kern, extra = ("search", k.bit_length()), _mm_search, (b2, out, keys)
    elif b2.ndim == 1:
        key, kern, extra = "mv", _mv, (b2, out)
    else:
        key, kern, extra = ("mm", k.bit_length()), _mm, (b2, out)
    kern.run(key, work, ptr, data, a.indices, ptr, *extra)


@f16_safe
def dot_csr_dns(a: CSR, b: np.ndarray) -> np.ndarray:
    """a @ b for dense 1-D/N-D b (contracted on its first axis); csr any column order."""
    m, n = a.shape
    bs = b.shape
    if bs[0] != n:
        raise ShapeError(f"dot(csr, dense): inner dimensions differ, {a.shape} vs {b.shape}")
    data = a.data
    dt = data.dtype
    if b.dtype != dt:
        dt = common(dt, b.dtype)
        data = data.astype(dt)
    k = math.prod(bs[1:])
    # k == 1 (a vector, or an (n, 1) column) runs the 1-D kernel on flat views
    bb = b.reshape(n) if k == 1 else b.reshape(n, k)
    if bb.dtype != dt or not bb.flags.c_contiguous:
        bb = as_c(bb, dt)
    out = np.zeros((m, k) if k != 1 else m, dtype=dt)
    if k and len(data):
        if not data.flags.c_contiguous:
            data = as_c(data, dt)
        _spmm(data, a, bb, out)
    return out.reshape((m,) + bs[1:])


@f16_safe
def dot_csr_rsp(a: CSR, w: RSP) -> np.ndarray:
    """a @ w as dense; w canonical row_sparse (missing rows are zero); a any column order."""
    m, n = a.shape
    if w.shape[0] != n:
        raise ShapeError(f"dot(csr, row_sparse): inner dimensions differ, {a.shape} vs {w.shape}")
    tail = tuple(w.shape[1:])
    nnr = len(w.indices)
    if nnr == n:  # every row present: sorted unique ids are exactly 0..n-1
        return dot_csr_dns.__wrapped__(a, w.data)  # (float16 is handled by now)
    nnz = a.nnz
    k = math.prod(tail)
    if n * k <= _DENSIFY_FACTOR * nnz:
        # a dense copy of w costs less than a lookup per entry (8192 x 200,000, half the
        # rows stored, k = 1: 0.13 against 0.7 ms)
        return dot_csr_dns(a, todense(w))
    dt = common(a.data.dtype, w.data.dtype)
    wd = as_c(rows2(w.data, nnr), dt)
    one = k == 1
    out = np.zeros(m if one else (m, k), dtype=dt)
    if nnr and nnz and k:
        data = as_c(a.data, dt)
        if n <= MAP_FACTOR * nnz + 1024:
            cmap = np.full(n, -1, dtype=np.int32 if nnr < 2**31 else IDX)
            cmap[w.indices] = np.arange(nnr, dtype=cmap.dtype)
            _spmm(data, a, wd.reshape(nnr) if one else wd, out, cmap=cmap)
        elif nnr <= _HASH_FACTOR * nnz + 1024:
            # a hash of the stored rows: O(1) per entry where a binary search took 15
            # dependent, mispredicted steps (2048 x 1,000,000 batch, its 30,000 rows pulled:
            # 0.37 against 2.6 ms)
            _spmm(data, a, wd, out.reshape(m, k), tab=hash_table(as_c(w.indices, IDX)))
        else:  # far more stored rows than entries: search them, build nothing
            _spmm(data, a, wd, out.reshape(m, k), keys=as_c(w.indices, IDX))
    return out.reshape((m,) + tail)


# dot(csr, row_sparse) densifies w when n * k is at most this many times the entries, and
# hashes w's rows when they are at most this many times the entries
_DENSIFY_FACTOR = 4
_HASH_FACTOR = 4


# ----------------------------------------------------------------------------- csr.T . dense
@njit(cache=True)
def _csc_index(keys, cur):
    # cur: zeroed, one slot per key value. Counts each key's entries, then (branch-free: about
    # half the columns may be stored) turns the counts into each stored key's first position
    # in column order. Returns (uniq, colptr): the stored keys, sorted, and their extents.
    for p in range(keys.shape[0]):
        cur[np.uint64(keys[p])] += 1
    nu = 0
    for c in range(cur.shape[0]):
        nu += cur[c] != 0
    uniq = np.empty(nu + 1, dtype=np.int64)
    colptr = np.empty(nu + 2, dtype=np.int64)
    colptr[0] = 0
    u = 0
    s = 0
    for c in range(cur.shape[0]):
        cnt = cur[c]
        uniq[u] = c
        cur[c] = s
        s += cnt
        u += cnt != 0
        colptr[u] = s
    return uniq[:nu], colptr[:nu + 1]


@njit(cache=True)
def _fill_t(lo, hi, keys, indptr, data, cur, rows_t, data_t):
    # counting-sort fill of the entries whose key lies in [lo, hi): their row and value, in
    # column order (cur advances from each key's first position)
    ulo, uhi = np.uint64(lo), np.uint64(hi)
    for i in range(indptr.shape[0] - 1):
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = np.uint64(keys[p])
            if ulo <= c < uhi:
                q = np.uint64(cur[c])
                cur[c] = q + np.uint64(1)
                rows_t[q] = i
                data_t[q] = data[p]


@njit(cache=True)
def _gather_t(lo, hi, colptr, rows_t, data_t, b, out):
    # out[u] = sum over column u's entries of value * b[row]; each output row is written
    # whole (a stored column has an entry), so out need not be zeroed
    k = np.uint64(b.shape[1])
    for u in range(lo, hi):
        uu = np.uint64(u)
        q0 = np.uint64(colptr[u])
        r = np.uint64(rows_t[q0])
        v = data_t[q0]
        for j in range(k):
            out[uu, j] = v * b[r, j]
        for q in range(q0 + np.uint64(1), np.uint64(colptr[u + 1])):
            r = np.uint64(rows_t[q])
            v = data_t[q]
            for j in range(k):
                out[uu, j] += v * b[r, j]


@blockwise
def _transpose_gather(u0, u1, uniq, colptr, keys, indptr, data, cur, rows_t, data_t, b, out):
    # stored keys u0..u1-1 (a block of them per thread): every entry is read, only these
    # keys' part of the transpose is filled, then their output rows are gathered
    if u0 < u1:
        _fill_t(uniq[u0], uniq[u1 - 1] + 1, keys, indptr, data, cur, rows_t, data_t)
        _gather_t(u0, u1, colptr, rows_t, data_t, b, out)


@njit(cache=True)
def _scatter_t(data, indptr, pos, b, out):
    # out[pos[p]] += data[p] * b[row(p)]: serial (output rows collide); out zero-initialised
    k = np.uint64(b.shape[1])
    for i in range(len(indptr) - 1):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            v = data[p]
            o = np.uint64(pos[p])
            for j in range(k):
                out[o, j] += v * b[ui, j]


_U1 = np.uint64(1)
_U6 = np.uint64(6)
_U63 = np.uint64(63)


@njit(cache=True)
def _scatter_dense_t1(data, indices, indptr, b, buf, bits):
    # k == 1: buf[c] += data * b[row] (buf zeroed), bit c of bits set for every stored
    # column c; returns the number of distinct columns. A bit set (n / 8 bytes) stays in
    # cache next to buf where a byte or int64 column map would not.
    nu = 0
    for i in range(len(indptr) - 1):
        x = b[i]
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = np.uint64(indices[p])
            buf[c] += data[p] * x
            w = c >> _U6
            old = bits[w]
            new = old | (_U1 << (c & _U63))
            bits[w] = new
            nu += old != new
    return nu


@njit(cache=True)
def _compact_bits1(bits, buf, nu):
    # (sorted columns whose bit is set, their buf values); buf has 64 * len(bits) entries
    uniq = np.empty(nu + 1, dtype=np.int64)
    out = np.empty(nu + 1, dtype=buf.dtype)
    u = 0
    for w in range(bits.shape[0]):
        word = bits[w]
        base = w * 64
        # branch-free: about half the bits are set, so a branch would mispredict a lot
        for j in range(64):
            c = base + j
            uniq[u] = c
            out[u] = buf[c]
            u += word & _U1
            word >>= _U1
    return uniq[:nu], out[:nu]


# csr.T @ dense with k == 1 scatters into a dense length-n buffer (no column map, no
# position array: 3x faster) when the buffer is at most this many bytes and n is not
# much larger than nnz (the buffer is zeroed and scanned).
_DENSE_T_BYTES = 1 << 21


def _csrT_rows_dense1(a: CSR, data, b1):
    """(uniq, a.T @ b1 on the stored columns uniq) for a 1-D b1, via a dense buffer."""
    nw = (a.shape[1] + 63) // 64
    buf = np.zeros(nw * 64, dtype=b1.dtype)
    bits = np.zeros(nw, dtype=np.uint64)
    nu = _scatter_dense_t1(data, a.indices, a.indptr, b1, buf, bits)
    uniq, out = _compact_bits1(bits, buf, nu)
    return uniq, out.reshape(nu, 1)


def _csrT_rows(a: CSR, data, bb):
    """(uniq, a.T @ bb restricted to the stored columns uniq).

    k == 1 and small n: one serial scatter into a dense buffer, then compaction. Else the
    "csrT" gate (one per power of two of k) picks the parallel transpose-and-gather or the
    serial kernel: below k = 16 a scatter through each entry's compact column (no
    transpose to build), from 16 on the gather, whose random reads of b's k-wide rows stay
    in cache where the scatter's read-modify-writes of output rows do not (8192 x 200,000,
    15 per row, one thread: 1.9 vs 1.8 ms at k = 16, 4.0 vs 2.9 ms at k = 64).
    """
    n, k = a.shape[1], bb.shape[1]
    if k == 1 and n * bb.itemsize <= _DENSE_T_BYTES and n <= MAP_FACTOR * a.nnz + 1024:
        return _csrT_rows_dense1(a, data, bb.reshape(-1))
    work = a.nnz * k + n // 8
    if k >= _GATHER_MIN_K:
        serial = lambda: _csrT_rows_gather(a, data, bb, False)  # noqa: E731
    else:
        serial = lambda: _csrT_rows_scatter(a, data, bb)  # noqa: E731
    return _twins.run_gated(("csrT", k.bit_length()), work, serial,
                            lambda: _csrT_rows_gather(a, data, bb, True), _transpose_gather.par)


_GATHER_MIN_K = 16


@njit(cache=True)
def _scatter_t_bits(data, indices, indptr, b, bits, before, uniq, out):
    # bits: zeroed, one bit per column of a; before: a count per word of bits; uniq, out
    # (zeroed): room for every entry. Marks the stored columns, counts the set bits before
    # each word, lists the columns in uniq, then scatters out[rank(c)] += data * b[row] with
    # rank(c) = count before c's word + set bits below c in it; returns the column count.
    # The n / 8-byte bit set and its n / 8-byte counts stay in L2 where an int32 column map
    # (n * 4 bytes) and its two scans over n did not: 1.9 -> 0.55 ms at 8192 x 1,000,000,
    # k = 1. The caller allocates: three arrays made here doubled the compile time.
    for p in range(indices.shape[0]):
        c = np.uint64(indices[p])
        bits[c >> _U6] |= _U1 << (c & _U63)
    nw = bits.shape[0]
    nu = 0
    for w in range(nw):
        before[w] = nu
        nu += popcount(bits[w])
    u = 0
    for w in range(nw):
        word = bits[w]
        base = w * 64
        while word:
            uniq[u] = base + trailing_zeros(word)
            u += 1
            word &= word - _U1
    k = np.uint64(b.shape[1])
    for i in range(indptr.shape[0] - 1):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = np.uint64(indices[p])
            w = c >> _U6
            o = np.uint64(before[w]) + popcount(bits[w] & ((_U1 << (c & _U63)) - _U1))
            v = data[p]
            for j in range(k):
                out[o, j] += v * b[ui, j]
    return nu


def _csrT_rows_scatter(a: CSR, data, bb):
    """Serial _csrT_rows: scatter through each entry's compact column (its rank in a bit set
    of the columns, or, for n far beyond the entries, its position after a sort)."""
    n, nnz = a.shape[1], a.nnz
    if nnz and bb.shape[1] and n <= _BITS_FACTOR * nnz + 65536:
        nw = (n + 63) // 64
        uniq = np.empty(nnz, dtype=np.int64)
        out = np.zeros((nnz, bb.shape[1]), dtype=bb.dtype)
        nu = _scatter_t_bits(data, a.indices[:nnz], a.indptr, bb, np.zeros(nw, np.uint64),
                             np.empty(nw, np.int64), uniq, out)
        return uniq[:nu], out[:nu]
    uniq, pos = unique_positions(a.indices[:nnz], n)
    out = np.zeros((len(uniq), bb.shape[1]), dtype=bb.dtype)
    if a.nnz and bb.shape[1]:
        _scatter_t(data, a.indptr, pos, bb, out)
    return uniq, out


# the bit set costs n / 4 bytes (bits and counts): used up to 64 bytes per entry
_BITS_FACTOR = 256


def _csrT_rows_gather(a: CSR, data, bb, parallel):
    """_csrT_rows as a compact transpose (counting sort) and a gather into independent
    output rows: b's rows are read at random, but b is the small operand (m x k, in cache)
    where the scatter's random rows are the large output's."""
    m, n = a.shape
    nnz = a.nnz
    keys, names = a.indices[:nnz], None
    if n > MAP_FACTOR * nnz + 1024:  # a map over the columns would dwarf the entries
        names, keys = unique_positions(keys, n)  # keys become compact ranks
    width = n if names is None else len(names)
    cur = np.zeros(width, dtype=np.int32 if nnz < 2**31 else np.int64)
    kuniq, colptr = _csc_index(keys, cur)  # the stored keys (all ranks when compacted)
    uniq = kuniq if names is None else names
    out = np.empty((len(uniq), bb.shape[1]), dtype=bb.dtype)
    if not (len(uniq) and bb.shape[1]):
        return uniq, out
    rows_t = np.empty(nnz, dtype=np.int32 if m < 2**31 else np.int64)
    data_t = np.empty(nnz, dtype=data.dtype)
    args = (kuniq, colptr, keys, a.indptr, data, cur, rows_t, data_t, bb, out)
    if parallel:
        _transpose_gather.par(balanced_bounds(colptr, numba.get_num_threads()), *args)
    else:
        _transpose_gather.ser(0, len(kuniq), *args)
    return uniq, out


def _prep_T(a: CSR, b: np.ndarray, what):
    m = a.shape[0]
    if b.shape[0] != m:
        raise ShapeError(f"{what}: a.T @ b needs b.shape[0] == {m}, got {b.shape}")
    dt = common(a.data.dtype, b.dtype)
    return dt, as_c(a.data, dt), as_c(rows2(b, m), dt)


@f16_safe
def dot_csrT_dns_rsp(a: CSR, b: np.ndarray) -> RSP:
    """a.T @ b as row_sparse; rows = sorted unique columns stored in a (structural zeros kept)."""
    dt, data, bb = _prep_T(a, b, "dot(csr.T, dense)")
    n = a.shape[1]
    uniq, out = _csrT_rows(a, data, bb)
    return RSP(out.reshape((len(uniq),) + b.shape[1:]), uniq, (n,) + b.shape[1:])


@f16_safe
def dot_csrT_dns(a: CSR, b: np.ndarray) -> np.ndarray:
    """a.T @ b as dense; csr any column order."""
    dt, data, bb = _prep_T(a, b, "dot(csr.T, dense)")
    n = a.shape[1]
    uniq, rows = _csrT_rows(a, data, bb)
    out = np.zeros((n, bb.shape[1]), dtype=dt)
    out[uniq] = rows
    return out.reshape((n,) + b.shape[1:])


@f16_safe
def dot_csrT_rsp_rsp(a: CSR, w: RSP) -> RSP:
    """a.T @ w as row_sparse; w canonical; rows = stored columns of a's rows present in w."""
    m, n = a.shape
    if w.shape[0] != m:
        raise ShapeError(f"dot(csr.T, row_sparse): a.T @ w needs w.shape[0] == {m}, got "
                         f"{w.shape}")
    tail = tuple(w.shape[1:])
    dt = common(a.data.dtype, w.data.dtype)
    wd = as_c(rows2(w.data, len(w.indices)), dt)
    sub = take_rows_csr(a, w.indices)  # row q of sub pairs with row q of w.data
    uniq, out = _csrT_rows(sub, as_c(sub.data, dt), wd)
    return RSP(out.reshape((len(uniq),) + tail), uniq, (n,) + tail)


# ----------------------------------------------------------------------------- dense . csr
@twin
def _dot_dns_csr(x, data, indices, indptr, out):
    # out[r] = x[r] @ a: each output row is independent; out zero-initialised
    for r in prange(x.shape[0]):
        ur = np.uint64(r)
        for i in range(len(indptr) - 1):
            xv = x[ur, np.uint64(i)]
            if xv != 0:
                for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    out[ur, np.uint64(indices[p])] += xv * data[p]


def _prep_dns_csr(x, a, what):
    m = a.shape[0]
    if x.shape[-1] != m:
        raise ShapeError(f"{what}: inner dimensions differ, {x.shape} vs {a.shape}")
    dt = common(x.dtype, a.data.dtype)
    return dt, as_c(cols2(x, m), dt), as_c(a.data, dt)


@f16_safe
def dot_dns_csr(x: np.ndarray, a: CSR) -> np.ndarray:
    """x @ a as dense (x 1-D or N-D, contracted on its last axis); csr any column order."""
    dt, xx, data = _prep_dns_csr(x, a, "dot(dense, csr)")
    out = np.zeros((xx.shape[0], a.shape[1]), dtype=dt)
    _dot_dns_csr(xx.shape[0] * a.nnz, xx, data, a.indices, a.indptr, out)
    return out.reshape(x.shape[:-1] + (a.shape[1],))


@f16_safe
def dot_dns_csr_csr(x: np.ndarray, a: CSR) -> CSR:
    """x @ a (x 2-D) as csr; each row stores every column present in a, sorted (MXNet CPU)."""
    if x.ndim != 2:
        raise ShapeError(f"dot(dense, csr) -> csr needs a 2-D lhs, got shape {x.shape}")
    dt, xx, data = _prep_dns_csr(x, a, "dot(dense, csr)")
    p = xx.shape[0]
    uniq, pos = unique_positions(a.indices[:a.nnz], a.shape[1])
    nnc = len(uniq)
    out = np.zeros((p, nnc), dtype=dt)
    _dot_dns_csr(p * a.nnz, xx, data[:a.nnz], pos, a.indptr, out)
    indptr = np.arange(p + 1, dtype=IDX) * nnc
    return CSR(out.reshape(-1), np.tile(uniq, p), indptr, (p, a.shape[1]))


@twin
def _dot_dns_csrT(x, data, indices, indptr, outT):
    # outT[i, r] = sum_p a[i, c_p] * x[r, c_p]; outT zero-initialised
    nr = x.shape[0]
    for i in prange(len(indptr) - 1):
        ui = np.uint64(i)
        for p in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            v = data[p]
            c = np.uint64(indices[p])
            for r in range(nr):
                outT[ui, r] += v * x[r, c]


@f16_safe
def dot_dns_csrT(x: np.ndarray, a: CSR) -> np.ndarray:
    """x @ a.T as dense (x 1-D or N-D, contracted on its last axis); csr any column order."""
    m, n = a.shape
    if x.shape[-1] != n:
        raise ShapeError(f"dot(dense, csr.T): inner dimensions differ, {x.shape} vs {a.shape}.T")
    if x.ndim == 1:
        return dot_csr_dns(a, x)
    dt = common(x.dtype, a.data.dtype)
    xx = as_c(cols2(x, n), dt)
    outT = np.zeros((m, xx.shape[0]), dtype=dt)
    _dot_dns_csrT(xx.shape[0] * a.nnz, xx, as_c(a.data, dt), a.indices, a.indptr, outT)
    return np.ascontiguousarray(outT.T).reshape(x.shape[:-1] + (m,))
