"""LibSVM text parsing: a Numba kernel over raw bytes, and a streaming, partitioned reader.

Format (as read by MXNet's ``LibSVMIter``, through dmlc-core's libsvm parser)::

    <label>[,<label>...][:<weight>] <index>:<value> <index>:<value> ...  [# comment]

- Indices are zero-based (MXNet's LibSVMIter convention) and must lie in
  ``[0, num_features)``; rows keep the order written, and a row whose indices are not
  ascending is sorted (duplicates are kept).
- Only the first label of a multi-label line (``a,b``) is kept and a ``:weight`` after
  the label is ignored, as MXNet's LibSVMIter takes the first column as the label.
- ``qid:<n>`` tokens are skipped; ``#`` starts a comment that runs to the end of the line.
- Blank (or whitespace/comment-only) lines are skipped; ``\\r\\n`` line ends are accepted.
- The same parser reads ``label_libsvm`` files: their feature part is the label CSR.

Anything else raises :class:`sparsym.base.FormatError` naming the file, the 1-based line
number and what was wrong.
"""
from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from numba import config, njit

from ..base import FormatError
from ..storage import CSR
from . import _libsvm_np as _np_path

__all__ = ["parse_libsvm_chunk", "LibSVMReader", "count_lines"]

_NL, _CR, _SP, _TAB = 10, 13, 32, 9
_COLON, _COMMA, _HASH = 58, 44, 35

# error codes returned by the kernel
_OK, _E_LABEL, _E_INDEX, _E_COLON, _E_VALUE, _E_RANGE, _E_NEG = 0, 1, 2, 3, 4, 5, 6
_MESSAGES = {
    _E_LABEL: "label {tok!r} is not a number",
    _E_INDEX: "feature index in {tok!r} is not a non-negative integer",
    _E_COLON: "token {tok!r} is not of the form index:value (missing ':')",
    _E_VALUE: "value in {tok!r} is not a number",
    _E_RANGE: "feature index in {tok!r} is out of range: expected < num_features={nf}",
    _E_NEG: "feature index in {tok!r} is negative",
}

_POW10 = np.array([10.0 ** i for i in range(23)], dtype=np.float64)


# ----------------------------------------------------------------------------- kernel
# Byte classes, one table lookup per byte. The kernel is deliberately one flat loop with a
# single callee and no allocation: Numba's compile time grows with the typed IR (inlined
# helpers, array constructors and tuple-returning exits each add to it), and this kernel is
# the first thing a fresh machine compiles (it took 6-13 s as a parallel-segment kernel
# with inlined helpers; now about 1.5 s).
_SPACE, _END, _DIGIT = 1, 2, 4
_CLS = np.zeros(256, np.uint8)
for _c in (_SP, _TAB, _CR):
    _CLS[_c] = _SPACE | _END
for _c in (_NL, _HASH):
    _CLS[_c] = _END
_CLS[48:58] = _DIGIT
_CLS.flags.writeable = False


@njit(cache=True, nogil=True)
def _parse_float(buf, i, n, pow10):
    """Parse a decimal float at buf[i:n]; return (value, new_pos, ok)."""
    neg = False
    if i < n and (buf[i] == 45 or buf[i] == 43):  # '-' '+'
        neg = buf[i] == 45
        i += 1
    mant = np.int64(0)
    ndig = 0
    exp10 = 0
    any_digit = False
    frac = False
    while i < n:
        c = buf[i]
        if 48 <= c <= 57:
            any_digit = True
            if ndig < 18:
                mant = mant * 10 + (c - 48)
                if mant != 0:
                    ndig += 1
                if frac:
                    exp10 -= 1
            elif not frac:
                exp10 += 1  # digits beyond int64 precision only scale
        elif c == 46 and not frac:  # '.'
            frac = True
        else:
            break
        i += 1
    if not any_digit:
        # inf / nan (case-insensitive), as strtod accepts them
        if i + 3 <= n:
            c0, c1, c2 = buf[i] | 32, buf[i + 1] | 32, buf[i + 2] | 32
            if c0 == 105 and c1 == 110 and c2 == 102:  # inf
                return (-np.inf if neg else np.inf), i + 3, True
            if c0 == 110 and c1 == 97 and c2 == 110:  # nan
                return np.nan, i + 3, True
        return 0.0, i, False
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        i += 1
        eneg = False
        if i < n and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        if i >= n or not (48 <= buf[i] <= 57):
            return 0.0, i, False
        e = 0
        while i < n and 48 <= buf[i] <= 57:
            if e < 100000:
                e = e * 10 + (buf[i] - 48)
            i += 1
        exp10 += -e if eneg else e
    # exact fast path (Clinger): mantissa < 2**53 and |exp| <= 22
    v = float(mant)
    if 0 < exp10 <= 22:
        v = v * pow10[exp10]
    elif -22 <= exp10 < 0:
        v = v / pow10[-exp10]
    elif exp10 != 0 and mant != 0:
        v = v * 10.0 ** exp10  # may be off by an ulp; values like these are rare in LibSVM
    return (-v if neg else v), i, True


