"""MXNet 1.x NDArray list format: round trips, MXNet-written fixtures, MXNet reading our files,
and corrupt input."""
import io
import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sparsym.base import DTypeError, FormatError
from sparsym.ndarray import serialization as ser
from sparsym.ndarray.serialization import dumps_raw, load_raw, save_raw
from sparsym.storage import CSR, RSP, dense_to_rsp

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")
MXPY = os.path.expanduser("~/mxref/bin/python")
DTYPES = [np.float32, np.float64, np.float16, np.uint8, np.int8, np.int32, np.int64]


def dense_to_csr(m):
    """Plain-numpy CSR (the shared kernels may not handle every dtype, e.g. float16)."""
    nz = m != 0
    indptr = np.concatenate([[0], np.cumsum(nz.sum(axis=1))]).astype(np.int64)
    return CSR(m[nz], np.nonzero(nz)[1].astype(np.int64), indptr, m.shape)


def todense(v):
    if isinstance(v, np.ndarray):
        return v
    out = np.zeros(v.shape, v.dtype)
    if isinstance(v, RSP):
        out[v.indices] = v.data
    else:
        rows = np.repeat(np.arange(v.shape[0]), np.diff(v.indptr))
        out[rows, v.indices] = v.data
    return out


def assert_same(a, b):
    """Exact equality of two raw values, storage, dtype and components included."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
        return
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.data, b.data)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.indices.dtype == np.int64
    if isinstance(a, CSR):
        np.testing.assert_array_equal(a.indptr, b.indptr)
        assert a.indptr.dtype == np.int64


def sample_values(dtype):
    rs = np.random.RandomState(0)
    dense = (rs.rand(3, 4) * 20).astype(dtype)
    m = (rs.rand(5, 7) * 20 + 1).astype(dtype) * (rs.rand(5, 7) < 0.3)
    m[1] = 0
    r = (rs.rand(6, 2) * 20 + 1).astype(dtype)
    r[[0, 2, 5]] = 0
    return {
        "dense": dense,
        "csr": dense_to_csr(m),
        "rsp": dense_to_rsp(r),
        "rsp3d": RSP((rs.rand(2, 2, 3) * 9).astype(dtype), np.array([1, 3], np.int64), (5, 2, 3)),
        "csr_empty": CSR(np.zeros(0, dtype), np.zeros(0, np.int64), np.zeros(4, np.int64), (3, 9)),
        "rsp_empty": RSP(np.zeros((0, 4), dtype), np.zeros(0, np.int64), (7, 4)),
        "zero_size": np.zeros((0, 3), dtype),
        "scalar": np.array(5, dtype),
        "vec": np.arange(5).astype(dtype),
    }


# ============================================================================ round trips
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_list_and_dict(tmp_path, dtype):
    vals = sample_values(dtype)
    f = tmp_path / "a.params"
    save_raw(str(f), list(vals.values()))
    got = load_raw(str(f))
    assert isinstance(got, list) and len(got) == len(vals)
    for a, b in zip(got, vals.values()):
        assert_same(a, b)
    save_raw(f, vals)                      # PathLike, overwrite
    got = load_raw(f)
    assert isinstance(got, dict) and list(got) == list(vals)
    for k in vals:
        assert_same(got[k], vals[k])


def test_round_trip_bytes_fileobj_and_bool():
    vals = {"b": np.array([True, False, True]), "x": np.float64(3.5), "ü名": np.ones((2, 2))}
    buf = io.BytesIO()
    save_raw(buf, vals)
    data = buf.getvalue()
    assert data == dumps_raw(vals)
    for src in (data, bytearray(data), memoryview(data), io.BytesIO(data)):
        got = load_raw(src)
        assert list(got) == ["b", "x", "ü名"]
        assert got["b"].dtype == np.bool_ and got["x"].shape == () and got["x"] == 3.5


def test_empty_list_and_single_value():
    assert load_raw(dumps_raw([])) == []
    assert load_raw(dumps_raw({})) == []          # like MXNet: no names -> list
    (x,) = load_raw(dumps_raw(np.arange(3)))
    np.testing.assert_array_equal(x, np.arange(3))


def test_non_contiguous_and_big_endian_inputs():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    b = np.arange(6, dtype=">i8").reshape(2, 3)
    ga, gb = load_raw(dumps_raw([a, b]))
    np.testing.assert_array_equal(ga, a)
    np.testing.assert_array_equal(gb, b)
    assert gb.dtype == np.int64 and gb.dtype.isnative


def test_loaded_arrays_are_writeable_and_independent():
    data = dumps_raw([np.ones(3, np.float32), dense_to_csr(np.eye(3))])
    a, c = load_raw(data)
    a[0] = 7
    c.data[0] = 9
    assert a.flags.writeable and c.data.flags.writeable


def test_header_layout_matches_spec():
    data = dumps_raw({"w": np.array([[1.5, 2.5]], np.float32)})
    assert struct.unpack_from("<QQQ", data) == (0x112, 0, 1)
    assert struct.unpack_from("<Ii", data, 24) == (ser.V2_MAGIC, 0)
    assert struct.unpack_from("<iqq", data, 32) == (2, 1, 2)
    assert struct.unpack_from("<iii", data, 52) == (1, 0, 0)
    assert np.frombuffer(data, np.float32, 2, 64).tolist() == [1.5, 2.5]
    assert struct.unpack_from("<QQ", data, 72) == (1, 1) and data[88:] == b"w"
    # 0-d arrays need numpy shape semantics: version 3 magic
    assert struct.unpack_from("<I", dumps_raw([np.float32(1)]), 24)[0] == ser.V3_MAGIC


def test_np_shape_versions():
    from sparsym.base import ShapeError, StorageError
    c = dense_to_csr(np.eye(2))
    v2 = dumps_raw([np.ones(2)])
    v3 = dumps_raw([np.ones(2)], np_shape=True)
    assert struct.unpack_from("<I", v2, 24)[0] == ser.V2_MAGIC
    assert struct.unpack_from("<I", v3, 24)[0] == ser.V3_MAGIC
    assert v2[28:] == v3[28:]
    with pytest.raises(ShapeError, match="0-d"):
        dumps_raw([np.float32(1)], np_shape=False)
    with pytest.raises(StorageError, match="default storage"):
        dumps_raw([np.ones(2), c], np_shape=True)
    # auto: all dense arrays version 3 as soon as one is 0-d; sparse stays version 2
    mixed = dumps_raw([np.ones(2), np.float32(1), c])
    assert struct.unpack_from("<I", mixed, 24)[0] == ser.V3_MAGIC
    a, s, c2 = load_raw(mixed)
    assert s.shape == () and a.shape == (2,)
    assert_same(c2, c)


def test_save_rejects_bad_input(tmp_path):
    with pytest.raises(DTypeError, match="complex64"):
        dumps_raw([np.zeros(2, np.complex64)])
    with pytest.raises(TypeError, match="keys must be str"):
        dumps_raw({1: np.zeros(2)})
    with pytest.raises(TypeError):
        dumps_raw([[1, 2]])
    with pytest.raises(ValueError, match="indptr"):
        dumps_raw([CSR(np.ones(2), np.zeros(2, np.int64), np.zeros(2, np.int64), (3, 3))])
    assert not list(tmp_path.iterdir())


def test_save_is_atomic(tmp_path, monkeypatch):
    f = tmp_path / "keep.params"
    save_raw(f, {"a": np.arange(4.0)})
    before = f.read_bytes()
    os.chmod(f, 0o640)
    with pytest.raises(DTypeError):
        save_raw(f, {"a": np.arange(4.0), "b": np.zeros(1, np.complex128)})
    real = ser._write_all

    def interrupted(write, data, np_shape=None):
        real(lambda b: write(bytes(b)[:3]), data, np_shape)
        raise KeyboardInterrupt

    monkeypatch.setattr(ser, "_write_all", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_raw(f, {"a": np.zeros(1000)})
    monkeypatch.undo()
    assert f.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.params"]
    save_raw(f, {"a": np.zeros(2)})
    assert os.stat(f).st_mode & 0o777 == 0o640          # replaced file keeps its mode
    np.testing.assert_array_equal(load_raw(f)["a"], np.zeros(2))


# ============================================================================ legacy versions
def _list_file(*arrays, names=()):
    out = struct.pack("<QQQ", 0x112, 0, len(arrays)) + b"".join(arrays)
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n)) + n.encode()
    return out


def test_legacy_versions_and_none_arrays():
    v1 = struct.pack("<Iiq", ser.V1_MAGIC, 1, 2) + struct.pack("<iii", 1, 0, 0)
    v1 += np.array([3, 4], np.float32).tobytes()
    v0 = struct.pack("<III", 2, 1, 2) + struct.pack("<iii", 1, 0, 1)
    v0 += np.array([[5, 6]], np.float64).tobytes()
    none_v2 = struct.pack("<Iii", ser.V2_MAGIC, 0, 0)
    none_v0 = struct.pack("<I", 0)
    got = load_raw(_list_file(v1, none_v2, v0, none_v0, names=("a", "b", "c", "d")))
    np.testing.assert_array_equal(got["a"], np.array([3, 4], np.float32))
    assert got["b"] is None and got["d"] is None
    np.testing.assert_array_equal(got["c"], np.array([[5, 6]]))
    assert got["c"].dtype == np.float64


def test_stale_storage_shape_is_ignored():
    # MXNet's tostype('csr') writes storage shape (0,) whatever nnz is; readers size the data
    # from the indices aux shape.
    arr = struct.pack("<Ii", ser.V2_MAGIC, 2) + struct.pack("<iq", 1, 0)
    arr += struct.pack("<iqq", 2, 2, 3) + struct.pack("<iii", 1, 0, 0)
    arr += struct.pack("<iiq", 6, 1, 3) + struct.pack("<iiq", 6, 1, 3)
    arr += np.array([1, 2, 3], np.float32).tobytes()
    arr += np.array([0, 1, 3], np.int64).tobytes() + np.array([1, 0, 2], np.int64).tobytes()
    (c,) = load_raw(_list_file(arr))
    np.testing.assert_array_equal(todense(c), [[0, 1, 0], [2, 0, 3]])


# ============================================================================ corrupt input
def small_file():
    return dumps_raw({"d": np.arange(3, dtype=np.float32),
                      "c": dense_to_csr(np.array([[0, 1.0], [2, 0]])),
                      "r": dense_to_rsp(np.array([[0, 0], [1, 2]], np.int64)),
                      "s": np.float16(1)})


def test_every_truncation_raises_format_error():
    data = small_file()
    load_raw(data)
    for cut in range(len(data)):
        with pytest.raises(FormatError):
            load_raw(data[:cut])


def test_truncation_message_names_field(tmp_path):
    data = small_file()
    f = tmp_path / "t.params"
    f.write_bytes(data[:60])
    with pytest.raises(FormatError, match=r"array 0 data: truncated .* expected 12 bytes, got"):
        load_raw(f)


def test_bad_magic_and_trailing_bytes():
    data = small_file()
    with pytest.raises(FormatError, match="bad magic"):
        load_raw(b"\x13" + data[1:])
    with pytest.raises(FormatError, match="array 0"):
        load_raw(data[:24] + b"\x00\x00\xff\xff" + data[28:])
    with pytest.raises(FormatError, match="trailing"):
        load_raw(data + b"\x00")
    with pytest.raises(FormatError):
        load_raw(b"")


def test_corrupt_bytes_never_raise_other_errors():
    data = small_file()
    for i in range(len(data)):
        for flip in (0xFF, 0x01, 0x80):
            bad = bytearray(data)
            bad[i] ^= flip
            try:
                load_raw(bytes(bad))
            except FormatError:
                pass


def test_corrupt_sparse_structure():
    c = CSR(np.ones(2), np.array([0, 5], np.int64), np.array([0, 1, 2], np.int64), (2, 3))
    data = bytearray(dumps_raw([c]))
    with pytest.raises(FormatError, match="column indices"):
        load_raw(bytes(data))
    r = RSP(np.ones((2, 2)), np.array([3, 1], np.int64), (4, 2))
    with pytest.raises(FormatError, match="sorted"):
        load_raw(dumps_raw([r]))


# ============================================================================ MXNet fixtures
def fixture(name):
    p = os.path.join(FIX, name)
    if not os.path.exists(p):
        pytest.skip(f"fixture {name} missing")
    return p


def expected_value(exp, prefix):
    stype = str(exp[f"{prefix}__stype"])
    dtype = np.dtype(str(exp[f"{prefix}__dtype"]))
    dense = exp[f"{prefix}__dense"]
    if stype == "csr":
        return CSR(exp[f"{prefix}__data"].astype(dtype), exp[f"{prefix}__indices"],
                   exp[f"{prefix}__indptr"], dense.shape)
    if stype == "row_sparse":
        return RSP(exp[f"{prefix}__data"].astype(dtype), exp[f"{prefix}__indices"], dense.shape)
    return dense.astype(dtype)


def test_mxnet_list_and_dict_files_load():
    exp = np.load(fixture("nd_expected.npz"))
    lst = load_raw(fixture("nd_list.params"))
    assert isinstance(lst, list) and len(lst) == int(exp["list__len"])
    for i, v in enumerate(lst):
        want = expected_value(exp, f"list{i}")
        assert_same(v, want)
        np.testing.assert_array_equal(todense(v), exp[f"list{i}__dense"])
    dct = load_raw(fixture("nd_dict.params"))
    assert list(dct) == [str(n) for n in exp["dict__names"]]
    stypes = set()
    for name, v in dct.items():
        assert_same(v, expected_value(exp, f"dict_{name}"))
        stypes.add((type(v).__name__, str(v.dtype)))
    assert {(t, d) for t in ("ndarray", "CSR", "RSP")
            for d in ("float32", "float64", "int64")} <= stypes


def test_mxnet_dtype_and_npshape_files_load():
    exp = np.load(fixture("nd_expected.npz"))
    got = load_raw(fixture("nd_dtypes.params"))
    assert len(got) == int(exp["dtypes__len"])
    for i, v in enumerate(got):
        assert_same(v, expected_value(exp, f"dtypes{i}"))
    assert dumps_raw(got) == open(fixture("nd_dtypes.params"), "rb").read()   # byte-exact
    got = load_raw(fixture("nd_npshape.params"))
    for k, v in got.items():
        assert_same(v, expected_value(exp, f"npshape_{k}"))
    assert got["scalar"].shape == () and got["empty"].shape == (0, 3)
    assert load_raw(fixture("nd_empty_list.params")) == []


def test_mxnet_files_rewrite_identically():
    for name in ("nd_list.params", "nd_dict.params"):
        first = load_raw(fixture(name))
        again = load_raw(dumps_raw(first))
        vals = first.values() if isinstance(first, dict) else first
        vals2 = again.values() if isinstance(again, dict) else again
        for a, b in zip(vals, vals2):
            assert_same(a, b)


def test_mxnet_checkpoint_params_load():
    params = load_raw(fixture("mlp_ckpt-0001.params"))
    assert set(params) == {"arg:fc1_weight", "arg:fc1_bias", "arg:fc2_weight", "arg:fc2_bias"}
    assert params["arg:fc1_weight"].shape == (8, 5)
    assert params["arg:fc2_weight"].dtype == np.float32
    # the stored predictions follow from the weights (plain numpy forward pass)
    pred = np.load(fixture("mlp_ckpt_predict.npz"))
    h = np.maximum(pred["data"] @ params["arg:fc1_weight"].T + params["arg:fc1_bias"], 0)
    z = h @ params["arg:fc2_weight"].T + params["arg:fc2_bias"]
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(p, pred["softmax_output"], rtol=1e-5, atol=1e-6)


# ============================================================================ MXNet reads ours
MX_READER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import mxnet as mx
    src, out = sys.argv[1], sys.argv[2]
    def describe(v):
        d = {"stype": v.stype, "dtype": np.dtype(v.dtype).name, "shape": list(v.shape),
             "dense": v.asnumpy().astype(np.float64).ravel().tolist()}
        if v.stype != "default":
            d["data"] = v.data.asnumpy().astype(np.float64).ravel().tolist()
            d["indices"] = v.indices.asnumpy().tolist()
        if v.stype == "csr":
            d["indptr"] = v.indptr.asnumpy().tolist()
        return d
    res = {}
    for name in ("list", "dict"):
        got = mx.nd.load(src + "." + name)
        if isinstance(got, dict):
            res[name] = {k: describe(v) for k, v in got.items()}
        else:
            res[name] = [describe(v) for v in got]
    with mx.util.np_shape(True):
        res["np"] = {k: describe(v) for k, v in mx.nd.load(src + ".np").items()}
    json.dump(res, open(out, "w"))
""")


