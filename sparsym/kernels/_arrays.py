"""Small array helpers shared by the csr / row_sparse kernel modules."""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import _twins

# A dense column -> position map (O(n) memory and time) beats sorting or binary search
# (O(nnz log)) until n is this many times nnz.
MAP_FACTOR = 32


def common(*dtypes):
    """The result dtype of ``dtypes`` (NumPy promotion)."""
    if len(dtypes) == 2 and dtypes[0] == dtypes[1] and dtypes[0].__class__ is not type:
        return dtypes[0]  # the usual case, without np.result_type's dispatch
    return np.result_type(*dtypes)


try:  # NumPy 2 keeps its floating-point error state in a context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _FP_STATE
except ImportError:  # pragma: no cover - other NumPy versions take np.errstate
    _FP_STATE = None
_QUIET: dict = {}  # the state in force -> the same with divide/invalid/over ignored


class _Quiet:
    """``np.errstate(divide='ignore', invalid='ignore', over='ignore')`` at the cost of two
    context-variable calls: the quiet state is derived once per state in force (a user's
    other settings, such as ``under``, are kept as errstate keeps them). An elementwise
    kernel of a batch-1 training step is a microsecond; errstate's Python-level set-up
    was several."""

    __slots__ = ("_token",)

    def __enter__(self):
        cur = _FP_STATE.get()
        q = _QUIET.get(cur)
        if q is None:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                q = _FP_STATE.get()
            if len(_QUIET) > 16:
                _QUIET.clear()
            _QUIET[cur] = q
        self._token = _FP_STATE.set(q)

    def __exit__(self, *exc):
        _FP_STATE.reset(self._token)


def quiet_fp():
    """A context ignoring divide-by-zero, invalid and overflow floating-point errors (the
    values are inf/nan as in MXNet, without NumPy's warnings)."""
    if _FP_STATE is None:
        return np.errstate(divide="ignore", invalid="ignore", over="ignore")
    return _Quiet()


def as_c(x, dt):
    """``x`` as a C-contiguous array of dtype ``dt`` (no copy when it already is)."""
    if x.__class__ is np.ndarray and x.dtype == dt and x.flags.c_contiguous and x.ndim:
        return x  # the usual case, without ascontiguousarray's dispatch
    return np.ascontiguousarray(x, dtype=dt)


def rows2(x, lead):
    """View x as (lead, rest) even when sizes are 0 (numpy cannot infer -1 then)."""
    return x.reshape(lead, math.prod(x.shape[1:]))


def cols2(x, last):
    """View x as (rest, last), contracting on the last axis."""
    return x.reshape(math.prod(x.shape[:-1]), last)


def unique_positions(indices, n):
    """(sorted unique values of ``indices``, each entry's position among them), both int64.

    ``indices`` must lie in [0, n): csr columns, or clipped embedding ids. A bit map of the
    n values while n is at most BYTE_MAP_FACTOR times the entries (a batch's 30k embedding
    ids among 1M rows: ~0.1 ms against ~1.9 ms for np.unique's sort), else a sort.
    """
    if len(indices) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n <= BYTE_MAP_FACTOR * len(indices) + 4096:
        # a bit per value and the count of set bits before each word: n/4 bytes in all, in
        # cache where a byte map and an int32 rank per value (5n bytes) were not; a batch's
        # 30k embedding ids among 1M rows took ~0.3 ms through those
        ids = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
        if not _twins.numba_on():
            # the same map in NumPy (a byte per value), for a process where Numba is not
            # set up: a value's position is the count of marked values below it
            marks = np.zeros(n, np.bool_)
            marks[ids] = True
            uniq = np.flatnonzero(marks)
            pos = np.cumsum(marks, dtype=np.int64)[ids] - 1
            _twins.charge_numpy(n + len(ids), 4)
            return uniq.astype(np.int64, copy=False), pos
        uniq, pos = np.empty(len(ids), np.int64), np.empty(len(ids), np.int64)
        words = (n + 63) >> 6
        cnt = _bit_positions(ids, np.zeros(words, np.uint64), np.empty(words, np.int64),
                             uniq, pos)
        return uniq[:cnt], pos
    uniq, inv = np.unique(indices, return_inverse=True)
    return uniq.astype(np.int64, copy=False), inv.astype(np.int64, copy=False).reshape(-1)


# A byte per possible value, scanned a word at a time, beats sorting the values (a batch's
# tens of thousands of feature ids among a million: ~70 us against ~600 us) until the values
# are this many times fewer than the possible ones.
BYTE_MAP_FACTOR = 256


def _byte_map(n):
    """A zeroed byte map of n values and its whole 8-byte words as uint64 (viewed here: a
    view inside the kernel doubled its compile time)."""
    marks = np.zeros(n, np.uint8)
    return marks, marks[:n - n % 8].view(np.uint64)


