"""CSRNDArray / RowSparseNDArray API parity with MXNet 1.9.1 (inventory section 0)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import sparsym as mx
from sparsym.base import ShapeError, StorageError
from sparsym.test_utils import assert_almost_equal, rand_ndarray

nd = mx.nd
STYPES = ("default", "row_sparse", "csr")


def _dense(seed=0, shape=(5, 7)):
    rs = np.random.RandomState(seed)
    x = (rs.rand(*shape) * (rs.rand(*shape) < 0.4)).astype(np.float32)
    x[1] = 0
    return x


def test_csr_parts_asscipy_and_copies():
    x = _dense()
    a = nd.sparse.csr_matrix(x)
    s = sp.csr_matrix(x)
    np.testing.assert_array_equal(a.data.asnumpy(), s.data)
    np.testing.assert_array_equal(a.indices.asnumpy(), s.indices)
    np.testing.assert_array_equal(a.indptr.asnumpy(), s.indptr)
    assert a.indices.dtype == np.int64 and a.indptr.dtype == np.int64
    m = a.asscipy()
    assert (m != s).nnz == 0
    assert np.shares_memory(m.data, a._raw.data)  # zero-copy
    d = a.data
    d[:] = 0  # MXNet returns copies: the array is untouched
    np.testing.assert_array_equal(a.asnumpy(), x)


def test_rsp_parts_and_retain():
    x = _dense()
    r = nd.sparse.row_sparse_array(x)
    rows = np.flatnonzero(x.any(axis=1))
    np.testing.assert_array_equal(r.indices.asnumpy(), rows)
    np.testing.assert_array_equal(r.data.asnumpy(), x[rows])
    kept = r.retain(nd.array([0, 3, 6], dtype="int64"))
    assert kept.stype == "row_sparse"
    want = np.zeros_like(x)
    want[[0, 3]] = x[[0, 3]]
    np.testing.assert_array_equal(kept.asnumpy(), want)
    np.testing.assert_array_equal(r.retain([3]).asnumpy()[3], x[3])


@pytest.mark.parametrize("src", STYPES)
@pytest.mark.parametrize("dst", STYPES)
def test_tostype_every_direction(src, dst):
    x = _dense()
    a = nd.array(x).tostype(src)
    b = a.tostype(dst)
    assert b.stype == dst
    np.testing.assert_array_equal(b.asnumpy(), x)
    if dst != "default":
        b.check_format()


def test_copy_copyto_context_and_astype():
    x = _dense()
    for s in STYPES:
        a = nd.array(x).tostype(s)
        c = a.copy()
        assert c.stype == s and c is not a
        np.testing.assert_array_equal(c.asnumpy(), x)
        moved = a.copyto(mx.cpu(1))
        assert moved.context == mx.cpu(1) and moved.stype == s
        assert a.as_in_context(mx.cpu(0)) is a
        for target in STYPES:  # copyto an NDArray converts to the target's stype
            t = nd.zeros(x.shape, stype=target)
            a.copyto(t)
            assert t.stype == target
            np.testing.assert_array_equal(t.asnumpy(), x)
        f64 = a.astype("float64")
        assert f64.dtype == np.float64 and f64.stype == s
        assert a.astype("float32", copy=False) is a
    with pytest.raises(ShapeError):
        nd.sparse.csr_matrix(x).copyto(nd.zeros((2, 2), stype="csr"))


def test_check_format_full_check():
    a = nd.sparse.csr_matrix(_dense())
    a.check_format()
    bad = a.copy()
    bad._raw.indices[0] = 100
    bad.check_format(full_check=False)  # lengths only
    with pytest.raises(StorageError, match="column indices"):
        bad.check_format()
    uns = nd.sparse.csr_matrix(np.eye(3, dtype=np.float32) + np.eye(3, k=1, dtype=np.float32))
    uns._raw.indices[:2] = uns._raw.indices[:2][::-1]
    with pytest.raises(StorageError, match="row 0 must be sorted"):
        uns.check_format()
    r = nd.sparse.row_sparse_array(_dense())
    r._raw.indices[:] = r._raw.indices[::-1].copy()
    with pytest.raises(StorageError, match="sorted and unique"):
        r.check_format()


def test_setitem_and_slicing():
    x = _dense()
    a = nd.sparse.csr_matrix(x)
    np.testing.assert_array_equal(a[1:4].asnumpy(), x[1:4])
    assert a[1:4].stype == "csr"
    np.testing.assert_array_equal(a[-1].asnumpy(), x[-1:])
    np.testing.assert_array_equal(a[2].asnumpy(), x[2:3])
    with pytest.raises(ValueError):
        a[::2]
    with pytest.raises(IndexError):
        a[9]
    a[:] = nd.ones(x.shape)
    assert a.stype == "csr" and a.asnumpy().sum() == x.size
    r = nd.sparse.zeros("row_sparse", x.shape)
    r[:] = nd.array(x).tostype("csr")
    assert r.stype == "row_sparse"
    np.testing.assert_array_equal(r.asnumpy(), x)
    r[:] = 2.0
    assert (r.asnumpy() == 2).all()
    with pytest.raises(StorageError):
        r[1] = 3
    d = nd.zeros(x.shape)
    d[1:3, 2] = 5
    d[0] = nd.sparse.csr_matrix(x)[0:1].tostype("default").reshape((7,))
    assert d.asnumpy()[1, 2] == 5
    np.testing.assert_array_equal(d.asnumpy()[0], x[0])
    d[:] = nd.sparse.row_sparse_array(x)
    np.testing.assert_array_equal(d.asnumpy(), x)


def test_nd_sparse_constructors_and_arithmetic():
    z = nd.sparse.zeros("csr", (3, 4))
    assert z.stype == "csr" and z._raw.nnz == 0
    e = nd.sparse.empty("row_sparse", (3, 4), dtype="float64")
    assert e.stype == "row_sparse" and e.dtype == np.float64
    s = sp.random(6, 5, density=0.3, format="csr", random_state=0, dtype=np.float64)
    a = nd.sparse.array(s)
    assert a.stype == "csr" and a.dtype == np.float64
    assert nd.sparse.array(nd.sparse.row_sparse_array(_dense())).stype == "row_sparse"
    x, y = _dense(1), _dense(2)
    for f, g in ((nd.sparse.add, np.add), (nd.sparse.subtract, np.subtract),
                 (nd.sparse.multiply, np.multiply)):
        out = f(nd.array(x).tostype("csr"), nd.array(y).tostype("csr"))
        assert out.stype == "csr"
        np.testing.assert_allclose(out.asnumpy(), g(x, y), rtol=1e-6)
    vec = nd.array(np.arange(1, 8, dtype=np.float32).reshape(1, 7))
    out = nd.sparse.divide(nd.array(x).tostype("csr"), vec)
    assert out.stype == "csr"
    np.testing.assert_allclose(out.asnumpy(), x / vec.asnumpy(), rtol=1e-6)
    assert nd.sparse.multiply(nd.array(x).tostype("row_sparse"), 2.0).stype == "row_sparse"
    coo = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], ([0, 2, 0], [1, 0, 1])), shape=(3, 2))
    np.testing.assert_array_equal(coo.asnumpy(), [[0, 4], [0, 0], [2, 0]])


def test_unsorted_and_duplicate_indices_are_canonicalized():
    """Computation sees the sorted, summed form; check_format reports the parts as given
    (MXNet 1.9.1 raises there too); results of operations are canonical."""
    a = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [2, 0, 2], [0, 3, 3]), shape=(2, 3))
    np.testing.assert_array_equal(a.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(a.asnumpy(), [[2, 0, 4], [0, 0, 0]])
    with pytest.raises(StorageError, match="row 0 must be sorted and unique"):
        a.check_format()
    (a * 1).check_format()
    r = nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [2, 0, 2]), shape=(3, 2))
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(r.asnumpy(), [[3, 4], [0, 0], [6, 8]])
    with pytest.raises(StorageError, match="sorted and unique"):
        r.check_format()
    (r * 1).check_format()


@pytest.mark.parametrize("stype", STYPES)
def test_pickle_keeps_stype_values_and_context(stype):
    a = nd.array(_dense()).tostype(stype).copyto(mx.cpu(2))
    b = pickle.loads(pickle.dumps(a))
    assert b.stype == stype and b.context == mx.cpu(2)
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_fluent_methods_dispatch_to_ops():
    x = _dense()
    a = nd.array(x).tostype("csr")
    assert a.sqrt().stype == "csr"
    np.testing.assert_allclose(a.square().asnumpy(), x ** 2, rtol=1e-6)
    assert a.exp().stype == "default"
    r = nd.array(x).tostype("row_sparse")
    assert r.abs().stype == "row_sparse" and r.zeros_like().stype == "row_sparse"
    with pytest.raises(AttributeError):
        a.not_a_method()
    if hasattr(nd, "sum"):
        np.testing.assert_allclose(a.sum(axis=0).asnumpy(), x.sum(axis=0), rtol=1e-5)
    if hasattr(nd, "norm"):
        np.testing.assert_allclose(a.norm().asnumpy().reshape(-1)[0], np.linalg.norm(x),
                                   rtol=1e-5)


def test_concat_of_csr_rows():
    x, y = _dense(1), _dense(2)
    if not hasattr(nd, "concat"):
        pytest.skip("concat not registered")
    out = nd.concat(nd.array(x).tostype("csr"), nd.array(y).tostype("csr"), dim=0)
    assert out.stype == "csr"
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([x, y]))


def test_rand_helpers():
    a = rand_ndarray((20, 30), "csr", density=0.2, distribution="powerlaw")
    assert a.stype == "csr" and a.shape == (20, 30)
    b = rand_ndarray((20, 30), "csr", density=0.3, shuffle_csr_indices=True)
    assert b.stype == "csr"
    c = rand_ndarray((10, 3), "row_sparse", density=1.0, modifier_func=lambda v: v + 5)
    assert len(c.indices.asnumpy()) == 10 and (c.data.asnumpy() >= 5).all()
    assert_almost_equal(b.tostype("default"), b.asnumpy())


def test_repr_and_dense_reshape_errors():
    a = nd.sparse.csr_matrix(_dense())
    assert "<CSRNDArray 5x7 @cpu(0)>" in repr(a)
    with pytest.raises(StorageError):
        a.reshape((7, 5))
    assert "<NDArray 2x2 @cpu(0)>" in repr(nd.ones((2, 2)))


def test_constructor_shape_checks_as_mxnet():
    # a shape tuple and a different shape= (MXNet: "Shape mismatch detected")
    with pytest.raises(ValueError, match="Shape mismatch detected"):
        nd.sparse.csr_matrix((2, 2), shape=(3, 2))
    with pytest.raises(ValueError, match="Shape mismatch detected"):
        nd.sparse.row_sparse_array((np.int64(2), np.int32(2)), shape=(3, 2))
    with pytest.raises(ValueError):
        nd.sparse.csr_matrix(nd.ones((2, 2)), shape=(3, 2))
    # no stored entries: the shape cannot be inferred
    empty_idx = np.zeros(0, np.int64)
    with pytest.raises(ShapeError, match="cannot infer the shape"):
        nd.sparse.csr_matrix((np.zeros(0), empty_idx, np.zeros(3, np.int64)))
    with pytest.raises(ShapeError, match="cannot infer the shape"):
        nd.sparse.row_sparse_array((np.zeros((0, 3)), empty_idx))
    assert nd.sparse.row_sparse_array((np.ones((1, 3)), [4])).shape == (5, 3)


def test_sparse_broadcast_to_is_dense():
    x = np.array([[0.0, 1.5, 0.0, -2.0]])
    for stype in ("csr", "row_sparse"):
        out = nd.array(x).tostype(stype).broadcast_to((3, 4))
        assert type(out) is nd.NDArray
        np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(x, (3, 4)))


def test_shuffled_csr_moves_values_within_rows():
    np.random.seed(5)
    a = rand_ndarray((6, 8), "csr", density=0.5)
    np.random.seed(5)
    b = rand_ndarray((6, 8), "csr", density=0.5, shuffle_csr_indices=True)
    raw = b._raw
    for i in range(6):   # kept canonical: sorted columns, same values per row
        cols = raw.indices[raw.indptr[i]:raw.indptr[i + 1]]
        assert (np.diff(cols) > 0).all()
    np.testing.assert_allclose(np.sort(a.asnumpy(), 1), np.sort(b.asnumpy(), 1))
    assert (a.asnumpy() != b.asnumpy()).any()
