"""The plain LibSVM grammar parsed with NumPy alone, for a process whose Numba is not set up.

Numba's first call in a process, cache warm or not, costs 0.4 s of CPU (it builds its
target context and imports scipy.linalg for it), six times the parse of a 27 MB file.
A fresh process's first pass over a file therefore parses here when Numba is not set up
yet; libsvm.py uses the Numba kernels once it is (they are faster).

The numbers are read eight bytes at a time (a token's bytes loaded as one little-endian
uint64, combined with the SWAR digit tricks of simdjson), so every step is a NumPy
ufunc over one array per token kind. Only the plain grammar is read:
``label idx:value ...`` lines separated by single or repeated spaces, labels and values
of at most 7 characters (sign, digits, one '.'), indices of at most 7 digits, blank
lines. Anything else -- longer tokens, exponents, tabs, ``\\r``, comments, an index out
of range, every malformed line -- returns None, and the caller parses with the Numba
kernels, which know the full grammar and name the error. The values are converted
exactly as ``libsvm._parse_plain`` does (integer mantissa, one division by a power of
ten), so both paths give the same bits. ``parse_csv_np`` reads plain CSV files (floats of
at most 7 characters between single commas) the same way for kernels/csv.py.
"""
from __future__ import annotations

import numpy as np

_U = np.uint64
_M7F = _U(0x7F7F7F7F7F7F7F7F)
_M80 = _U(0x8080808080808080)
_LT21 = _U(0x5F5F5F5F5F5F5F5F)  # + this sets a byte's top bit when the byte is >= 0x21
_ZEROS = _U(0x3030303030303030)  # '0' in every byte
_HI4 = _U(0xF0F0F0F0F0F0F0F0)
_SIX = _U(0x0606060606060606)
_THREES = _U(0x3333333333333333)
_DOTS = _U(0x2E2E2E2E2E2E2E2E)
_LO = _U(0x000000FF000000FF)
_MUL1 = _U(100 + (1000000 << 32))
_MUL2 = _U(1 + (10000 << 32))
_POW10 = np.array([10.0 ** i for i in range(9)])


PAD_BEFORE, PAD_AFTER = 8, 16  # zero bytes around a buffer the parser reads in place


def padded(b: np.ndarray) -> np.ndarray:
    """b copied between PAD_BEFORE and PAD_AFTER zero bytes (for parse_plain_np)."""
    n = len(b)
    bp = np.zeros(PAD_BEFORE + n + PAD_AFTER, np.uint8)
    bp[PAD_BEFORE:PAD_BEFORE + n] = b
    return bp


def _windows(buf: np.ndarray, lo: int, hi: int):
    """(bp, w) over buf[lo:hi]: ``bp[p + 8]`` is byte p of the segment, ``w[p + 8]`` the
    uint64 of its bytes p..p+7 (views of buf, no copy)."""
    bp = buf[lo - PAD_BEFORE:hi + PAD_AFTER]
    return bp, np.ndarray((hi - lo + 9,), dtype="<u8", buffer=bp, strides=(1,))


def _terminators(x):
    """0x80 in each byte of x below 0x21 (space, newline, tab, CR, NUL end a token)."""
    t = x & _M7F
    t += _LT21
    t |= x
    np.invert(t, out=t)
    t &= _M80
    return t


def _bytes_equal(x, pattern):
    """0x80 in each byte of x equal to that byte of ``pattern`` (the exact zero-byte test
    of x ^ pattern, which marks no byte above a match falsely)."""
    y = x ^ pattern
    z = y & _M7F
    z += _M7F
    z |= y
    z |= _M7F
    np.invert(z, out=z)
    return z


def _lowest_bytes(t):
    """0xFF over the bytes below the lowest 0x80 bit of ``t`` (all but the top bit: t == 0)."""
    m = np.negative(t)
    m &= t
    m -= _U(1)
    m >>= _U(7)
    return m


def _digits_value(x):
    """(value, ok) of eight ASCII digits, the most significant in the lowest byte (the SWAR
    combination of simdjson's parse_eight_digits_unrolled); x is overwritten."""
    ok = x & _HI4
    y = x + _SIX
    y &= _HI4
    y >>= _U(4)
    ok |= y
    ok = ok == _THREES
    x -= _ZEROS
    y = x >> _U(8)
    x *= _U(10)
    x += y
    np.right_shift(x, _U(16), out=y)
    y &= _LO
    y *= _MUL2
    x &= _LO
    x *= _MUL1
    x += y
    x >>= _U(32)
    return x, ok


