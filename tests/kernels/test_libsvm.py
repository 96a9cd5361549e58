"""LibSVM parsing kernel and the streaming/partitioned reader."""
from __future__ import annotations

import numpy as np
import pytest

from sparsym.base import FormatError
from sparsym.kernels.libsvm import LibSVMReader, count_lines, parse_libsvm_chunk
from sparsym.storage import todense

SMALL = (
    "1 0:0.5 3:2\n"
    "\n"
    "0 2:1e-1\r\n"
    "   \t\n"
    "# comment line\n"
    "-1.5,3 1:-2 4:.25  # trailing comment\n"
    "2 \n"
    "0:3 qid:7 0:1 4:+3E2\n"
)


def test_small_file_expected_csr():
    y, x, n = parse_libsvm_chunk(SMALL.encode(), 5, "small.txt", 1)
    assert n == 8
    assert y.dtype == np.float32
    # the last line is 'label:weight' (dmlc-core), so the label is 0
    np.testing.assert_array_equal(y, [1.0, 0.0, -1.5, 2.0, 0.0])
    assert x.shape == (5, 5)
    assert x.indices.dtype == np.int64 and x.indptr.dtype == np.int64
    np.testing.assert_array_equal(x.indptr, [0, 2, 3, 5, 5, 7])
    np.testing.assert_array_equal(x.indices, [0, 3, 2, 1, 4, 0, 4])
    np.testing.assert_allclose(x.data, [0.5, 2, 0.1, -2, 0.25, 1, 300], rtol=1e-7)
    dense = todense(x)
    assert dense[2, 1] == -2 and dense[4, 4] == 300


def test_dtype_and_no_trailing_newline():
    y, x, n = parse_libsvm_chunk(b"1 0:0.1 2:3", 3, dtype=np.float64)
    assert n == 1 and x.data.dtype == np.float64
    assert x.data[0] == 0.1  # exact decimal conversion on the fast path
    y, x, n = parse_libsvm_chunk(np.frombuffer(b"0 1:1\n", np.uint8), 3)
    assert n == 1 and x.nnz == 1


def test_empty_and_blank_buffers():
    for buf in (b"", b"\n\n", b"  \r\n# only comments\n"):
        y, x, n = parse_libsvm_chunk(buf, 4)
        assert x.shape == (0, 4) and len(y) == 0 and len(x.indptr) == 1
        assert n == count_lines(buf)


def test_unsorted_row_is_sorted():
    y, x, _ = parse_libsvm_chunk(b"1 5:5 1:1 3:3\n0 2:2 0:0.5\n", 6)
    np.testing.assert_array_equal(x.indices, [1, 3, 5, 0, 2])
    np.testing.assert_array_equal(x.data, [1, 3, 5, 0.5, 2])


BAD = [
    ("x 1:1", "label"),
    ("1 a:1", "index"),
    ("1 3", "missing ':'"),
    ("1 3:x", "not a number"),
    ("1 3:", "not a number"),
    ("1 3:1:2", "not a number"),
    ("1 9:1", "out of range"),
    ("1 -1:2", "negative"),
    ("1 1.5:2", "index"),
    ("1 2:1e", "not a number"),
    ("1x 2:1", "label"),
]


@pytest.mark.parametrize("line, what", BAD)
def test_malformed_names_file_and_line(line, what):
    buf = ("1 0:1\n\n0 1:1\n" + line + "\n1 2:2\n").encode()
    with pytest.raises(FormatError) as e:
        parse_libsvm_chunk(buf, 5, "data.libsvm", 10)
    msg = str(e.value)
    assert "data.libsvm:13" in msg and what in msg


def test_malformed_line_number_in_later_segment(monkeypatch):
    # a buffer big enough to be split into parallel segments: the line number stays absolute
    good = b"1 0:1 3:1\n" * 150_000
    buf = good + b"0 4:zz\n"
    with pytest.raises(FormatError, match=r"big.txt:150001:"):
        parse_libsvm_chunk(buf, 5, "big.txt", 1)
    y, x, n = parse_libsvm_chunk(good, 5)
    assert x.shape == (150_000, 5) and n == 150_000 and x.nnz == 300_000
    np.testing.assert_array_equal(x.indptr[-3:], [299_996, 299_998, 300_000])


def _write(tmp_path, text, name="f.libsvm"):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return str(p)


def _random_text(rng, rows, nf):
    lines = []
    for r in range(rows):
        k = rng.integers(0, 6)
        idx = np.sort(rng.choice(nf, k, replace=False))
        toks = " ".join(f"{i}:{rng.integers(1, 9)}" for i in idx)
        lines.append(f"{r % 2} {toks}")
        if rng.random() < 0.1:
            lines.append("")
    return "\n".join(lines) + ("\n" if rng.random() < 0.5 else "")


