"""Dense CSV parsing: a GIL-free Numba kernel over raw bytes, segments parsed on threads.

Format (as read by MXNet's ``CSVIter``): one row per line, ``ncols`` numbers separated by
commas; spaces, tabs and ``\\r`` around a number are ignored, blank lines are skipped.
Float rows parse as libsvm.py's numbers (sign, fraction, exponent, inf/nan). Integer
dtypes read the integer part as MXNet does (``1.5`` is 1, ``-4.7`` is -4: the digits
after the sign, up to the first other character of the field). A row with another
number of values, or a field that is not a number, raises :class:`sparsym.base.FormatError`
naming the file and the 1-based line.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..base import FormatError
from . import _libsvm_np as _np_path
from . import libsvm as _libsvm
from .libsvm import _POW10, _parse_float, _segment_bounds

__all__ = ["parse_csv_chunk"]

_NL, _CR, _SP, _TAB, _COMMA = 10, 13, 32, 9, 44
_OK, _E_NUM, _E_COUNT = 0, 1, 2


@njit(cache=True, nogil=True)
def _parse_csv(buf, out, as_int, pow10, res):
    """Parse the lines of ``buf`` into the rows of ``out`` (rows <= lines); ``res`` gets
    (rows, err, line of the error within buf, offset of the bad field, values in that row)."""
    n = len(buf)
    ncols = out.shape[1]
    i = np.int64(0)
    row = 0
    line = 0
    err = _OK
    tok = np.int64(0)
    col = 0
    while i < n and err == _OK:
        c = buf[i]
        if c == _NL:
            line += 1
            i += 1
            continue
        if c == _SP or c == _TAB or c == _CR:
            i += 1
            continue
        col = 0
        while True:  # the fields of one line
            while i < n and (buf[i] == _SP or buf[i] == _TAB):
                i += 1
            tok = i
            if as_int:
                neg = i < n and buf[i] == 45
                if i < n and (buf[i] == 45 or buf[i] == 43):
                    i += 1
                k = i
                iv = np.int64(0)
                while i < n and 48 <= buf[i] <= 57:
                    iv = iv * 10 + (buf[i] - 48)
                    i += 1
                if i == k:
                    err = _E_NUM
                    break
                while i < n and buf[i] != _COMMA and buf[i] != _NL:  # MXNet: the rest is dropped
                    i += 1
                if col < ncols:
                    out[row, col] = -iv if neg else iv
            else:
                # '[-]digits[.digits]' up to the comma: read inline (2x faster than
                # _parse_float, with its exact arithmetic); anything else goes to it
                neg = i < n and buf[i] == 45
                if neg:
                    i += 1
                mant = np.int64(0)
                nd = 0
                e = 0
                while i < n and 48 <= buf[i] <= 57 and nd < 18:
                    mant = mant * 10 + (buf[i] - 48)
                    nd += 1
                    i += 1
                if i < n and buf[i] == 46:
                    i += 1
                    while i < n and 48 <= buf[i] <= 57 and nd < 18:
                        mant = mant * 10 + (buf[i] - 48)
                        nd += 1
                        e += 1
                        i += 1
                if nd and (i >= n or buf[i] == _COMMA or buf[i] == _NL):
                    v = float(mant)
                    if e:
                        v = v / pow10[e]
                    if neg:
                        v = -v
                else:
                    v, i, ok = _parse_float(buf, tok, n, pow10)
                    while i < n and (buf[i] == _SP or buf[i] == _TAB or buf[i] == _CR):
                        i += 1
                    if not ok or (i < n and buf[i] != _COMMA and buf[i] != _NL):
                        err = _E_NUM
                        break
                if col < ncols:
                    out[row, col] = v
            col += 1
            if i >= n or buf[i] == _NL:
                break
            i += 1  # the comma
        if err != _OK:
            break
        if col != ncols:
            err = _E_COUNT
            break
        row += 1
    res[0] = row
    res[1] = err
    res[2] = line
    res[3] = tok
    res[4] = col


def _parse_segment(b, lo, hi, raw, ncols, dtype):
    """(rows array, lines, res) of b[lo:hi]: with NumPy while Numba is not set up in this
    process (its set-up costs 0.4 s of CPU, as for LibSVM files) and the lines are plain
    floats, else with the Numba kernel."""
    if np.dtype(dtype).kind == "f" and not _libsvm.numba_ready():
        got = _np_path.parse_csv_np(_np_path.padded(b[lo:hi]), _np_path.PAD_BEFORE,
                                    _np_path.PAD_BEFORE + hi - lo, ncols)
        if got is not None:
            _libsvm.count_numpy_bytes(hi - lo)
            return got[0].astype(dtype, copy=False), got[1], np.zeros(5, np.int64)
    cap = (raw.count(b"\n", lo, hi) if raw is not None else
           int(np.count_nonzero(b[lo:hi] == _NL))) + 1
    out = np.empty((cap, ncols), dtype)
    res = np.zeros(5, np.int64)
    _parse_csv(b[lo:hi], out, np.dtype(dtype).kind in "iu", _POW10, res)
    lines = cap - 1 + (1 if hi > lo and b[hi - 1] != _NL else 0)
    return out[:int(res[0])], lines, res


def _field_text(b, start):
    end = start
    while end < len(b) and b[end] not in (_COMMA, _NL) and end - start < 40:
        end += 1
    return bytes(b[start:end]).decode("utf-8", "replace").strip()


def parse_csv_chunk(buf, ncols, dtype=np.float32, fname="<buffer>", first_line_no=1,
                    parallel=True):
    """Parse CSV lines into row blocks: ([2-D arrays of ``ncols`` columns], lines consumed).

    Parameters
    ----------
    buf : bytes
        Whole lines (the last one may lack its newline).
    ncols : int
        Values per line.
    dtype : numpy dtype
        float32, float64, int32 or int64.
    fname, first_line_no : str, int
        For error messages: the file and the 1-based number of buf's first line.
    parallel : bool
        Parse segments of a large buffer on the kernel pool's threads (each a block).

    Returns
    -------
    blocks : list of ndarray
        The rows in order, one block per segment (joining them would copy every value).
    lines : int

    Raises
    ------
    FormatError
        A line with another number of values, or a field that is not a number.

    Examples
    --------
    >>> blocks, n = parse_csv_chunk(b"1,2\\n\\n3.5,-4\\n", 2)
    >>> blocks[0].tolist(), n
    ([[1.0, 2.0], [3.5, -4.0]], 3)
    """
    raw = bytes(buf) if not isinstance(buf, bytes) else buf
    b = np.frombuffer(raw, np.uint8)
    ncols = int(ncols)
    bounds = (_segment_bounds(b, raw) if parallel else np.array([0, len(b)], np.int64)).tolist()
    tasks = [lambda lo=lo, hi=hi: _parse_segment(b, lo, hi, raw, ncols, dtype)
             for lo, hi in zip(bounds[:-1], bounds[1:])]
    segs = _libsvm._run_segments(tasks)
    blocks, lines = [], 0
    for s, (block, seg_lines, res) in enumerate(segs):
        if res[1]:
            where = f"{fname}:{first_line_no + lines + int(res[2])}: malformed CSV line"
            if res[1] == _E_COUNT:
                raise FormatError(f"{where}: expected {ncols} values (the product of the "
                                  f"shape), got {int(res[4])}")
            raise FormatError(f"{where}: {_field_text(b, bounds[s] + int(res[3]))!r} is not "
                              "a number")
        lines += seg_lines
        if len(block):
            blocks.append(block)
    return blocks, lines
