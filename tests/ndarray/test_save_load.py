"""nd.save / nd.load through the public API: MXNet 1.9.1 files load identically (dense,
csr, row_sparse; lists and dicts), our files load in MXNet, corrupt files raise."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")
MXPY = os.path.expanduser("~/mxref/bin/python")
EXP = np.load(os.path.join(FIX, "nd_expected.npz"))


def _check(arr, prefix):
    assert arr.stype == str(EXP[f"{prefix}__stype"])
    assert np.dtype(arr.dtype).name == str(EXP[f"{prefix}__dtype"])
    np.testing.assert_array_equal(arr.asnumpy(), EXP[f"{prefix}__dense"])
    if arr.stype != "default":
        np.testing.assert_array_equal(arr.data.asnumpy(), EXP[f"{prefix}__data"])
        np.testing.assert_array_equal(arr.indices.asnumpy(), EXP[f"{prefix}__indices"])
        if arr.stype == "csr":
            np.testing.assert_array_equal(arr.indptr.asnumpy(), EXP[f"{prefix}__indptr"])
        arr.check_format()


def test_mxnet_list_file_loads_identically():
    arrs = mx.nd.load(os.path.join(FIX, "nd_list.params"))
    assert isinstance(arrs, list) and len(arrs) == int(EXP["list__len"])
    for i, a in enumerate(arrs):
        _check(a, f"list{i}")
    assert {a.stype for a in arrs} == {"default", "csr", "row_sparse"}


def test_mxnet_dict_file_loads_identically():
    arrs = mx.nd.load(os.path.join(FIX, "nd_dict.params"))
    assert list(arrs) == [str(n) for n in EXP["dict__names"]]
    for name, a in arrs.items():
        _check(a, f"dict_{name}")


@pytest.mark.parametrize("stype", ["default", "csr", "row_sparse"])
def test_round_trip_every_stype(tmp_path, stype):
    rs = np.random.RandomState(0)
    x = (rs.rand(6, 5) * (rs.rand(6, 5) < 0.4)).astype(np.float32)
    a = mx.nd.array(x).tostype(stype)
    f = str(tmp_path / "a.params")
    mx.nd.save(f, {"a": a, "b": mx.nd.ones((2,))})
    back = mx.nd.load(f)
    assert back["a"].stype == stype
    np.testing.assert_array_equal(back["a"].asnumpy(), x)
    mx.nd.save(f, [a])
    assert mx.nd.load(f)[0].stype == stype
    mx.nd.save(f, a)
    np.testing.assert_array_equal(mx.nd.load(f)[0].asnumpy(), x)


def test_save_rejects_bad_input_and_load_rejects_corrupt_files(tmp_path):
    f = str(tmp_path / "a.params")
    with pytest.raises(TypeError):
        mx.nd.save(f, {"a": np.ones(2)})
    mx.nd.save(f, [mx.nd.sparse.csr_matrix(np.eye(3, dtype=np.float32))])
    raw = open(f, "rb").read()
    open(f, "wb").write(raw[:-7])
    with pytest.raises(FormatError):
        mx.nd.load(f)


@pytest.mark.skipif(not os.path.exists(MXPY), reason="MXNet oracle not installed")
def test_mxnet_loads_files_written_here(tmp_path):
    rs = np.random.RandomState(3)
    x = (rs.rand(5, 4) * (rs.rand(5, 4) < 0.5)).astype(np.float32)
    f = str(tmp_path / "ours.params")
    mx.nd.save(f, {"d": mx.nd.array(x), "c": mx.nd.array(x).tostype("csr"),
                   "r": mx.nd.array(x).tostype("row_sparse")})
    code = textwrap.dedent(f"""
        import mxnet as mx, numpy as np
        a = mx.nd.load({f!r})
        print(a["d"].stype, a["c"].stype, a["r"].stype)
        np.save({str(tmp_path / 'back.npy')!r}, np.stack([a[k].asnumpy() for k in "dcr"]))
    """)
    out = subprocess.run([MXPY, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["default", "csr", "row_sparse"]
    back = np.load(tmp_path / "back.npy")
    for i in range(3):
        np.testing.assert_array_equal(back[i], x)
