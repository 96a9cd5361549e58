"""LibSVMIter gives the same bits whichever parser reads a segment: the NumPy one (a fresh
process's first pass, kernels/_libsvm_np.py) or the Numba kernels, on awkward files whose
segments the NumPy parser declines in part, and the same errors."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError
from sparsym.kernels import libsvm as L

NF = 10**9 + 7  # indices up to 10 digits: beyond the NumPy parser's 7


def _plain(rng, n):
    return [f"{rng.randint(2)} " + " ".join(f"{c}:{rng.randint(10)}"
                                          for c in np.unique(rng.randint(0, 10**6, 5)))
            for _ in range(n)]


# each a few lines the NumPy parser declines (or parses in its general form), set among
# plain CTR-style lines
AWKWARD = {
    "long_tokens": ["1.2345678 123456789:0.000012345 5:1", "-12345678 3:123456789.5"],
    "scientific": ["1e-3 4:2.5E+2 7:-1e5", "2.5e1 1:1E0 9:.5e-2"],
    "decimals": ["0.5 3:-0.125 8:+2 9:.25", "-1 0:5. 4:007 6:-0"],
    "blank_lines": ["", "", "1 2:1", "", "   ", "0 3:1"],
    "crlf": ["1 2:1\r", "0 3:1 4:2\r"],
    "qid": ["1 qid:3 2:1 5:1", "0 qid:17 1:2"],
    "huge_indices": [f"1 {NF - 1}:1 0:2", f"0 {10**8}:3 {10**9}:4"],
    "unsorted": ["1 9:1 2:2 2:3 0:4", "0 5:1 5:2"],
    "tabs_comments": ["1\t2:1\t3:2 # a comment", "# only a comment", "0 4:1  # x"],
    "multi_label": ["1,2 3:1", "0:0.5 4:1"],
}


def _file(tmp_path, name, lines, trailing_newline=True):
    p = tmp_path / f"{name}.libsvm"
    text = "\n".join(lines) + ("\n" if trailing_newline else "")
    p.write_bytes(text.encode())
    return str(p)


def _batches(path, numpy_first, batch_size, chunk_bytes, monkeypatch, segment_bytes=None):
    """Every batch of one epoch, with the NumPy parser tried first or never (and chunks
    split in segments of ``segment_bytes``, parsed on threads, instead of 1 MB)."""
    with monkeypatch.context() as m:
        if segment_bytes:
            bounds = L._segment_bounds
            m.setattr(L, "_segment_bounds", lambda *a, **k: bounds(
                *a, **dict(k, min_bytes=segment_bytes)))
            m.setattr(L.config, "NUMBA_NUM_THREADS", 5)
        m.setattr(L, "numba_ready", lambda: not numpy_first)
        m.setattr(L, "_WARM_AFTER", float("inf"))
        before = L._np_bytes
        it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(NF,), batch_size=batch_size,
                              chunk_bytes=chunk_bytes, round_batch=False)
        out = []
        for b in it:
            x = b.data[0]
            out.append((x.indptr.asnumpy(), x.indices.asnumpy(),
                        x.data.asnumpy().view(np.uint32), b.label[0].asnumpy().view(np.uint32),
                        b.pad))
        return out, L._np_bytes - before


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("chunk_bytes,batch_size", [(1 << 20, 7), (97, 3), (4096, 64)])
def test_numpy_and_numba_paths_give_the_same_bits(tmp_path, monkeypatch, name, chunk_bytes,
                                                  batch_size):
    rng = np.random.RandomState(len(name))
    lines = _plain(rng, 150) + AWKWARD[name] + _plain(rng, 150) + AWKWARD[name]
    for trailing in (True, False):
        path = _file(tmp_path, name, lines + _plain(rng, 3), trailing)
        a, np_bytes = _batches(path, True, batch_size, chunk_bytes, monkeypatch)
        b, none = _batches(path, False, batch_size, chunk_bytes, monkeypatch)
        # in small chunks NumPy reads the plain ones (a whole small file, awkward lines
        # included, it may decline)
        assert none == 0 and (np_bytes > 0 or chunk_bytes == 1 << 20)
        assert len(a) == len(b) > 0
        for u, v in zip(a, b):
            for s, t in zip(u[:4], v[:4]):
                np.testing.assert_array_equal(s, t)
            assert u[4] == v[4]


def test_plain_file_is_read_by_numpy_alone_across_chunk_borders(tmp_path, monkeypatch):
    """Chunks cut lines anywhere (the reader carries the unfinished line over): every byte
    of a plain file goes through the NumPy parser and the batches match Numba's, also when
    a chunk is split in segments parsed on threads (each read in place, followed by the
    next segment's bytes rather than zeros)."""
    rng = np.random.RandomState(3)
    path = _file(tmp_path, "plain", _plain(rng, 2000), trailing_newline=False)
    size = len(open(path, "rb").read())
    for chunk_bytes, segment_bytes in ((61, None), (1000, None), (1 << 20, None),
                                       (1 << 20, 5000), (4000, 700)):
        a, np_bytes = _batches(path, True, 128, chunk_bytes, monkeypatch, segment_bytes)
        b, _ = _batches(path, False, 128, chunk_bytes, monkeypatch)
        assert np_bytes == size
        for u, v in zip(a, b):
            for s, t in zip(u[:4], v[:4]):
                np.testing.assert_array_equal(s, t)


@pytest.mark.parametrize("bad,msg", [
    ("1 3:x", r"bad.libsvm:152: .*value in '3:x' is not a number"),
    (f"1 {NF}:1", r"bad.libsvm:152: .*out of range"),
    ("1 2", r"bad.libsvm:152: .*missing ':'"),
    ("z 2:1", r"bad.libsvm:152: .*label 'z' is not a number"),
])
def test_bad_input_names_file_and_line_on_either_path(tmp_path, monkeypatch, bad, msg):
    rng = np.random.RandomState(0)
    path = str(tmp_path / "bad.libsvm")
    with open(path, "w") as f:
        f.write("\n".join(_plain(rng, 151) + [bad] + _plain(rng, 50)) + "\n")
    for numpy_first in (True, False):
        for chunk_bytes in (200, 1 << 20):
            with pytest.raises(FormatError, match=msg):
                _batches(path, numpy_first, 16, chunk_bytes, monkeypatch)