def _concat(chunks, nf):
    ys = [y for y, _ in chunks]
    xs = [todense(x) for _, x in chunks]
    if not xs:
        return np.zeros(0, np.float32), np.zeros((0, nf), np.float32)
    return np.concatenate(ys), np.vstack(xs)


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_chunked_reading_equals_whole(tmp_path, chunk):
    rng = np.random.default_rng(chunk)
    text = _random_text(rng, 60, 12)
    p = _write(tmp_path, text)
    y0, x0, _ = parse_libsvm_chunk(text.encode(), 12)
    y1, x1 = _concat(list(LibSVMReader(p, 12, chunk_bytes=chunk)), 12)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(todense(x0), x1)


@pytest.mark.parametrize("chunk", [5, 100, 4096])
def test_line_longer_than_many_chunks(tmp_path, chunk):
    """A line spanning hundreds of chunks is joined once and parsed whole, with the lines
    around it (with and without a final newline)."""
    nf = 5000
    long = "1 " + " ".join(f"{j}:{j % 7 + 1}" for j in range(0, nf, 2))
    for tail in ("\n", ""):
        text = "0 1:2\n" + long + "\n2 3:4" + tail
        p = _write(tmp_path, text)
        y0, x0, _ = parse_libsvm_chunk(text.encode(), nf)
        y1, x1 = _concat(list(LibSVMReader(p, nf, chunk_bytes=chunk)), nf)
        np.testing.assert_array_equal(y1, [0, 1, 2])
        np.testing.assert_array_equal(todense(x0), x1)


@pytest.mark.parametrize("num_parts", [1, 2, 3, 5, 17])
def test_parts_cover_every_line_once(tmp_path, num_parts):
    rng = np.random.default_rng(num_parts)
    # labels number the rows so the union can be checked exactly
    lines = [f"{r} {r % 7}:1" for r in range(50)]
    text = "\n".join(lines) + "\n"
    p = _write(tmp_path, text)
    seen = []
    for k in range(num_parts):
        for y, x in LibSVMReader(p, 7, chunk_bytes=int(rng.integers(1, 40)),
                                 num_parts=num_parts, part_index=k):
            seen.extend(y.astype(int).tolist())
            np.testing.assert_array_equal(x.indices, (y.astype(int) % 7))
    assert sorted(seen) == list(range(50))
    assert seen == list(range(50))  # parts are contiguous and in order


def test_reader_error_names_absolute_line(tmp_path):
    text = "".join(f"1 {i % 3}:1\n" for i in range(40)) + "1 7:1\n" + "0 1:1\n" * 5
    p = _write(tmp_path, text, "bad.libsvm")
    for parts in (1, 3):
        with pytest.raises(FormatError, match=r"bad.libsvm:41: .*out of range"):
            for k in range(parts):
                for _ in LibSVMReader(p, 3, chunk_bytes=16, num_parts=parts, part_index=k):
                    pass


def test_reader_rejects_bad_part(tmp_path):
    p = _write(tmp_path, "1 0:1\n")
    with pytest.raises(ValueError):
        LibSVMReader(p, 3, num_parts=2, part_index=2)


def test_label_file_variant():
    # label_libsvm files: the feature part is the label CSR
    _, lab, _ = parse_libsvm_chunk(b"0 0:1 2:1\n0 1:1\n", 3)
    np.testing.assert_array_equal(todense(lab), [[1, 0, 1], [0, 1, 0]])