_COMMAS = _U(0x2C2C2C2C2C2C2C2C)


def _numbers(x, comma=False):
    """Parse the decimal numbers starting at the lowest byte of each x (a token ends at a
    byte below 0x21, or with ``comma`` also at a ','; x is overwritten): (values float64,
    token lengths, ok)."""
    t = _terminators(x)
    if comma:
        t |= _bytes_equal(x, _COMMAS)
    m = _lowest_bytes(t)  # the token's bytes (a token of 8 bytes or more: t == 0, not ok)
    ok = t != 0
    length = np.bitwise_count(m) >> 3
    c0 = x & _U(0xFF)
    neg = c0 == _U(0x2D)
    sign = neg | (c0 == _U(0x2B))
    # a sign becomes a leading '0' digit, which leaves the value as it is
    c0 -= _U(0x30)
    c0 *= sign
    x -= c0
    x &= m
    x |= _ZEROS & ~m
    dot = _bytes_equal(x, _DOTS)
    has_dot = dot != 0
    below = _lowest_bytes(dot)  # the bytes before the '.' (all of them without one)
    # drop the '.': the bytes after it move down one, a '0' comes in at the top
    y = np.right_shift(x, _U(8))
    y |= _U(0x30 << 56)
    y &= ~below
    x &= below
    x |= y
    below &= m
    nint = np.bitwise_count(below) >> 3
    mant, ok8 = _digits_value(x)
    ok &= ok8
    ok &= length > has_dot + sign  # a digit besides the sign and the '.'
    # the digits sit low, so mant = (the token's digits) * 10**(8 - digits), and
    # mant / 10**(8 - nint) is, as reals, digits / 10**(fraction digits): IEEE division
    # rounds that real once, so the bits are _parse_plain's
    v = mant.astype(np.float64)
    v /= _POW10[8 - nint]
    vb = v.view(_U)
    vb ^= neg.astype(_U) << _U(63)
    return v, length, ok


def _single_digits(bp, colon):
    """The values after the colons at ``colon`` (offsets in the segment; bp as from
    _windows) as uint8 when every one is one digit (CTR-style data), else None."""
    at = colon + 9  # bp[p + 8] is byte p: the byte after the colon
    d = bp[at]
    at += 1
    if not (bp[at] < 0x21).all():  # the byte after the digit ends the token
        return None
    d -= np.uint8(48)
    if not (d < 10).all():
        return None
    return d


def _indices(x):
    """(indices as uint64, total digits) of the index tokens ending at the top bytes of x
    (each x is the 8 bytes before a ':'), or (None, 0) when one is not 1-7 digits after a
    byte below 0x21. x is overwritten."""
    t = _terminators(x)
    if not t.all():  # no terminator in the 8 bytes: 8 digits or more, or a stray byte
        return None, 0
    # the highest terminator byte k has bit 8k+7 as t's top bit: its float64 exponent is
    # 1023+8k+7 (exact: the bits below cannot round t up to the next power of two)
    e = t.astype(np.float64).view(_U)
    e >>= _U(52)
    e -= _U(1022)  # 8k+8: the index digits are the bytes at and above it
    digits = 8 * len(e) - int(e.sum()) // 8
    x >>= e
    x <<= e  # the bytes up to the terminator cleared (a shift by 64 clears all)
    x |= np.right_shift(_ZEROS, _U(64) - e)  # ... and set to '0'
    idx, ok = _digits_value(x)
    if not ok.all() or not (e < 64).all():  # a non-digit, or no digit at all
        return None, 0
    return idx, digits


