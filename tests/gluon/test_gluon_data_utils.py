"""gluon.data (datasets, samplers, DataLoader) and gluon.utils."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import gluon
from sparsym.gluon.data import ArrayDataset, BatchSampler, DataLoader, SequentialSampler


def test_dataset_views():
    ds = gluon.data.SimpleDataset(list(range(10)))
    assert list(ds.filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert [len(ds.shard(3, i)) for i in range(3)] == [4, 3, 3]
    assert list(ds.take(2)) == [0, 1]
    assert list(ds.transform(lambda x: x * 2, lazy=False))[:3] == [0, 2, 4]
    pairs = ArrayDataset(np.arange(4), mx.nd.arange(4)).transform_first(lambda x: -x)
    assert pairs[2][0] == -2


def test_batch_sampler_modes():
    s = SequentialSampler(5)
    assert list(BatchSampler(s, 2, "keep")) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(s, 2, "discard")) == [[0, 1], [2, 3]]
    roll = BatchSampler(s, 2, "rollover")
    assert list(roll) == [[0, 1], [2, 3]]
    assert list(roll)[0] == [4, 0]
    with pytest.raises(ValueError, match="last_batch"):
        list(BatchSampler(s, 2, "bad"))


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_keeps_csr_batches(num_workers):
    dense = np.random.uniform(size=(7, 6)) * (np.random.uniform(size=(7, 6)) > 0.6)
    csr = mx.nd.array(dense).tostype("csr")
    loader = DataLoader(ArrayDataset(csr, np.arange(7)), batch_size=3,
                        num_workers=num_workers)
    batches = list(loader)
    assert len(batches) == len(loader) == 3
    data, label = batches[0]
    assert data.stype == "csr" and data.shape == (3, 6)
    np.testing.assert_allclose(data.asnumpy(), dense[:3])
    assert label.asnumpy().tolist() == [0, 1, 2]


def test_dataloader_argument_errors():
    with pytest.raises(ValueError, match="batch_size must be specified"):
        DataLoader(np.arange(4))
    with pytest.raises(ValueError, match="must not be specified"):
        DataLoader(np.arange(4), batch_size=2, batch_sampler=BatchSampler(
            SequentialSampler(4), 2))


def test_split_and_clip():
    x = mx.nd.arange(10).reshape((5, 2))
    parts = gluon.utils.split_and_load(x, [mx.cpu(0), mx.cpu(1)], even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)] and parts[1].context == mx.cpu(1)
    with pytest.raises(ValueError, match="evenly split"):
        gluon.utils.split_data(x, 2)
    arrays = [mx.nd.ones((2,)) * 3, mx.nd.ones((2,)) * 4]
    norm = gluon.utils.clip_global_norm(arrays, 1.0)
    assert norm == pytest.approx(np.sqrt(50))
    total = np.sqrt(sum((a.asnumpy() ** 2).sum() for a in arrays))
    assert total == pytest.approx(1.0, rel=1e-5)


def test_download_offline_raises_clear_error(tmp_path, monkeypatch):
    import requests

    def refuse(*args, **kwargs):
        raise requests.exceptions.ConnectionError("no network")

    monkeypatch.setattr(requests, "get", refuse)
    with pytest.raises(gluon.utils.DownloadError, match="failed after 2 attempts"):
        gluon.utils.download("http://example.invalid/x.bin", path=str(tmp_path), retries=1)


def test_check_sha1(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes(b"abc")
    assert gluon.utils.check_sha1(str(f), "a9993e364706816aba3e25717850c26c9cd0d89d")
    assert not gluon.utils.check_sha1(str(f), "0" * 40)


def test_dataloader_v1_batches_like_dataloader():
    from sparsym.gluon.data.dataloader import DataLoaderV1
    ds = mx.gluon.data.ArrayDataset(np.arange(10).reshape(5, 2).astype("float32"))
    got = [b.asnumpy().tolist() for b in DataLoaderV1(ds, batch_size=2, last_batch="discard")]
    assert got == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]


def test_record_file_dataset_reads_records_and_refuses_foreign_files(tmp_path):
    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(3):
        w.write_idx(i, b"r%d" % i)
    w.close()
    ds = mx.gluon.data.RecordFileDataset(rec)
    assert len(ds) == 3 and [ds[i] for i in range(3)] == [b"r0", b"r1", b"r2"]
    bad = tmp_path / "b.rec"
    bad.write_bytes(b"garbage" * 10)
    (tmp_path / "b.idx").write_text("0\t0\n")
    with pytest.raises(mx.base.FormatError, match="Invalid RecordIO File"):
        mx.gluon.data.RecordFileDataset(str(bad))[0]
    assert issubclass(mx.gluon.data.vision.ImageRecordDataset, mx.gluon.data.RecordFileDataset)