def _both_kernels(text, nf):
    """(plain result or None when it declines, full result): each a tuple of arrays."""
    from sparsym.kernels import libsvm as L
    b = np.frombuffer(text, np.uint8)
    out = []
    for kern in (L._parse_plain, L._parse):
        size = len(b)
        arrs = (np.empty((size + 1) // 2, np.float32), np.empty((size + 1) // 4, np.float64),
                np.empty((size + 1) // 4, np.int64), np.empty((size + 1) // 2 + 1, np.int64))
        res = np.zeros(6, np.int64)
        kern(b, nf, *arrs, L._CLS, L._POW10, res)
        rows, nnz = int(res[0]), int(res[1])
        got = (arrs[0][:rows], arrs[1][:nnz], arrs[2][:nnz], arrs[3][:rows + 1],
               int(res[3]), int(res[5]))
        out.append(None if res[2] else got)
    return out


NUMBERS = ["0", "1", "-1", "+2", "0.5", ".25", "5.", "-0", "007", "1e3", "1E-3", "+3E2",
           "-2.5e+1", "123456789012345678901", "0.1234567890123456789012", "1e-30",
           "4.2e25", "6e-320", "9" * 25 + ".5", "0.000001", "3.4028235e38", "1e400"]


def test_plain_kernel_matches_full_parser_bit_for_bit():
    rng = np.random.RandomState(0)
    lines = []
    for _ in range(400):
        nf = rng.randint(0, 6)
        idx = np.sort(rng.choice(50, nf, replace=False)) if rng.rand() < 0.8 else \
            rng.randint(0, 50, nf)
        toks = [NUMBERS[rng.randint(len(NUMBERS))]]
        toks += [f"{i}:{NUMBERS[rng.randint(len(NUMBERS))]}" for i in idx]
        sep = [" ", "  ", "\t", " \t "][rng.randint(4)]
        lines.append(sep.join(toks) + ["", " ", "\r"][rng.randint(3)])
        if rng.rand() < 0.05:
            lines.append(["", "  ", "\t\r"][rng.randint(3)])
    for text in ("\n".join(lines) + "\n", "\n".join(lines), "\n" + "\n".join(lines)):
        plain, full = _both_kernels(text.encode(), 50)
        assert plain is not None and full is not None
        for p, f in zip(plain, full):
            np.testing.assert_array_equal(p, f)  # NaN-free, so bitwise for floats
            if isinstance(p, np.ndarray):
                assert p.dtype == f.dtype
        assert plain[3][-1] == len(plain[1]) and len(plain[0]) == len(plain[3]) - 1


@pytest.mark.parametrize("text", [
    b"1 0:1 # a comment\n", b"1 qid:3 0:1\n", b"1,2 0:1\n", b"1:0.5 0:1\n", b"1 0:inf\n",
    b"nan 0:1\n", b"1 0:1 7\n", b"1 99:1\n", b"1 -1:1\n", b"1 0:1x\n", b"1 0:1e\n",
    b"1 0:.\n", b"1 0:1.2.3\n", b"1 0:1\x0b\n", b"x 0:1\n", b"1 a:1\n", b"1 0:\n",
    b"1 0:-\n", b"1 1234567890123456789:1\n"])
def test_plain_kernel_declines_what_it_does_not_parse(text):
    """Comments, qid, multi-labels, label weights, inf/nan and every malformed token go to
    the full parser, which parses or names them."""
    plain, _ = _both_kernels(text, 50)
    assert plain is None


def test_parse_through_fallback_equals_full_grammar_result():
    # one line beyond the plain grammar sends the whole segment to the full parser
    text = b"1 0:0.5 3:2\n0 2:1 # note\n1 4:3\n"
    y, x, n = parse_libsvm_chunk(text, 5, parallel=False)
    assert n == 3
    np.testing.assert_array_equal(y, [1, 0, 1])
    np.testing.assert_array_equal(x.indices, [0, 3, 2, 4])
    np.testing.assert_array_equal(x.indptr, [0, 2, 3, 4])


# ----------------------------------------------------------------------------- NumPy path
SHORT = ["0", "1", "-1", "+2", "0.5", ".25", "5.", "-0", "007", "-0.125", "1234567",
         "9999999", "+.5", "-.75", "0.0", "3.14159", "65535", "-9.5e", "1.2.3"]


def _np_parse(text, nf, vdtype):
    """The NumPy parser over ``text`` (bytes) between its zero paddings."""
    from sparsym.kernels import _libsvm_np as P
    buf = P.padded(np.frombuffer(text, np.uint8))
    return P.parse_plain_np(buf, P.PAD_BEFORE, P.PAD_BEFORE + len(text), nf, vdtype)


def _plain_corpus(rng, nrows, nf, numbers, seps=(" ", "  ")):
    lines = []
    for _ in range(nrows):
        k = rng.randint(0, 6)
        # distinct ascending indices (np.unique: choice(replace=False) permutes all nf)
        idx = np.unique(rng.randint(0, nf, k)) if rng.rand() < 0.8 else rng.randint(0, nf, k)
        toks = [numbers[rng.randint(len(numbers))]]
        toks += [f"{i}:{numbers[rng.randint(len(numbers))]}" for i in idx]
        lines.append(seps[rng.randint(len(seps))].join(toks) + ["", " "][rng.randint(2)])
        if rng.rand() < 0.05:
            lines.append("")
    return lines


@pytest.mark.parametrize("vdtype", [np.float32, np.float64])
def test_numpy_path_matches_plain_kernel_bit_for_bit(vdtype):
    """The NumPy parser (a fresh process's first pass) gives _parse_plain's exact bits, or
    declines (malformed tokens in the corpus make some texts decline: then both agree
    that the plain grammar does not cover them)."""
    rng = np.random.RandomState(1)
    for trial in range(30):
        # well-formed numbers; one-digit ones alone take the CTR-data shortcut
        numbers = SHORT[:-2] if trial % 3 else [str(d) for d in range(10)]
        lines = _plain_corpus(rng, 60, 10**6 if trial % 2 else 40, numbers)
        for text in ("\n".join(lines) + "\n", "\n".join(lines), "\n" + "\n".join(lines)):
            nf = 10**7
            plain, _ = _both_kernels(text.encode(), nf)
            got = _np_parse(text.encode(), nf, vdtype)
            assert plain is not None and got is not None, text
            labels, data, indices, indptr, lines_, unsorted = got
            np.testing.assert_array_equal(labels, plain[0])
            assert labels.dtype == np.float32 and data.dtype == vdtype
            np.testing.assert_array_equal(data, plain[1].astype(vdtype))
            np.testing.assert_array_equal(indices, plain[2])
            np.testing.assert_array_equal(indptr, plain[3])
            assert lines_ == plain[4] and unsorted == bool(plain[5])


@pytest.mark.parametrize("text", [
    b"1 0:1 # a comment\n", b"1 qid:3 0:1\n", b"1,2 0:1\n", b"1:0.5 0:1\n", b"1 0:inf\n",
    b"nan 0:1\n", b"1 0:1 7\n", b"1 99:1\n", b"1 -1:1\n", b"1 0:1x\n", b"1 0:1e\n",
    b"1 0:.\n", b"1 0:1.2.3\n", b"1 0:1\x0b\n", b"x 0:1\n", b"1 a:1\n", b"1 0:\n",
    b"1 0:-\n", b"1 1234567890123456789:1\n", b"1 0:1e3\n", b"1\t0:1\n", b"1 0:1\r\n",
    b" 1 0:1\n", b"1 0:12345678\n", b"12345678 0:1\n", b"1 12345678:1\n", b"1 0:1:2\n",
    b"1  :1\n", b"0:1\n", b"1 0:1\x00\n", b"1 0:1\n\t\n", b"1 0:+\n", b"- 0:1\n",
    b"1 0:1 2\n", b"1 0:1\xff\n"])
def test_numpy_path_declines_what_it_does_not_parse(text):
    """Beyond the plain grammar of short tokens, and every malformed line: None, so the
    Numba kernels parse it or name the error."""
    assert _np_parse(text, 50, np.float32) is None


def test_numpy_path_through_parse_chunk_sorts_rows_and_raises_like_numba():
    from sparsym.kernels.libsvm import _as_u8, _parse_chunk
    text = b"1 5:1 2:2 2:3\n0 1:0.5\n\n-1 9:1 0:2\n"
    a = _parse_chunk(None, _as_u8(text), 10, "f", 1, np.float32, False, numpy_path=True)
    b = _parse_chunk(None, _as_u8(text), 10, "f", 1, np.float32, False, numpy_path=False)
    for u, v in ((a[0], b[0]), (a[1].data, b[1].data), (a[1].indices, b[1].indices),
                 (a[1].indptr, b[1].indptr)):
        np.testing.assert_array_equal(u, v)
    assert a[2] == b[2] == 4
    np.testing.assert_array_equal(a[1].indices, [2, 2, 5, 1, 0, 9])
    np.testing.assert_array_equal(a[1].data, [2, 3, 1, 0.5, 2, 1])
    with pytest.raises(FormatError, match=r"f:2: .*out of range"):
        _parse_chunk(None, _as_u8(b"1 0:1\n1 10:1\n"), 10, "f", 1, np.float32, False,
                     numpy_path=True)


def test_fresh_process_first_pass_runs_without_numba_then_warms_it(tmp_path):
    """A fresh process parses its first pass with NumPy (Numba's set-up costs 0.4 s of CPU,
    more than the parse); once NumPy has parsed _WARM_AFTER bytes the next pass sets Numba
    up and gives the same batches."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = tmp_path / "a.libsvm"
    p.write_text("".join(f"{i % 2} {i % 7}:1 {7 + i % 5}:0.5\n" for i in range(5000)))
    code = (
        "import sys, numpy as np, sparsym as mx\n"
        f"it = mx.io.LibSVMIter(data_libsvm={str(p)!r}, data_shape=(12,), batch_size=64)\n"
        "def rows(b):\n"
        "    x = b.data[0]\n"
        "    return np.concatenate([x.indptr.asnumpy(), x.indices.asnumpy(),\n"
        "                           x.data.asnumpy(), b.label[0].asnumpy()])\n"
        "first = [rows(b) for b in it]\n"
        "print('numba', 'numba.np.arraymath' in sys.modules)\n"
        "from sparsym.kernels import libsvm as L\n"
        "assert not L.warm_numba()\n"
        "L._WARM_AFTER = 1000  # the next pass sets Numba up (16 MB by default)\n"
        f"it = mx.io.LibSVMIter(data_libsvm={str(p)!r}, data_shape=(12,), batch_size=64)\n"
        "second = [rows(b) for b in it]\n"
        "print('same', all((a == b).all() for a, b in zip(first, second)), L.numba_ready())\n")
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split("\n")
    assert "numba False" in out and "same True True" in out