@njit(cache=True, nogil=True)  # nogil: segments are parsed on threads, LibSVMIter parses ahead
def _parse(buf, num_features, labels, data, indices, indptr, cls, pow10, res):
    """Parse whole lines of ``buf`` into preallocated arrays (rows <= newlines + 1,
    nnz <= colons); ``res`` gets (rows, nnz, err, line, err_start, unsorted).

    ``line``: the newlines read, so the 0-based line of an error within ``buf``;
    ``err_start`` the token's offset.
    """
    n = len(buf)
    i = np.int64(0)  # not a literal 0: _parse_float would compile a second signature for it
    line = 0
    row = 0
    nnz = 0
    unsorted = 0
    err = _OK
    tok = 0
    indptr[0] = 0
    while i < n and err == _OK:
        c = buf[i]
        if cls[c] & _SPACE:
            i += 1
            continue
        if c == _NL:
            i += 1
            line += 1
            continue
        if c == _HASH:
            while i < n and buf[i] != _NL:
                i += 1
            continue
        # ---- label; extra labels 'a,b,c' and a ':weight' are skipped
        tok = i
        lab, i, ok = _parse_float(buf, i, n, pow10)
        while ok and i < n and (buf[i] == _COMMA or buf[i] == _COLON):
            _, i, ok = _parse_float(buf, i + 1, n, pow10)
        if not ok or (i < n and not cls[buf[i]] & _END):
            err = _E_LABEL
            break
        labels[row] = lab
        prev = -1
        # ---- features
        while i < n:
            c = buf[i]
            if cls[c] & _SPACE:
                i += 1
                continue
            if c == _NL:
                break
            if c == _HASH:
                while i < n and buf[i] != _NL:
                    i += 1
                break
            tok = i
            # qid:<n> (svm-rank) is skipped, as dmlc-core does
            if (c == 113 and i + 4 <= n and buf[i + 1] == 105 and buf[i + 2] == 100
                    and buf[i + 3] == _COLON):
                i += 4
                while i < n and not cls[buf[i]] & _END:
                    i += 1
                continue
            neg = c == 45
            if neg:
                i += 1
            idx = np.int64(0)
            nd = 0
            while i < n and cls[buf[i]] & _DIGIT:
                if idx < np.int64(1) << 60:
                    idx = idx * 10 + (buf[i] - 48)
                nd += 1
                i += 1
            if nd == 0 or i >= n or buf[i] != _COLON:
                # a bare token ('3') or a malformed index ('a:1', '1.5:2', '12a:1')
                err = _E_COLON
                if nd == 0 or (i < n and not cls[buf[i]] & _END):
                    k = i
                    while k < n and not cls[buf[k]] & _END and buf[k] != _COLON:
                        k += 1
                    if k < n and buf[k] == _COLON:
                        err = _E_INDEX
                break
            if neg:
                err = _E_NEG
                break
            if idx >= num_features:
                err = _E_RANGE
                break
            val, i, ok = _parse_float(buf, i + 1, n, pow10)
            if not ok or (i < n and not cls[buf[i]] & _END):
                err = _E_VALUE
                break
            if idx <= prev:
                unsorted = 1
            prev = idx
            indices[nnz] = idx
            data[nnz] = val
            nnz += 1
        if err == _OK:
            row += 1
            indptr[row] = nnz
    res[0] = row
    res[1] = nnz
    res[2] = err
    res[3] = line
    res[4] = tok
    res[5] = unsorted