def parse_plain_np(buf: np.ndarray, lo: int, hi: int, num_features: int, vdtype):
    """(labels, data, indices, indptr, lines, unsorted) of the plain lines of buf[lo:hi], or
    None when they hold anything else (the caller then parses with the Numba kernels).

    buf is read in place, the PAD_BEFORE bytes before ``lo`` and the PAD_AFTER after ``hi``
    included: they must exist and be zeros, except that bytes after a segment that ends
    with a newline, or before one that starts a line after a newline, may be anything
    (every window that reaches them stops at that newline: see ``padded``).
    """
    n = hi - lo
    if n <= 0:
        return None
    b = buf[lo:hi]
    nl = np.flatnonzero(b == 10)
    colon = np.flatnonzero(b == 58)
    spaces = int(np.count_nonzero(b == 32))
    bp, w = _windows(buf, lo, hi)
    # ---- lines and labels
    starts = np.concatenate([np.zeros(1, np.int64), nl + 1])
    ends = np.concatenate([nl, [n]])
    keep = starts < n
    starts, ends = starts[keep], ends[keep]
    first = bp[starts + 8]
    blank = first == 10
    if (first < 0x21).sum() != blank.sum():  # a line starting with a space, tab, ...
        return None
    rows = ~blank
    labels, lab_len, ok = _numbers(w[starts[rows] + 8])
    if not ok.all():
        return None
    # ---- indices: the digits before each ':' (back to the space before them)
    idx, idx_len = _indices(w[colon])
    if idx is None or (len(idx) and int(idx.max()) >= num_features):
        return None
    # ---- values: from each ':' on
    vals = _single_digits(bp, colon)
    if vals is not None:
        val_len = len(colon)
    else:
        vals, lens, ok = _numbers(w[colon + 9])
        if not ok.all():
            return None
        val_len = int(lens.sum())
    # every byte is a space, newline or colon or lies in one of the tokens read (they are
    # disjoint runs), so nothing unread -- a bare token, a tab, a stray character -- remains
    if spaces + len(nl) + len(colon) + int(lab_len.sum()) + idx_len + val_len != n:
        return None
    indptr = np.empty(int(rows.sum()) + 1, np.int64)
    indptr[0] = 0
    indptr[1:] = np.searchsorted(colon, ends[rows])
    if indptr[-1] != len(colon):
        return None
    indices = idx.view(np.int64)  # below num_features: the same bits, without a copy
    new_row = np.zeros(len(indices), bool)
    new_row[indptr[:-1][indptr[:-1] < len(indices)]] = True
    unsorted = bool(((indices[1:] <= indices[:-1]) & ~new_row[1:]).any())
    return (labels.astype(np.float32), vals.astype(vdtype), indices, indptr, len(nl),
            unsorted)


def sort_rows(data, indices, indptr):
    """Sort each row by column, stably (duplicates keep their order), in place."""
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.lexsort((indices, rows))
    indices[:] = indices[order]
    data[:] = data[order]


def parse_csv_np(buf: np.ndarray, lo: int, hi: int, ncols: int):
    """(float64 rows of shape (lines, ncols), lines) of buf[lo:hi] (read in place, padded
    as for parse_plain_np) when every line is ``ncols`` plain numbers of at most 7
    characters separated by single commas, else None (kernels/csv.py's Numba kernel then
    parses it: blank lines, spaces, exponents, longer numbers, errors). The values are the
    kernel's bits, as for parse_plain_np."""
    n = hi - lo
    if n <= 0 or ncols < 1:
        return None
    b = buf[lo:hi]
    nl = b == 10
    sep = np.flatnonzero(nl | (b == 44))
    lines = int(np.count_nonzero(nl))
    if b[-1] != 10:  # the last line ends at the buffer's end (zeros follow: a terminator)
        sep = np.append(sep, n)
        lines += 1
    if len(sep) % ncols or len(sep) == 0:
        return None
    ends = sep[ncols - 1::ncols]
    if b[-1] != 10:
        ends = ends[:-1]
    # every ncols-th separator ends a line, and there are no other newlines
    if len(ends) != int(np.count_nonzero(nl)) or not nl[ends].all():
        return None
    bp, w = _windows(buf, lo, hi)
    starts = np.empty(len(sep), np.int64)
    starts[0] = 8
    np.add(sep[:-1], 9, out=starts[1:])  # w[p + 8] is the window at byte p
    vals, length, ok = _numbers(w[starts], comma=True)
    # the tokens and separators cover every byte: no space, tab, '\r' or stray byte
    if not ok.all() or int(length.sum()) + int(np.count_nonzero(b == 44)) + len(ends) != n:
        return None
    return vals.reshape(-1, ncols), lines
