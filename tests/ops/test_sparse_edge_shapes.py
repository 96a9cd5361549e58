"""Zero-size and N-D operands on sparse paths: results equal the dense computation, or a
typed error says why (found by feeding every sparse front end mismatched shapes, stypes and
dtypes; each of these raised a raw NumPy error or indexed the wrong axis before)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import StorageError

nd = mx.nd
rng = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _np_shape():
    """Zero-size arrays come from nd.zeros/nd.ones only under NumPy shapes (as in MXNet)."""
    with mx.np_shape():
        yield


@pytest.mark.parametrize("shape", [(0, 4), (0, 4, 2), (3, 0)])
def test_zero_size_to_row_sparse_and_back(shape):
    r = nd.zeros(shape).tostype("row_sparse")
    assert r.stype == "row_sparse" and r.shape == shape and len(r.indices.asnumpy()) == 0
    assert r.tostype("default").shape == shape


@pytest.mark.parametrize("update", ["sgd", "adam"])
def test_optimizer_update_on_a_weight_with_no_rows(update):
    w, g = nd.zeros((0, 4)), nd.zeros((0, 4))
    if update == "sgd":
        out = nd.sgd_update(w, g, lr=0.1, out=w)
    else:
        out = nd.adam_update(w, g, nd.zeros((0, 4)), nd.zeros((0, 4)), lr=0.1, out=w)
    assert out.shape == (0, 4)


def test_row_sparse_transposed_dot_with_no_rows():
    r = nd.sparse.zeros("row_sparse", (0, 4))
    out = nd.dot(r, nd.ones((0, 2)), transpose_a=True)
    assert out.shape == (4, 2) and not out.asnumpy().any()


def test_softmax_output_on_an_empty_batch_of_rank_3():
    assert nd.SoftmaxOutput(nd.zeros((0, 3, 2)), nd.zeros((0,))).shape == (0, 3, 2)


@pytest.mark.parametrize("xs,ws,tb", [
    ((2, 3, 4), (4, 3), False), ((2, 3, 4), (3, 4), True), ((4,), (4, 3), False),
    ((4,), (4,), False), ((2, 4), (4,), False), ((5, 4), (3, 4), True),
    ((2, 3, 4), (4, 2, 3), False), ((2, 3, 3), (3, 2, 3), True)])
def test_dense_dot_row_sparse_contracts_the_last_axis(xs, ws, tb):
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) * (rng.random(ws) < 0.5)).astype(np.float32)
    w[0] = 0  # an absent row
    got = nd.dot(nd.array(x), nd.array(w).tostype("row_sparse"), transpose_b=tb)
    want = nd.dot(nd.array(x), nd.array(w), transpose_b=tb)
    assert got.stype == "default" and got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-5)


def test_fallback_runs_the_row_that_takes_dense_inputs():
    """retain(dense, csr) has no row: it falls back to the (dense, dense) row, not to the
    op's first row (row_sparse data), and gives retain's values as dense."""
    x = nd.arange(12).reshape((3, 4))
    ids = nd.array([[0, 1, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]]).tostype("csr")  # ids {0, 1}
    out = nd.sparse.retain(x, ids)
    want = x.asnumpy().copy()
    want[2] = 0
    assert out.stype == "default"
    np.testing.assert_array_equal(out.asnumpy(), want)


@pytest.mark.parametrize("op", ["broadcast_mul", "broadcast_div"])
def test_csr_broadcast_to_rank_3_is_refused(op):
    a = nd.ones((3, 4)).tostype("csr")
    with pytest.raises(StorageError, match="must be 2-D.*broadcast to \\(2, 3, 4\\)"):
        getattr(nd, op)(a, nd.ones((2, 3, 4)))
    # a 2-D broadcast still gives csr
    r = getattr(nd, op)(a, nd.ones((3, 1)) * 2)
    assert r.stype == "csr"


def test_float16_optimizer_updates_run_in_float32_and_store_half():
    """Numba has no half arithmetic: float16 weights and states are updated as float32
    copies. MXNet 1.9.1 accepts float16 too (its own half arithmetic rounds differently:
    adam gives 0.6797 there for 0.6838 exactly; here 0.6836, the float16 nearest)."""
    w = nd.ones((3, 4), dtype=np.float16)
    out = nd.sgd_update(w, w, lr=0.1)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), np.full((3, 4), 0.9, np.float16))
    m, v = nd.zeros((3, 4), dtype=np.float16), nd.zeros((3, 4), dtype=np.float16)
    out = nd.adam_update(w, w, m, v, lr=0.1)
    want = 1 - 0.1 * 0.1 / (np.sqrt(0.001) + 1e-8)
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=1e-3)
    assert m.dtype == np.float16 and np.allclose(m.asnumpy(), 0.1, rtol=1e-3)
    # lazy row_sparse update: only row 1 moves, states stay float16 row_sparse
    w = nd.ones((3, 4), dtype=np.float16).tostype("row_sparse")
    m = nd.zeros((3, 4), dtype=np.float16).tostype("row_sparse")
    v = nd.zeros((3, 4), dtype=np.float16).tostype("row_sparse")
    g = nd.sparse.row_sparse_array((np.ones((1, 4), np.float16), [1]), shape=(3, 4))
    nd.sparse.adam_update(w, g, m, v, lr=0.1, out=w)
    got = w.asnumpy()
    assert w.dtype == np.float16 and m.dtype == np.float16
    np.testing.assert_array_equal(got[[0, 2]], 1)
    np.testing.assert_allclose(got[1].astype(np.float64), want, rtol=1e-3)


def test_typed_errors_for_unsupported_views_and_empty_reductions():
    from sparsym.base import DTypeError, MXNetError, ShapeError
    r = nd.ones((3, 4)).tostype("row_sparse")
    for key in (1, slice(1, 2)):
        with pytest.raises(StorageError, match="only supports \\[:\\] indexing"):
            r[key]
    with pytest.raises(DTypeError, match="no float16"):
        nd.ones((3, 4), dtype=np.float16).tostype("csr").asscipy()
    for shape in ((5,), (2, 3, 4)):
        with pytest.raises(ShapeError, match="must be 2-D"):
            nd.contrib.getnnz(nd.ones(shape))
    for fn, shape, axis in ((nd.max, (0, 4), 0), (nd.min, (0, 4), None),
                            (nd.argmax, (3, 0), 1), (nd.argmin, (0, 2), None)):
        with pytest.raises(MXNetError, match="cannot reduce an empty axis"):
            fn(nd.zeros(shape), axis=axis)
    assert nd.max(nd.zeros((0, 4)), axis=1).shape == (0,)  # nothing reduced over: fine


def test_constructors_refuse_negative_shapes_and_unreadable_values():
    from sparsym.base import DTypeError, ShapeError
    for make in (lambda: nd.zeros((-1, 2)), lambda: nd.zeros((2.5, 2)),
                 lambda: nd.sparse.csr_matrix((-2, 3)),
                 lambda: nd.sparse.row_sparse_array((-2, 3)),
                 lambda: nd.sparse.csr_matrix((np.ones(0), np.zeros(0, int), np.zeros(3, int)),
                                              shape=(2, -3))):
        with pytest.raises(ShapeError, match="non-negative integers"):
            make()
    with pytest.raises(DTypeError, match="cannot read list values as float32"):
        nd.sparse.csr_matrix((["a", "b"], [0, 1], [0, 1, 2]), shape=(2, 3))
    with pytest.raises(DTypeError, match="cannot read"):
        nd.sparse.row_sparse_array((["a"], [0]), shape=(2, 1))
    assert nd.zeros(np.int64(3)).shape == (3,) and nd.zeros((2.0, 2)).shape == (2, 2)