@njit(cache=True, nogil=True)
def _parse_plain(buf, num_features, labels, data, indices, indptr, cls, pow10, res):
    """_parse for the common grammar only: ``label idx:value ...`` lines of plain decimal
    numbers (sign, fraction, exponent), blank lines. Anything else (comments, ``qid:``,
    multi-labels, label weights, inf/nan, a malformed token, an index out of range) stops
    it with ``res[2] = 1``: the caller re-parses with _parse, which knows the full grammar
    and names the error. Numbers are converted exactly as _parse_float does.

    It exists for a fresh machine's first run: half of _parse's compile time (its callee,
    the branches of the rare forms) goes, and it parses plain files 1.4x faster.
    """
    n = len(buf)
    i = np.int64(0)
    row = 0
    nnz = 0
    unsorted = 0
    prev = np.int64(-1)
    in_row = False
    ok = True
    lines = 0
    indptr[0] = 0
    while i < n:
        c = buf[i]
        if c == _NL:
            lines += 1
            if in_row:
                row += 1
                indptr[row] = nnz
                in_row = False
            i += 1
            continue
        if cls[c] & _SPACE:
            i += 1
            continue
        idx = np.int64(0)
        if in_row:  # the index and its ':'
            k = i
            while i < n and cls[buf[i]] & _DIGIT and i - k < 18:
                idx = idx * 10 + (buf[i] - 48)
                i += 1
            if i == k or i >= n or buf[i] != _COLON or idx >= num_features:
                ok = False
                break
            i += 1
        neg = i < n and buf[i] == 45
        if i < n and (neg or buf[i] == 43):
            i += 1
        mant = np.int64(0)
        ndig = 0
        exp10 = 0
        k = i
        frac = False
        while i < n:
            c = buf[i]
            if cls[c] & _DIGIT:
                if ndig < 18:
                    mant = mant * 10 + (c - 48)
                    if mant != 0:
                        ndig += 1
                    if frac:
                        exp10 -= 1
                elif not frac:
                    exp10 += 1
            elif c == 46 and not frac:
                frac = True
            else:
                break
            i += 1
        if i - k == frac:  # no digit
            ok = False
            break
        if i < n and buf[i] | 32 == 101:  # 'e' 'E'
            i += 1
            eneg = i < n and buf[i] == 45
            if i < n and (eneg or buf[i] == 43):
                i += 1
            e = 0
            k = i
            while i < n and cls[buf[i]] & _DIGIT:
                if e < 100000:
                    e = e * 10 + (buf[i] - 48)
                i += 1
            if i == k:
                ok = False
                break
            exp10 += -e if eneg else e
        if i < n and not cls[buf[i]] & _SPACE and buf[i] != _NL:
            ok = False
            break
        v = float(mant)
        if 0 < exp10 <= 22:
            v = v * pow10[exp10]
        elif -22 <= exp10 < 0:
            v = v / pow10[-exp10]
        elif exp10 != 0 and mant != 0:
            v = v * 10.0 ** exp10
        if neg:
            v = -v
        if in_row:
            if idx <= prev:
                unsorted = 1
            prev = idx
            indices[nnz] = idx
            data[nnz] = v
            nnz += 1
        else:
            labels[row] = v
            in_row = True
            prev = -1
    if in_row:
        row += 1
        indptr[row] = nnz
    res[0] = row
    res[1] = nnz
    res[2] = 0 if ok else 1
    res[3] = lines
    res[5] = unsorted


@njit(cache=True)
def _sort_rows(data, indices, indptr):
    """Sort each row by column (stable, so duplicates keep their order)."""
    for r in range(len(indptr) - 1):
        a, b = indptr[r], indptr[r + 1]
        ok = True
        for k in range(a + 1, b):
            if indices[k] < indices[k - 1]:
                ok = False
                break
        if ok:
            continue
        order = np.argsort(indices[a:b], kind="mergesort")
        indices[a:b] = indices[a:b][order]
        data[a:b] = data[a:b][order]


# ----------------------------------------------------------------------------- python API
def _as_u8(buf) -> np.ndarray:
    """A read-only 1-D uint8 view (one kernel signature whatever the buffer's origin)."""
    if isinstance(buf, np.ndarray):
        if buf.dtype != np.uint8 or buf.ndim != 1:
            raise TypeError(f"parse_libsvm_chunk: expected a 1-D uint8 array, got "
                            f"{buf.dtype} with shape {buf.shape}")
        buf = np.ascontiguousarray(buf).view()
        buf.flags.writeable = False
        return buf
    b = np.frombuffer(buf, dtype=np.uint8)
    if b.flags.writeable:
        b = b.view()
        b.flags.writeable = False
    return b


