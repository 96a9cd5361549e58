"""NDArrayIter against hand-checked batches (MXNet 1.9.1's, probed) for every mode, dense
and CSR (CSR batches stay CSR, in every mode)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparsym as mx
from sparsym.base import MXNetError, ShapeError

X = np.arange(10, dtype=np.float32).reshape(10, 1)

# (batch rows, pad) per epoch; 10 rows, batch 4 -- what MXNet 1.9.1 yields
EXPECTED = {
    "pad": [[([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0), ([8, 9, 0, 1], 2)]] * 3,
    "discard": [[([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]] * 3,
    "roll_over": [[([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)],
                  [([8, 9, 0, 1], 2), ([2, 3, 4, 5], 0), ([6, 7, 8, 9], 0)],
                  [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]],
}


def _csr_of_rows(n=10, width=3):
    """Row i holds value i at column i % width (row 0 is empty)."""
    dense = np.zeros((n, width), np.float32)
    for i in range(n):
        dense[i, i % width] = i
    return dense


def _rows_of(batch_data):
    a = batch_data.asnumpy()
    return [int(r.sum()) for r in a]


@pytest.mark.parametrize("mode", sorted(EXPECTED))
@pytest.mark.parametrize("kind", ["dense", "csr", "scipy"])
def test_last_batch_handle_modes(mode, kind):
    dense = _csr_of_rows()
    if kind == "dense":
        data = dense
    elif kind == "csr":
        data = mx.nd.array(dense).tostype("csr")
    else:
        data = sp.csr_matrix(dense)
    it = mx.io.NDArrayIter(data, np.arange(10), batch_size=4, last_batch_handle=mode)
    for epoch in EXPECTED[mode]:
        got = []
        for b in it:
            stype = b.data[0].stype
            assert stype == ("default" if kind == "dense" else "csr")
            assert b.data[0].shape == (4, 3)
            assert _rows_of(b.data[0]) == b.label[0].asnumpy().astype(int).tolist()
            got.append((_rows_of(b.data[0]), b.pad))
        assert got == epoch
        it.reset()


def test_provide_data_label_and_float32():
    it = mx.io.NDArrayIter(np.arange(10).reshape(10, 1), batch_size=4)
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (4, 1)
    assert np.dtype(it.provide_data[0].dtype) == np.float32  # MXNet: numpy -> float32
    assert it.provide_label == []
    b = next(it)
    assert b.data[0].dtype == np.float32 and b.label == []


def test_dict_and_list_inputs():
    it = mx.io.NDArrayIter({"a": np.zeros((5, 2)), "b": np.ones((5, 3))}, {"l": np.zeros(5)},
                           batch_size=2)
    assert [(d.name, d.shape) for d in it.provide_data] == [("a", (2, 2)), ("b", (2, 3))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("l", (2,))]
    it = mx.io.NDArrayIter([np.zeros((5, 2)), np.ones((5, 3))], batch_size=2)
    assert [d.name for d in it.provide_data] == ["_0_data", "_1_data"]
    b = next(it)
    np.testing.assert_array_equal(b.data[1].asnumpy(), np.ones((2, 3)))


def test_shuffle_keeps_pairs_and_reshuffles():
    data = np.arange(20, dtype=np.float32).reshape(20, 1)
    it = mx.io.NDArrayIter(data, np.arange(20), batch_size=5, shuffle=True)
    orders = []
    for _ in range(2):
        rows = []
        for b in it:
            np.testing.assert_array_equal(b.data[0].asnumpy().ravel(), b.label[0].asnumpy())
            rows += b.label[0].asnumpy().astype(int).tolist()
        assert sorted(rows) == list(range(20))
        orders.append(rows)
        it.reset()
    assert orders[0] != list(range(20)) and orders[0] != orders[1]


def test_shuffle_csr():
    dense = _csr_of_rows(12)
    it = mx.io.NDArrayIter(mx.nd.array(dense).tostype("csr"), np.arange(12), batch_size=4,
                           shuffle=True, last_batch_handle="discard")
    for b in it:
        assert b.data[0].stype == "csr"
        np.testing.assert_array_equal(b.data[0].asnumpy(),
                                      dense[b.label[0].asnumpy().astype(int)])


def test_batch_larger_than_data():
    it = mx.io.NDArrayIter(np.arange(5), batch_size=12, last_batch_handle="pad")
    (b,) = list(it)
    assert b.data[0].asnumpy().tolist() == [0, 1, 2, 3, 4] * 2 + [0, 1] and b.pad == 7
    it = mx.io.NDArrayIter(np.arange(5), batch_size=10, last_batch_handle="roll_over")
    epochs = []
    for _ in range(3):
        epochs.append([b.pad for b in it])
        it.reset()
    assert epochs == [[], [5], []]  # MXNet 1.9.1
    with pytest.raises(MXNetError, match="batch_size needs to be smaller"):
        mx.io.NDArrayIter(np.arange(5), batch_size=10, last_batch_handle="discard")


def test_hard_reset_drops_roll_over():
    it = mx.io.NDArrayIter(X, batch_size=4, last_batch_handle="roll_over")
    list(it)
    it.hard_reset()
    assert [b.pad for b in it] == [0, 0]


def test_errors():
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.io.NDArrayIter(X, batch_size=4, last_batch_handle="wrap")
    with pytest.raises(ShapeError, match="as many rows as the first data array"):
        mx.io.NDArrayIter(X, np.arange(9), batch_size=4)
    with pytest.raises(MXNetError, match="row_sparse"):
        mx.io.NDArrayIter(mx.nd.array(X).tostype("row_sparse"), batch_size=4)


def test_longer_label_reads_its_first_rows():
    # MXNet reads the first num_data rows of a longer array (test_loss's sample weights)
    it = mx.io.NDArrayIter(np.ones((10, 3)), {"label": np.arange(20), "w": np.arange(20)},
                           batch_size=4)
    assert [d.shape for d in it.provide_label] == [(4,), (4,)]
    batches = [b.label[0].asnumpy().tolist() for b in it]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_databatch_and_datadesc():
    d = mx.io.DataDesc("x", (4, 3), np.float64, "TNC")
    assert d.get_batch_axis(d.layout) == 1 and d.dtype == np.float64
    assert mx.io.DataDesc.get_list([("a", (1, 2))], [("a", np.int32)])[0].dtype == np.int32
    b = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))], pad=1, bucket_key=5)
    assert "data shapes: [(2, 3)]" in str(b) and b.bucket_key == 5
    with pytest.raises(MXNetError, match="Data must be list"):
        mx.io.DataBatch(mx.nd.ones((2,)))


def test_provide_data_reports_numpy_scalar_type():
    # MXNet's descriptors carry the numpy scalar type: printing shows <class 'numpy.float32'>
    it = mx.io.NDArrayIter(X, np.zeros(10), batch_size=4)
    assert it.provide_data[0].dtype is np.float32
    assert repr(it.provide_label[0]) == ("DataDesc[softmax_label,(4,),<class 'numpy.float32'>,"
                                         "NCHW]")
    it = mx.io.NDArrayIter({"a": mx.nd.zeros((4, 2), dtype="float16")}, batch_size=2)
    assert it.provide_data[0].dtype is np.float16
