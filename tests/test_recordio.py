"""mx.recordio: MXNet's .rec/.idx format, read and written byte for byte."""
import os
import pickle

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "mxnet")
MAGIC = (0xCED7230A).to_bytes(4, "little")


def payloads():
    """The records of tests/fixtures/make_mxnet_fixtures.py:recordio_payloads."""
    recs = [b"hello", b"", b"abcd", MAGIC, b"xy" + MAGIC + b"zz",
            b"abcd" + MAGIC + b"efgh" + MAGIC, MAGIC + MAGIC + b"q", bytes(range(256)) * 3]
    recs.append(mx.recordio.pack(mx.recordio.IRHeader(0, [1.5, 2.0, 3.0], 5, 6), b"payload"))
    recs.append(mx.recordio.pack(mx.recordio.IRHeader(0, 4.0, 7, 8), b"scalar"))
    return recs


def test_reads_mxnet_file():
    r = mx.recordio.MXIndexedRecordIO(os.path.join(FIX, "recordio.idx"),
                                      os.path.join(FIX, "recordio.rec"), "r")
    recs = payloads()
    assert r.keys == [3 * i for i in range(len(recs))]
    for k in reversed(r.keys):
        assert r.read_idx(k) == recs[k // 3]
    header, s = mx.recordio.unpack(r.read_idx(24))
    assert header.flag == 3 and header.id == 5 and header.id2 == 6 and s == b"payload"
    np.testing.assert_array_equal(header.label, [1.5, 2.0, 3.0])
    header, s = mx.recordio.unpack(r.read_idx(27))
    assert (header.flag, header.label, header.id, s) == (0, 4.0, 7, b"scalar")
    r.close()
    seq = mx.recordio.MXRecordIO(os.path.join(FIX, "recordio.rec"), "r")
    assert [seq.read() for _ in recs] == recs
    assert seq.read() is None
    seq.reset()
    assert seq.read() == recs[0]


def test_writes_mxnet_bytes(tmp_path):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, r in enumerate(payloads()):
        w.write_idx(3 * i, r)
    w.close()
    for name in ("recordio.rec", "recordio.idx"):
        with open(os.path.join(FIX, name), "rb") as f:
            want = f.read()
        with open(str(tmp_path / ("a" + os.path.splitext(name)[1])), "rb") as f:
            assert f.read() == want, name


def test_roundtrip_str_keys_and_del(tmp_path):
    idx, rec = str(tmp_path / "b.idx"), str(tmp_path / "b.rec")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w", key_type=str)
    for i in range(50):
        w.write_idx("k%d" % i, chr(i).encode() * i)
    del w  # MXNet's tests rely on the destructor closing (and flushing) the files
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r", key_type=str)
    assert r.keys == ["k%d" % i for i in range(50)]
    for i in (49, 3, 0, 17):
        assert r.read_idx("k%d" % i) == chr(i).encode() * i
    with pytest.raises(KeyError):
        r.read_idx("missing")


def test_pack_unpack_labels():
    rs = np.random.RandomState(1)
    for n in (1, 2, 7):
        label = rs.randint(1, 1000, size=n)
        h, s = mx.recordio.unpack(mx.recordio.pack((99, label, 3, 4), b"xyz"))
        assert h.flag == n and s == b"xyz" and (h.id, h.id2) == (3, 4)
        np.testing.assert_array_equal(h.label, label.astype(np.float32))
    h, s = mx.recordio.unpack(mx.recordio.pack(mx.recordio.IRHeader(5, 2.5, 1, 0), b""))
    assert h == mx.recordio.IRHeader(0, 2.5, 1, 0) and s == b""
    with pytest.raises(FormatError, match="24-byte header"):
        mx.recordio.unpack(b"123")


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="Invalid flag"):
        mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "a")
    with pytest.raises(mx.MXNetError, match="cannot open"):
        mx.recordio.MXRecordIO(str(tmp_path / "none.rec"), "r")
    w = mx.recordio.MXRecordIO(str(tmp_path / "c.rec"), "w")
    with pytest.raises(TypeError, match="bytes"):
        w.write("text")
    w.write(b"abcdefgh")
    w.close()
    w.close()
    with pytest.raises(RuntimeError, match="closed"):
        w.write(b"more")
    data = (tmp_path / "c.rec").read_bytes()
    (tmp_path / "t.rec").write_bytes(data[:12])
    with pytest.raises(FormatError, match="truncated"):
        mx.recordio.MXRecordIO(str(tmp_path / "t.rec"), "r").read()
    (tmp_path / "g.rec").write_bytes(b"garbage!garbage!")
    with pytest.raises(FormatError, match="bad magic"):
        mx.recordio.MXRecordIO(str(tmp_path / "g.rec"), "r").read()
    (tmp_path / "g.idx").write_text("0\tnot-a-number\n")
    with pytest.raises(FormatError, match="g.idx:1"):
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "g.idx"), str(tmp_path / "c.rec"), "r")


def test_pickle_reader_reopens(tmp_path):
    w = mx.recordio.MXRecordIO(str(tmp_path / "p.rec"), "w")
    w.write(b"one")
    w.write(b"two")
    with pytest.raises(mx.MXNetError, match="pickle"):
        pickle.dumps(w)
    w.close()
    r = mx.recordio.MXRecordIO(str(tmp_path / "p.rec"), "r")
    assert r.read() == b"one"
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read() == b"one" and r.read() == b"two"


def test_pack_img_roundtrip():
    pytest.importorskip("PIL")
    rs = np.random.RandomState(0)
    img = rs.randint(0, 256, size=(6, 5, 3)).astype(np.uint8)
    s = mx.recordio.pack_img(mx.recordio.IRHeader(0, 1.0, 2, 0), img, img_fmt=".png")
    h, out = mx.recordio.unpack_img(s)
    assert h.label == 1.0 and h.id == 2
    np.testing.assert_array_equal(out, img)  # png is lossless and keeps BGR order
    _, gray = mx.recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (6, 5)
    s = mx.recordio.pack_img((0, 0.0, 0, 0), img[:, :, 0], quality=90, img_fmt=".jpg")
    assert mx.recordio.unpack_img(s)[1].shape == (6, 5)
    with pytest.raises(NotImplementedError, match="bmp"):
        mx.recordio.pack_img((0, 0.0, 0, 0), img, img_fmt=".bmp")
