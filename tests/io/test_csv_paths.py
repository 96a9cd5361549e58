"""CSVIter gives the same bits whichever parser reads a segment: NumPy's (a fresh process's
first pass, kernels/_libsvm_np.parse_csv_np) or the Numba kernel, and the same errors."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError
from sparsym.kernels import _libsvm_np as P
from sparsym.kernels import libsvm as L

NUMBERS = ["0", "1", "-1", "+2", "0.5", ".25", "5.", "-0", "007", "-0.125", "1234567",
           "-.75", "3.14159", "0.1234"]
AWKWARD = {
    "long": ["1.23456789,2,3", "123456789012,-0.000000001,4"],
    "exponent": ["1e-3,2.5E+2,-1e5", "nan,inf,-inf"],
    "spaces": [" 1, 2 ,3", "4,\t5,6\r"],
    "blank": ["", "1,2,3", "", ""],
}


def _rows(rng, n, numbers=NUMBERS):
    return [",".join(numbers[rng.randint(len(numbers))] for _ in range(3)) for _ in range(n)]


def _epoch(path, numpy_first, batch_size, chunk_bytes, monkeypatch, dtype=None):
    with monkeypatch.context() as m:
        m.setattr(L, "numba_ready", lambda: not numpy_first)
        m.setattr(L, "_WARM_AFTER", float("inf"))
        before = L._np_bytes
        it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=batch_size,
                           chunk_bytes=chunk_bytes, dtype=dtype)
        out = [b.data[0].asnumpy() for b in it]
        return out, L._np_bytes - before


@pytest.mark.parametrize("name", [None] + sorted(AWKWARD))
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_numpy_and_numba_paths_give_the_same_bits(tmp_path, monkeypatch, name, dtype):
    rng = np.random.RandomState(0)
    extra = AWKWARD.get(name, [])
    lines = _rows(rng, 200) + extra + _rows(rng, 200) + extra
    for trailing in (True, False):
        path = tmp_path / "a.csv"
        path.write_text("\n".join(lines) + ("\n" if trailing else ""))
        for chunk_bytes in (50, 1 << 20):
            a, np_bytes = _epoch(str(path), True, 7, chunk_bytes, monkeypatch, dtype)
            b, none = _epoch(str(path), False, 7, chunk_bytes, monkeypatch, dtype)
            assert none == 0 and (np_bytes > 0 or (name and chunk_bytes > 50))
            if name is None:
                assert np_bytes == path.stat().st_size
            assert len(a) == len(b) > 0
            for u, v in zip(a, b):
                assert u.dtype == v.dtype
                np.testing.assert_array_equal(u.view(np.uint8), v.view(np.uint8))


@pytest.mark.parametrize("bad,msg", [("1,2", "expected 3 values"), ("1,2,3,4", "expected 3"),
                                     ("1,x,3", "'x' is not a number"),
                                     ("1,,3", "is not a number")])
def test_bad_lines_name_file_and_line_on_either_path(tmp_path, monkeypatch, bad, msg):
    rng = np.random.RandomState(1)
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(_rows(rng, 40) + [bad] + _rows(rng, 5)) + "\n")
    for numpy_first in (True, False):
        with pytest.raises(FormatError, match=f"bad.csv:41: .*{msg}"):
            _epoch(str(path), numpy_first, 4, 1 << 20, monkeypatch)


def test_parse_csv_np_declines_what_it_does_not_read():
    for text in (b"1,2\n\n3,4\n", b"1,2 \n", b"1;2\n", b"1,2,\n", b"12345678,1\n", b"1e3,1\n",
                 b"1,2\n3\n", b",1\n", b"1,2\r\n"):
        assert P.parse_csv_np(P.padded(np.frombuffer(text, np.uint8)), P.PAD_BEFORE,
                              P.PAD_BEFORE + len(text), 2) is None, text
    text = b"1,-2.5\n.5,007"
    rows, lines = P.parse_csv_np(P.padded(np.frombuffer(text, np.uint8)), P.PAD_BEFORE,
                                 P.PAD_BEFORE + len(text), 2)
    assert rows.tolist() == [[1.0, -2.5], [0.5, 7.0]] and lines == 2
