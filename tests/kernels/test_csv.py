"""The CSV parsing kernel (kernels/csv.py) against NumPy's loadtxt and MXNet's rules."""
from __future__ import annotations

import numpy as np
import pytest

from sparsym.base import FormatError
from sparsym.kernels.csv import parse_csv_chunk


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floats_equal_loadtxt(dtype):
    rng = np.random.RandomState(0)
    x = rng.randn(400, 7) * 10.0 ** rng.randint(-5, 6, (400, 7))
    lines = [",".join(f"{v:.6g}" for v in row) for row in x]
    lines[3] = " " + lines[3].replace(",", " ,\t") + " \r"  # blanks around values
    text = ("\n".join(lines[:50]) + "\n\n" + "\n".join(lines[50:])).encode()
    want = np.loadtxt(text.decode().splitlines(), delimiter=",", dtype=np.float64)
    blocks, lines_ = parse_csv_chunk(text, 7, dtype, parallel=False)
    assert lines_ == 401 and len(blocks) == 1 and blocks[0].dtype == dtype
    np.testing.assert_array_equal(blocks[0], want.astype(dtype))


def test_segments_on_threads_keep_row_order():
    rows = np.arange(300000 * 3, dtype=np.float64).reshape(-1, 3)
    text = "".join(f"{a:.0f},{b:.0f},{c:.0f}\n" for a, b, c in rows).encode()
    blocks, n = parse_csv_chunk(text, 3, np.float64, parallel=True)
    assert n == len(rows)
    np.testing.assert_array_equal(np.concatenate(blocks), rows)


def test_integer_dtypes_take_the_integer_part_as_mxnet():
    # MXNet 1.9.1's CSVIter(dtype='int32') reads '1.5,2\n3,-4.7' as [[1, 2], [3, -4]]
    for dt in (np.int32, np.int64):
        blocks, _ = parse_csv_chunk(b"1.5,2\n3,-4.7\n+5, 6 \n", 2, dt)
        assert blocks[0].dtype == dt
        np.testing.assert_array_equal(blocks[0], [[1, 2], [3, -4], [5, 6]])
    big = 2 ** 62 + 1  # exact, not through a float
    assert parse_csv_chunk(f"{big},1\n".encode(), 2, np.int64)[0][0][0, 0] == big


@pytest.mark.parametrize("text,nc,dt,msg", [
    (b"1,2,3\n4,5,6\n7,x,9\n", 3, np.float32, r"f:3: .*'x' is not a number"),
    (b"1,2,3\n4,5\n", 3, np.float32, r"f:2: .*expected 3 values .*got 2"),
    (b"1,2\n\n3,4,5\n", 2, np.float32, r"f:3: .*expected 2 values .*got 3"),
    (b"1,,2\n", 3, np.float32, r"f:1: .*'' is not a number"),
    (b"1,2e\n", 2, np.float32, r"f:1: .*'2e' is not a number"),
    (b"1,2 3\n", 2, np.float32, r"f:1: .*'2 3' is not a number"),
    (b"1,a\n", 2, np.int32, r"f:1: .*'a' is not a number"),
    (b"1,2\n3\n", 2, np.int64, r"f:2: .*expected 2 values .*got 1"),
])
def test_malformed_lines_name_file_and_line(text, nc, dt, msg):
    with pytest.raises(FormatError, match=msg):
        parse_csv_chunk(text, nc, dt, fname="f")


def test_error_line_counts_earlier_segments():
    text = b"1,2\n" * 400000 + b"1,2,3\n"
    with pytest.raises(FormatError, match=r"f:400001: "):
        parse_csv_chunk(text, 2, np.float32, fname="f", parallel=True)


def test_inline_numbers_equal_the_full_parser():
    """The kernel's inline '[-]digits[.digits]' path gives _parse_float's bits, and hands
    every other form (exponents, '+', long mantissas, blanks) to it."""
    from sparsym.kernels.libsvm import _POW10, _parse_float
    toks = ["0", "-0", "5.", ".5", "-.25", "0.6370", "123456789012345678", "1234567890123456789",
            "0.000000000000000000012", "99999999999999999.9", "-3.4028235e38", "+7", "1e-5",
            " 2.5", "2.5 ", "007.0100", "4294967296.125"]
    text = ",".join(toks).encode()
    blocks, _ = parse_csv_chunk(text, len(toks), np.float64)
    for t, got in zip(toks, blocks[0][0]):
        b = np.frombuffer(t.strip().encode(), np.uint8)
        want, _, ok = _parse_float(b, 0, len(b), _POW10)
        assert ok and got == want and np.signbit(got) == np.signbit(want), t
