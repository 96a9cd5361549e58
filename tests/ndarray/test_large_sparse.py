"""Beyond 2**31 elements: an 8192 x 1,000,000 csr batch and its dot with a row_sparse
weight, computed without densifying (MXNet's wheel cannot hold this shape)."""
import numpy as np

import sparsym as mx

M, N, K, PER = 8192, 1_000_000, 8, 15


def _batch(rng):
    cols = np.sort(rng.choice(N, size=(M, PER), replace=True), axis=1)
    indptr = np.arange(M + 1, dtype=np.int64) * PER
    data = rng.random(M * PER).astype(np.float32)
    return mx.nd.sparse.csr_matrix((data, cols.reshape(-1), indptr), shape=(M, N))


def test_big_csr_dot_row_sparse_weight():
    rng = np.random.default_rng(0)
    x = _batch(rng)
    assert x.shape == (M, N) and x.size > 2 ** 31
    (x * 1).check_format()   # the parts may repeat a column; computation sums them
    rows = np.unique(x.indices.asnumpy())[::3]
    w_data = rng.standard_normal((len(rows), K)).astype(np.float32)
    w = mx.nd.sparse.row_sparse_array((w_data, rows), shape=(N, K))
    out = mx.nd.sparse.dot(x, w)
    assert out.stype == "default" and out.shape == (M, K)
    # reference on the touched columns only (scipy, int64 indices)
    s = x.asscipy()
    dense_w = np.zeros((N, K), np.float32)
    dense_w[rows] = w_data
    np.testing.assert_allclose(out.asnumpy(), s @ dense_w, rtol=1e-4, atol=1e-4)
    # the weight gradient path: dot(csr.T, dense) -> row_sparse over the batch's columns
    g = mx.nd.sparse.dot(x, mx.nd.ones((M, K)), transpose_a=True)
    assert g.stype == "row_sparse" and g.shape == (N, K)
    np.testing.assert_array_equal(g.indices.asnumpy(), np.unique(x.indices.asnumpy()))
    # slicing, casting and arithmetic stay sparse
    part = x[100:200]
    assert part.stype == "csr" and part.shape == (100, N)
    assert (x * 2.0).stype == "csr"
