"""MXDataIter protocol of the file iterators, and the image iterators' clear refusal."""
import numpy as np
import pytest

import sparsym as mx


def _csv(tmp_path, rows=5):
    p = tmp_path / "d.csv"
    p.write_text("".join("%d,%d\n" % (i, i) for i in range(rows)))
    return str(p)


def test_getdata_is_one_array_and_label_dtype(tmp_path):
    p = _csv(tmp_path)
    it = mx.io.CSVIter(data_csv=p, data_shape=(2,), batch_size=3, dtype="int32")
    assert isinstance(it, mx.io.MXDataIter)
    assert it.iter_next()
    assert isinstance(it.getdata(), mx.nd.NDArray) and it.getdata().dtype == np.int32
    # MXNet: a CSVIter's label has the data's dtype, also when it is all zeros
    assert it.getlabel().dtype == np.int32 and it.provide_label[0].dtype is np.int32
    assert it.provide_data[0].dtype is np.int32
    it = mx.io.CSVIter(data_csv=p, data_shape=(2,), label_csv=p, label_shape=(2,),
                       batch_size=3, dtype="int64")
    b = it.next()
    assert b.label[0].dtype == np.int64 and b.label[0].shape == (3, 2)


def test_debug_skip_load(tmp_path):
    it = mx.io.CSVIter(data_csv=_csv(tmp_path), data_shape=(2,), batch_size=2)
    it.debug_skip_load()
    first = it.next()
    for _ in range(5):
        assert it.next() is first


def test_mxdataiter_handle_refused():
    with pytest.raises(NotImplementedError, match="C\\+\\+ iterator handle"):
        mx.io.MXDataIter(object())


def test_image_det_iter_refused_and_missing_files_named():
    with pytest.raises(NotImplementedError, match="mx.io.ImageDetRecordIter is not supported"):
        mx.io.ImageDetRecordIter(path_imgrec="x.rec", data_shape=(3, 4, 4), batch_size=2)
    for name in ("ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter",
                 "ImageRecordInt8Iter"):
        with pytest.raises(mx.MXNetError, match="nowhere.rec"):
            getattr(mx.io, name)(path_imgrec="nowhere.rec", data_shape=(3, 4, 4), batch_size=2)


def test_io_utils():
    data = mx.io.utils._init_data(np.arange(6).reshape(3, 2), False, "data")
    assert [k for k, _ in data] == ["data"]
    assert mx.io.utils._has_instance(data, np.ndarray)
    rows = mx.io.utils._getdata_by_idx(data, np.array([2, 0]))
    np.testing.assert_array_equal(rows[0][1], [[4, 5], [0, 1]])