def _segment_bounds(b: np.ndarray, raw=None, min_bytes: int = 1 << 20, raw_off: int = 0
                    ) -> np.ndarray:
    """Split offsets after newlines: one segment per thread for big buffers (``raw``: a
    bytes object holding b from offset ``raw_off`` on, searched with bytes.find, when there
    is one)."""
    n = len(b)
    nseg = max(1, min(config.NUMBA_NUM_THREADS, n // min_bytes))
    bounds = [0]
    for k in range(1, nseg):
        pos = max(k * n // nseg, bounds[-1])
        if isinstance(raw, (bytes, bytearray)):
            nl = raw.find(b"\n", raw_off + pos, raw_off + n)
            nl = nl - raw_off if nl >= 0 else -1
        else:
            hit = np.flatnonzero(b[pos:pos + (1 << 16)] == _NL)
            nl = pos + int(hit[0]) if len(hit) else _find_nl(b, pos)
        cut = nl + 1 if nl >= 0 else n
        if cut >= n:
            break
        bounds.append(cut)
    bounds.append(n)
    return np.asarray(bounds, dtype=np.int64)


def _find_nl(b, pos):
    """Offset of the first newline in b[pos:], or -1."""
    hit = np.flatnonzero(b[pos:] == _NL)
    return pos + int(hit[0]) if len(hit) else -1


# bytes the NumPy path has parsed in this process (see warm_numba)
_np_bytes = 0
_np_lock = threading.Lock()
# NumPy parses this file 3x slower than Numba (0.21 s vs 0.07 s of CPU for 27 MB), so
# after this many bytes a file re-read for more passes pays for Numba's 0.4 s set-up
_WARM_AFTER = 16 << 20


def count_numpy_bytes(size):
    """Add ``size`` to the bytes the NumPy parsers (LibSVM, CSV) have read in this process."""
    global _np_bytes
    with _np_lock:
        _np_bytes += size


def numba_ready() -> bool:
    """Whether Numba's target context is set up in this process. Its first dispatch (any
    kernel's, cache warm or not) costs 0.4 s of CPU and imports numba.np.arraymath
    among others; until then plain segments parse with NumPy (kernels/_libsvm_np.py),
    after it with the faster Numba kernels."""
    return "numba.np.arraymath" in sys.modules


def warm_numba(force=False) -> bool:
    """Set Numba up (dispatch the plain kernel and the row sort once) when the NumPy path
    has parsed ``_WARM_AFTER`` bytes in this process, or with ``force``; returns whether
    Numba is set up. LibSVMReader calls it before each pass: a fresh process's first pass
    over a file parses with NumPy, the next passes pay the set-up once and run Numba."""
    if numba_ready():
        return True
    if not force and _np_bytes < _WARM_AFTER:
        return False
    _parse_chunk(None, _as_u8(b"1 1:1 0:1\n0 0:1\n"), 2, "<warm-up>", 1, np.float32, False,
                 numpy_path=False)
    return numba_ready()


def _parse_segment(b, lo, hi, num_features, vdtype, numpy_path=None, padded=None):
    """Parse b[lo:hi]: (labels, data, indices, indptr, lines, res); ``numpy_path``: None
    picks the NumPy path while Numba is not set up, True always tries it, False never.
    ``padded``: (buf, off) when b is buf[off:off + len(b)] with the zero bytes around it
    that the NumPy path reads in place (_libsvm_np.parse_plain_np); None: it copies."""
    size = hi - lo
    if numpy_path or (numpy_path is None and not numba_ready()):
        if padded is None:
            buf, off = _np_path.padded(b[lo:hi]), _np_path.PAD_BEFORE - lo
        else:
            buf, off = padded
        got = _np_path.parse_plain_np(buf, off + lo, off + hi, num_features, vdtype)
        if got is not None:
            count_numpy_bytes(size)
            labels, data, indices, indptr, lines, unsorted = got
            res = np.zeros(7, np.int64)
            res[5] = unsorted
            res[6] = 1  # rows sorted with NumPy too
            lines += 1 if size and b[hi - 1] != _NL else 0
            return labels, data, indices, indptr, lines, res
    # capacities from the size alone (a row takes at least 2 bytes, 'y\n', a feature 4,
    # 'i:v '), trimmed after the parse without a copy: counting the newlines and colons
    # first took a third of the parse time. Pages past what the parse writes are never
    # touched.
    labels = np.empty((size + 1) // 2, np.float32)
    indptr = np.empty((size + 1) // 2 + 1, np.int64)
    data = np.empty((size + 1) // 4, vdtype)
    indices = np.empty((size + 1) // 4, np.int64)
    seg = b[lo:hi]
    res = np.zeros(7, np.int64)
    _parse_plain(seg, num_features, labels, data, indices, indptr, _CLS, _POW10, res)
    if res[2]:  # a form beyond the plain grammar, or an error to name: the full parser
        _parse(seg, num_features, labels, data, indices, indptr, _CLS, _POW10, res)
    rows, nnz = int(res[0]), int(res[1])
    for a, k in ((labels, rows), (indptr, rows + 1), (data, nnz), (indices, nnz)):
        a.resize(k, refcheck=False)  # realloc: in place, the tail goes back to the heap
    lines = int(res[3]) + (1 if size and b[hi - 1] != _NL else 0)
    return labels, data, indices, indptr, lines, res


_pool = None
_pool_lock = threading.Lock()


def _run_segments(tasks):
    """Run the segment parses: the first on this thread, the others on a pool (the kernels
    and NumPy's bulk operations release the GIL). Not kernels/_parallel.run: its thread
    count comes from numba.get_num_threads(), whose first call loads Numba's threading
    layer (25 ms, on a fresh process's first batch)."""
    global _pool
    if len(tasks) == 1:
        return [tasks[0]()]
    with _pool_lock:
        if _pool is None or _pool._max_workers < len(tasks) - 1:
            _pool = ThreadPoolExecutor(max_workers=len(tasks) - 1,
                                       thread_name_prefix="sparsym-libsvm")
        pool = _pool
    futures = [pool.submit(t) for t in tasks[1:]]
    try:
        first = tasks[0]()
    except BaseException:
        wait(futures)  # the others read the caller's buffer: done before it returns
        raise
    return [first] + [f.result() for f in futures]


def count_lines(buf) -> int:
    """Number of lines in ``buf`` (a final line without a newline counts)."""
    b = _as_u8(buf)
    if not len(b):
        return 0
    nl = int(np.count_nonzero(b == _NL))
    return nl + (1 if b[-1] != _NL else 0)


def _token_text(b: np.ndarray, start: int) -> str:
    end = start
    n = len(b)
    while end < n and b[end] not in (_SP, _TAB, _CR, _NL) and end - start < 60:
        end += 1
    return bytes(b[start:end]).decode("utf-8", "replace")


def parse_libsvm_chunk(buf, num_features: int, fname: str = "<buffer>", first_line_no: int = 1,
                       dtype=np.float32, parallel=True):
    """Parse LibSVM lines from ``buf`` into (labels, CSR, lines consumed).

    Parameters
    ----------
    buf : bytes or 1-D uint8 ndarray
        Whole lines (the last one may lack its newline).
    num_features : int
        Number of columns; an index ``>= num_features`` is an error.
    fname, first_line_no : str, int
        Used in error messages: the file name and the 1-based number of buf's first line.
    dtype : numpy dtype
        dtype of the CSR values. Labels are float32.
    parallel : bool
        Parse segments on several threads (False: one thread, without the GIL).

    Returns
    -------
    labels : float32 ndarray of shape (rows,)
        The first label of each non-blank line.
    csr : CSR of shape (rows, num_features)
        Zero-based int64 indices, ascending within each row.
    lines : int
        Lines consumed, blank ones included (so a caller can number the next chunk).

    Raises
    ------
    FormatError
        On a malformed token, naming ``fname`` and the 1-based line number.

    Examples
    --------
    >>> y, x, n = parse_libsvm_chunk(b"1 0:0.5 3:2\\n0 2:1\\n", 4)
    >>> y.tolist(), x.indices.tolist(), x.indptr.tolist(), n
    ([1.0, 0.0], [0, 3, 2], [0, 2, 3], 2)
    """
    raw = buf if isinstance(buf, (bytes, bytearray)) else None
    return _parse_chunk(raw, _as_u8(buf), num_features, fname, first_line_no, dtype, parallel)


def _parse_chunk(raw, b, num_features, fname, first_line_no, dtype, parallel, numpy_path=None):
    """parse_libsvm_chunk on ``b``, a prefix of the bytes object ``raw`` (or None)."""
    parts, lines = _parse_parts(raw, b, num_features, fname, first_line_no, dtype, parallel,
                                numpy_path)
    if len(parts) == 1:
        return parts[0][0], parts[0][1], lines
    csrs = [x for _, x in parts]
    starts = np.cumsum([0] + [x.nnz for x in csrs[:-1]])
    indptr = np.concatenate([csrs[0].indptr[:1]] + [x.indptr[1:] + z
                                                     for x, z in zip(csrs, starts)])
    x = CSR(np.concatenate([x.data for x in csrs]), np.concatenate([x.indices for x in csrs]),
            indptr, (len(indptr) - 1, int(num_features)))
    return np.concatenate([y for y, _ in parts]), x, lines


def _parse_parts(raw, b, num_features, fname, first_line_no, dtype, parallel,
                 numpy_path=None, padded=None):
    """([(labels, CSR) of each segment of ``b``], lines): the segments parsed on threads,
    each kept as its own CSR (LibSVMReader yields them as they are: joining them would
    copy every entry). ``padded``: (buf, off) as for _parse_segment, ``raw`` then being
    buf's bytearray."""
    num_features = int(num_features)
    vdtype = np.float64 if np.dtype(dtype) == np.float64 else np.float32
    raw_off = 0 if padded is None else padded[1]
    bounds = (_segment_bounds(b, raw, raw_off=raw_off) if parallel
              else np.array([0, len(b)], np.int64))
    tasks = [lambda lo=lo, hi=hi: _parse_segment(b, lo, hi, num_features, vdtype, numpy_path,
                                                 padded)
             for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    segs = _run_segments(tasks)
    lines = 0
    parts = []
    for s, (labels, data, indices, indptr, seg_lines, res) in enumerate(segs):
        if res[2]:
            err, err_line, err_pos = (int(v) for v in res[2:5])
            what = _MESSAGES[err].format(tok=_token_text(b, int(bounds[s]) + err_pos),
                                         nf=num_features)
            raise FormatError(f"{fname}:{first_line_no + lines + err_line}: malformed "
                              f"LibSVM line: {what}")
        lines += seg_lines
        if res[5]:
            (_np_path.sort_rows if res[6] else _sort_rows)(data, indices, indptr)
        if data.dtype != np.dtype(dtype):
            data = data.astype(dtype)
        parts.append((labels, CSR(data, indices, indptr, (len(labels), num_features))))
    return parts, lines


def _line_start_at_or_after(f, pos: int, size: int, block: int = 1 << 16) -> int:
    """Offset of the first line start >= ``pos`` (a line starts at 0 or after a newline)."""
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    f.seek(pos - 1)
    off = pos - 1
    while True:
        blk = f.read(block)
        if not blk:
            return size
        k = blk.find(b"\n")
        if k >= 0:
            return off + k + 1
        off += len(blk)


class LibSVMReader:
    """Stream a LibSVM file as (labels, CSR) pieces split at line boundaries: each chunk
    read, or with ``parallel`` each of the segments its threads parsed.

    Parameters
    ----------
    path : str
        The file.
    num_features : int
        Number of columns of every CSR chunk.
    chunk_bytes : int
        Bytes read per chunk (a line longer than this is read whole).
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts``: the lines that start in the byte
        range ``[k*size/n, (k+1)*size/n)``, like MXNet's InputSplit. Parts are uneven in
        rows; together they cover every line exactly once.
    dtype : numpy dtype
        dtype of the CSR values.
    parallel : bool
        Parse each chunk in segments on several threads (False: one thread, without the
        GIL).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.libsvm")
    >>> _ = open(p, "w").write("1 0:1\\n0 1:2\\n")
    >>> [x.shape for _, x in LibSVMReader(p, 3)]
    [(2, 3)]
    """

    def __init__(self, path, num_features, chunk_bytes=16 << 20, num_parts=1, part_index=0,
                 dtype=np.float32, parallel=True):
        if num_parts < 1 or not 0 <= part_index < num_parts:
            raise ValueError(f"LibSVMReader: part_index must be in [0, num_parts={num_parts}), "
                             f"got {part_index}")
        if chunk_bytes < 1:
            raise ValueError(f"LibSVMReader: chunk_bytes must be positive, got {chunk_bytes}")
        self.path = os.fspath(path)
        self.num_features = int(num_features)
        self.chunk_bytes = int(chunk_bytes)
        self.num_parts = int(num_parts)
        self.part_index = int(part_index)
        self.dtype = dtype
        self.parallel = parallel
        self.size = os.path.getsize(self.path)
        with open(self.path, "rb") as f:
            lo = self.part_index * self.size // self.num_parts
            hi = (self.part_index + 1) * self.size // self.num_parts
            self.begin = _line_start_at_or_after(f, lo, self.size)
            self.end = _line_start_at_or_after(f, hi, self.size)
        self._first_line_no = None if self.begin else 1

    @property
    def first_line_no(self) -> int:
        """1-based line number of the part's first line (counted lazily: errors only)."""
        if self._first_line_no is None:
            with open(self.path, "rb") as f:
                self._first_line_no = 1 + self._count_newlines(f, self.begin)
        return self._first_line_no

    def _count_newlines(self, f, upto: int) -> int:
        f.seek(0)
        total, left = 0, upto
        while left > 0:
            blk = f.read(min(left, 1 << 24))
            if not blk:
                break
            total += blk.count(b"\n")
            left -= len(blk)
        return total

    def __iter__(self):
        warm_numba()  # after a first pass parsed with NumPy, Numba pays for itself
        line_no = 1  # relative to the part's first line; made absolute only for errors
        before, after = _np_path.PAD_BEFORE, _np_path.PAD_AFTER
        # one buffer for the pass, read into in place: the unfinished line at the end of a
        # chunk moves to its front and the next chunk is read after it. Fresh 4 MB blocks
        # per read (and the joins and the NumPy path's padded copies) took 3 new pages a
        # byte, page faults that made a fresh process's first pass 20% slower.
        store = bytearray(before + min(self.chunk_bytes, self.end - self.begin) + after)
        have = 0  # bytes of the unfinished line at store[before:before + have]
        with open(self.path, "rb") as f:
            f.seek(self.begin)
            pos = self.begin
            while pos < self.end or have:
                want = min(self.chunk_bytes, self.end - pos)
                if before + have + want + after > len(store):
                    # a line longer than the chunk (a copy, not a resize: NumPy views of
                    # the old buffer may live on in a traceback)
                    grown = bytearray(2 * (before + have + want + after))
                    grown[before:before + have] = store[before:before + have]
                    store = grown
                got = f.readinto(memoryview(store)[before + have:before + have + want]) \
                    if want > 0 else 0
                pos += got
                end = before + have + got
                if pos >= self.end or got < want:
                    cut = have + got  # the part's last line (may lack a newline)
                    pos = self.end
                else:
                    nl = store.rfind(b"\n", before + have, end)
                    if nl < 0:  # a line longer than the chunk: read on
                        have += got
                        continue
                    cut = nl + 1 - before
                if cut == 0:
                    break
                # the parser reads PAD_AFTER bytes past the chunk, zeros at the part's end
                tail = bytes(store[before + cut:end])
                store[before + cut:before + cut + after] = bytes(after)
                buf = np.frombuffer(store, np.uint8)
                buf.flags.writeable = False
                chunk = buf[before:before + cut]
                try:
                    parts, lines = _parse_parts(
                        store, chunk, self.num_features, self.path, line_no, self.dtype,
                        self.parallel, padded=(buf, before))
                except FormatError:
                    if self.begin == 0:
                        raise
                    # re-parse to name the absolute line number
                    _parse_parts(store, chunk, self.num_features, self.path,
                                 line_no + self.first_line_no - 1, self.dtype, self.parallel,
                                 padded=(buf, before))
                    raise
                del buf, chunk
                store[before:before + len(tail)] = tail
                have = len(tail)
                line_no += lines
                for labels, csr in parts:
                    if csr.shape[0]:
                        yield labels, csr
