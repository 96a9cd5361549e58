"""LibSVMIter and CSVIter (batches probed on MXNet 1.9.1), PrefetchingIter, ResizeIter."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError, MXNetError

LINES = "1 0:1 2:2\n0 1:3\n1 3:4\n0 0:5 3:6\n1 2:7\n"
DENSE = np.array([[1, 0, 2, 0], [0, 3, 0, 0], [0, 0, 0, 4], [5, 0, 0, 6], [0, 0, 7, 0]],
                 np.float32)
LABELS = [1, 0, 1, 0, 1]


@pytest.fixture
def libsvm(tmp_path):
    p = tmp_path / "a.libsvm"
    p.write_text(LINES)
    return str(p)


def _epoch(it):
    out = []
    for b in it:
        assert b.data[0].stype == "csr"
        rows = [int(i) for i in b.index]
        np.testing.assert_array_equal(b.data[0].asnumpy(), DENSE[rows])
        out.append((rows, b.label[0].asnumpy().tolist(), b.pad))
    return out


@pytest.mark.parametrize("chunk_bytes", [1 << 20, 7])
def test_libsvm_round_batch_matches_mxnet(libsvm, chunk_bytes):
    it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), batch_size=2,
                          chunk_bytes=chunk_bytes)
    assert it.provide_data[0].shape == (2, 4) and it.provide_label[0].shape == (2,)
    assert _epoch(it) == [([0, 1], [1, 0], 0), ([2, 3], [1, 0], 0), ([4, 0], [1, 1], 1)]
    it.reset()
    # MXNet: the next epoch continues after the row used to complete the wrapped batch
    assert _epoch(it) == [([1, 2], [0, 1], 0), ([3, 4], [0, 1], 0)]
    it.reset()
    assert _epoch(it)[0][0] == [0, 1]


def test_libsvm_round_batch_false_pads_with_empty_rows(libsvm):
    it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), batch_size=3,
                          round_batch=False)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 1]
    last = batches[-1]
    np.testing.assert_array_equal(last.data[0].asnumpy(), np.vstack([DENSE[3:], np.zeros(4)]))
    assert last.data[0].shape == (3, 4)
    it.reset()
    assert [b.pad for b in it] == [0, 1]


def test_libsvm_label_file(libsvm, tmp_path):
    lp = tmp_path / "l.libsvm"
    lp.write_text("0 0:1\n0 1:1\n0 2:1\n0 0:2\n0 1:2\n")
    it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), label_libsvm=str(lp),
                          label_shape=(3,), batch_size=2)
    assert it.provide_label[0].shape == (2, 3)
    labs = [(b.label[0].stype, b.label[0].asnumpy().tolist(), b.pad) for b in it]
    assert labs == [("csr", [[1, 0, 0], [0, 1, 0]], 0), ("csr", [[0, 0, 1], [2, 0, 0]], 0),
                    ("csr", [[0, 2, 0], [1, 0, 0]], 1)]


def test_libsvm_label_file_row_mismatch(libsvm, tmp_path):
    lp = tmp_path / "l.libsvm"
    lp.write_text("0 0:1\n0 1:1\n")
    it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), label_libsvm=str(lp),
                          label_shape=(3,), batch_size=2)
    with pytest.raises(FormatError, match="different number of rows"):
        list(it)


def test_libsvm_parts_cover_file(libsvm):
    seen = []
    for p in range(2):
        it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), batch_size=2, num_parts=2,
                              part_index=p)
        got = [(b.data[0].asnumpy(), b.pad) for b in it]
        rows = [r for a, pad in got for r in a[:len(a) - pad]]
        seen.append(np.array(rows))
    # MXNet 1.9.1: part 0 holds rows 0-2 (the byte range), part 1 rows 3-4
    np.testing.assert_array_equal(seen[0], DENSE[:3])
    np.testing.assert_array_equal(seen[1], DENSE[3:])


@pytest.mark.parametrize("line,msg", [("1 0:1 x:2", "feature index"),
                                      ("1 0:1 9:2", "out of range"),
                                      ("1 0:abc", "value"),
                                      ("zz 0:1", "label")])
def test_libsvm_malformed_line_names_file_and_line(tmp_path, line, msg):
    p = tmp_path / "bad.libsvm"
    p.write_text("1 0:1\n0 1:2\n" + line + "\n1 2:1\n")
    it = mx.io.LibSVMIter(data_libsvm=str(p), data_shape=(4,), batch_size=2)
    with pytest.raises(FormatError, match=rf"bad.libsvm:3: .*{msg}"):
        list(it)


def test_libsvm_fewer_rows_than_batch(libsvm):
    it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), batch_size=8)
    assert [b.pad for b in it] == [3]  # 5 rows + 3 wrapped
    it = mx.io.LibSVMIter(data_libsvm=libsvm, data_shape=(4,), batch_size=12)
    with pytest.raises(MXNetError, match="bigger than batch size"):
        list(it)


def test_libsvm_streams_large_file_in_small_chunks(tmp_path):
    rng = np.random.RandomState(0)
    n, nf = 3000, 50
    dense = np.zeros((n, nf), np.float32)
    lines = []
    for i in range(n):
        cols = np.sort(rng.choice(nf, 3, replace=False))
        vals = rng.randint(1, 9, 3)
        dense[i, cols] = vals
        lines.append(f"{i % 2} " + " ".join(f"{c}:{v}" for c, v in zip(cols, vals)))
    p = tmp_path / "big.libsvm"
    p.write_text("\n".join(lines) + "\n")
    it = mx.io.LibSVMIter(data_libsvm=str(p), data_shape=(nf,), batch_size=256,
                          chunk_bytes=4096, dtype="float64")
    got = []
    for b in it:
        assert b.data[0].dtype == np.float64
        a = b.data[0].asnumpy()
        got.append(a[:len(a) - b.pad])
    np.testing.assert_array_equal(np.vstack(got), dense)


# --------------------------------------------------------------------------- CSV
@pytest.fixture
def csv(tmp_path):
    d = tmp_path / "d.csv"
    lab = tmp_path / "l.csv"
    np.savetxt(d, np.arange(15).reshape(5, 3), delimiter=",", fmt="%d")
    np.savetxt(lab, np.arange(5), delimiter=",", fmt="%d")
    return str(d), str(lab)


def test_csv_round_batch_matches_mxnet(csv):
    it = mx.io.CSVIter(data_csv=csv[0], data_shape=(3,), label_csv=csv[1], batch_size=2)
    assert it.provide_data[0].shape == (2, 3) and it.provide_label[0].shape == (2,)
    ep = [(b.label[0].asnumpy().tolist(), b.pad) for b in it]
    assert ep == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]
    it.reset()
    assert [(b.label[0].asnumpy().tolist(), b.pad) for b in it] == [([1, 2], 0), ([3, 4], 0)]


def test_csv_round_batch_false_and_shapes(csv):
    it = mx.io.CSVIter(data_csv=csv[0], data_shape=(1, 3), batch_size=2, round_batch=False)
    batches = list(it)
    assert batches[0].data[0].shape == (2, 1, 3)
    assert batches[-1].pad == 1
    np.testing.assert_array_equal(batches[-1].data[0].asnumpy()[0, 0], [12, 13, 14])
    np.testing.assert_array_equal(batches[0].label[0].asnumpy(), [0, 0])  # no label file


def test_csv_malformed(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("1,2,3\n4,5,6\n7,x,9\n")
    with pytest.raises(FormatError, match=r"bad.csv:3: .*'x' is not a number"):
        list(mx.io.CSVIter(data_csv=str(p), data_shape=(3,), batch_size=1))
    p.write_text("1,2,3\n4,5\n")
    with pytest.raises(FormatError, match=r"bad.csv:2: .*expected 3 values"):
        list(mx.io.CSVIter(data_csv=str(p), data_shape=(3,), batch_size=1))


@pytest.mark.parametrize("prefetch", [0, 2])
def test_csv_chunks_segments_and_prefetch_give_the_file_in_order(tmp_path, prefetch):
    rng = np.random.RandomState(3)
    x = np.round(rng.randn(3001, 4), 3).astype(np.float32)
    y = rng.randint(0, 5, (3001, 2)).astype(np.float32)
    d, lab = tmp_path / "d.csv", tmp_path / "l.csv"
    np.savetxt(d, x, delimiter=",", fmt="%.3f")
    np.savetxt(lab, y, delimiter=",", fmt="%d")
    it = mx.io.CSVIter(data_csv=str(d), data_shape=(2, 2), label_csv=str(lab),
                       label_shape=(2,), batch_size=128, chunk_bytes=5000,
                       prefetch_buffer=prefetch)
    got_x, got_y = [], []
    for b in it:
        n = 128 - b.pad
        got_x.append(b.data[0].asnumpy()[:n].reshape(n, 4))
        got_y.append(b.label[0].asnumpy()[:n])
    np.testing.assert_array_equal(np.vstack(got_x), x)
    np.testing.assert_array_equal(np.vstack(got_y), y)
    it = mx.io.CSVIter(data_csv=str(lab), data_shape=(2,), batch_size=1000, dtype="int32",
                       prefetch_buffer=prefetch)
    b = next(iter(it))
    assert b.data[0].dtype == np.int32
    np.testing.assert_array_equal(b.data[0].asnumpy(), y[:1000])


# --------------------------------------------------------------------------- wrappers
def test_resize_iter():
    base = mx.io.NDArrayIter(np.arange(6.0), batch_size=2)
    it = mx.io.ResizeIter(base, 5)
    got = [b.data[0].asnumpy().tolist() for b in it]
    assert got == [[0, 1], [2, 3], [4, 5], [0, 1], [2, 3]]
    it.reset()
    assert len(list(it)) == 5
    it = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(6.0), batch_size=2), 2,
                          reset_internal=False)
    list(it)
    it.reset()
    assert [b.data[0].asnumpy().tolist() for b in it] == [[4, 5], [0, 1]]


def test_prefetching_iter_merges_and_renames():
    a = mx.io.NDArrayIter(np.arange(6.0), np.arange(6.0) * 10, batch_size=2)
    b = mx.io.NDArrayIter(np.arange(6.0) + 100, batch_size=2, data_name="other")
    it = mx.io.PrefetchingIter([a, b], rename_data=[{"data": "x"}, {"other": "y"}])
    assert [d.name for d in it.provide_data] == ["x", "y"]
    for _ in range(2):
        got = [(bt.data[0].asnumpy().tolist(), bt.data[1].asnumpy().tolist(),
                bt.label[0].asnumpy().tolist()) for bt in it]
        assert got[1] == ([2, 3], [102, 103], [20, 30]) and len(got) == 3
        it.reset()
    it.close()


def test_prefetching_iter_reraises_errors(tmp_path):
    p = tmp_path / "bad.libsvm"
    p.write_text("1 0:1\nbad\n")
    it = mx.io.PrefetchingIter(mx.io.LibSVMIter(data_libsvm=str(p), data_shape=(4,),
                                                batch_size=1))
    with pytest.raises(FormatError, match="bad.libsvm:2"):
        list(it)
    it.close()


def test_libsvm_prefetch_matches_on_demand_and_survives_resets(tmp_path):
    rng = np.random.RandomState(1)
    lines = [f"{i % 2} " + " ".join(f"{c}:{i + 1}" for c in sorted(rng.choice(40, 3, False)))
             for i in range(500)]
    p = tmp_path / "p.libsvm"
    p.write_text("\n".join(lines) + "\n")
    kw = dict(data_libsvm=str(p), data_shape=(40,), batch_size=64, chunk_bytes=256)
    a = mx.io.LibSVMIter(prefetch_buffer=0, **kw)
    b = mx.io.LibSVMIter(prefetch_buffer=2, **kw)
    for _epoch in range(3):
        ga = [(x.data[0].asnumpy(), x.label[0].asnumpy(), x.pad) for x in a]
        gb = [(x.data[0].asnumpy(), x.label[0].asnumpy(), x.pad) for x in b]
        assert len(ga) == len(gb) > 5
        for (da, la, pa), (db, lb, pb) in zip(ga, gb):
            np.testing.assert_array_equal(da, db)
            np.testing.assert_array_equal(la, lb)
            assert pa == pb
        a.reset()
        b.reset()
    # a reset in the middle of an epoch stops the reader thread and starts over
    c = mx.io.LibSVMIter(prefetch_buffer=0, **kw)
    d = mx.io.LibSVMIter(prefetch_buffer=1, **kw)
    next(d)
    next(d)
    d.reset()
    gc_ = [x.data[0].asnumpy() for x in c]
    gd = [x.data[0].asnumpy() for x in d]
    assert len(gc_) == len(gd)
    for x, y in zip(gc_, gd):
        np.testing.assert_array_equal(x, y)