def _describe(v):
    d = {"stype": {CSR: "csr", RSP: "row_sparse"}.get(type(v), "default"),
         "dtype": np.dtype(v.dtype).name, "shape": list(v.shape),
         "dense": todense(v).astype(np.float64).ravel().tolist()}
    if not isinstance(v, np.ndarray):
        d["data"] = v.data.astype(np.float64).ravel().tolist()
        d["indices"] = v.indices.tolist()
    if isinstance(v, CSR):
        d["indptr"] = v.indptr.tolist()
    return d


def test_mxnet_loads_our_files(tmp_path):
    if not os.path.exists(MXPY):
        pytest.skip("MXNet 1.9.1 oracle (~/mxref/bin/python) not installed")
    vals = {}
    for dt in (np.float32, np.float64, np.int64, np.float16, np.uint8, np.int8, np.int32):
        for k, v in sample_values(dt).items():
            if k != "scalar":
                vals[f"{k}_{np.dtype(dt).name}"] = v
    npvals = {"scalar": np.array(2.5, np.float32), "scalar_i": np.array(-3, np.int64),
              "zero": np.zeros((0, 2), np.float64), "vec": np.arange(3, dtype=np.float32)}
    base = str(tmp_path / "ours")
    save_raw(base + ".list", list(vals.values()))
    save_raw(base + ".dict", vals)
    save_raw(base + ".np", npvals)
    out = tmp_path / "mx.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    proc = subprocess.run([MXPY, "-c", MX_READER, base, str(out)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["list"] == [_describe(v) for v in vals.values()]
    assert res["dict"] == {k: _describe(v) for k, v in vals.items()}
    assert res["np"] == {k: _describe(v) for k, v in npvals.items()}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