@njit(cache=True, nogil=True)
def _marked(ids, marks, words, out):
    """Mark ``ids`` in the zeroed byte map ``marks`` (``words``: its whole words as uint64)
    and write the marked values in order to ``out``; returns their count, or -1 when an id
    lies outside the map (nothing written)."""
    n = marks.shape[0]
    for p in range(ids.shape[0]):
        v = ids[p]
        if v < 0 or v >= n:
            return -1
        marks[v] = 1
    cnt = 0
    for w in range(words.shape[0]):
        if words[w] != 0:
            for c in range(w * 8, w * 8 + 8):
                if marks[c]:
                    out[cnt] = c
                    cnt += 1
    for c in range(words.shape[0] * 8, n):
        if marks[c]:
            out[cnt] = c
            cnt += 1
    return cnt


def sorted_unique(ids, n):
    """Sorted distinct values of int64 ``ids`` that lie in [0, n), as int64; ValueError when
    one does not. A byte map of n values when n is at most BYTE_MAP_FACTOR times the ids,
    else a sort."""
    ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
    if len(ids) == 0:
        return ids
    if n <= BYTE_MAP_FACTOR * len(ids) + 4096:
        out = np.empty(len(ids), np.int64)
        cnt = _marked(ids, *_byte_map(n), out)
        if cnt < 0:
            raise ValueError(f"an id lies outside [0, {n})")
        return out[:cnt]
    srt = np.sort(ids)
    keep = np.empty(len(srt), dtype=bool)
    keep[0] = True
    np.not_equal(srt[1:], srt[:-1], out=keep[1:])
    srt = srt[keep]
    if srt[0] < 0 or srt[-1] >= n:
        raise ValueError(f"an id lies outside [0, {n})")
    return srt


@njit(cache=True, inline="always")
def find_sorted(keys, x):
    """Position of ``x`` in sorted unique ``keys`` (binary search), or -1 (Numba only)."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < keys.shape[0] and keys[lo] == x else -1


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: multiply, keep the top bits


def hash_table(keys):
    """Open-addressing table of distinct non-negative int64 ``keys`` -> their positions:
    slot rows are (key, position), -1 when empty; a power of two of 2-4 slots per key, so a
    probe sequence is short, and key and position share a cache line."""
    bits = max(4, (2 * keys.shape[0] - 1).bit_length())
    tab = np.full((1 << bits, 2), -1, dtype=np.int64)  # allocated here: a np.full inside
    _hash_fill(keys, tab, np.uint64(64 - bits))        # the kernel doubled its compile time
    return tab


@njit(cache=True)
def _hash_fill(keys, tab, shift):
    """Insert ``keys`` (with their positions) into the empty table ``tab``."""
    mask = np.uint64(tab.shape[0] - 1)
    for i in range(keys.shape[0]):
        h = (np.uint64(keys[i]) * _GOLDEN) >> shift
        while tab[h, 0] != -1:  # linear probing
            h = (h + np.uint64(1)) & mask
        tab[h, 0] = keys[i]
        tab[h, 1] = i


@njit(cache=True, inline="always")
def hash_shift(tab):
    """The right shift that turns a key's product with the golden ratio into a slot of
    ``tab`` (computed once per kernel call; Numba only)."""
    bits = 0
    while (1 << bits) < tab.shape[0]:
        bits += 1
    return np.uint64(64 - bits)


@njit(cache=True, inline="always")
def hash_find(tab, shift, x):
    """Position stored for key ``x`` in a :func:`hash_table`, or -1 (Numba only)."""
    mask = np.uint64(tab.shape[0] - 1)
    h = (np.uint64(x) * _GOLDEN) >> shift
    while True:
        t = tab[h, 0]
        if t == x:
            return tab[h, 1]
        if t == -1:
            return -1
        h = (h + np.uint64(1)) & mask


@intrinsic
def popcount(typingctx, x):
    """Set bits of a uint64 (LLVM ctpop: one instruction on x86-64; Numba only)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz; Numba only)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.uint64(types.uint64), codegen


@njit(cache=True, nogil=True)
def _bit_positions(ids, bits, before, uniq, pos):
    """unique_positions of ``ids`` (in [0, 64 * len(bits))) through the zeroed bit map
    ``bits`` and ``before`` (per word, the set bits of the words before it); returns the
    number of unique values written to ``uniq``."""
    one = np.uint64(1)
    for p in range(ids.shape[0]):
        v = ids[p]
        bits[v >> 6] |= one << np.uint64(v & 63)
    cnt = 0
    for w in range(bits.shape[0]):
        before[w] = cnt
        x = bits[w]
        while x:
            uniq[cnt] = (w << 6) + np.int64(trailing_zeros(x))
            cnt += 1
            x &= x - one
    for p in range(ids.shape[0]):
        v = ids[p]
        w = v >> 6
        below = bits[w] & ((one << np.uint64(v & 63)) - one)
        pos[p] = before[w] + np.int64(popcount(below))
    return cnt


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask the CPU to bring element ``idx`` (flat, C order) of array ``arr`` into cache
    (LLVM's prefetch: no effect on results; Numba only). Random-row gathers issue it a few
    rows ahead, so rows arrive while earlier ones are summed (the embedding-bag sum over
    1M x 16 rows: ~25% less time)."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        # read access, high temporal locality (all cache levels), data cache
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(arr, idx), codegen
