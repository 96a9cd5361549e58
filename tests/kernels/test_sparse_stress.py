"""Randomised stress of the sparse products and row_sparse updates through the public API.

Each seed draws shapes (from empty to n >> nnz, so every lookup path runs: dense column
map, binary search, dense k = 1 buffer), densities, non-canonical csr (unsorted columns,
duplicates), dtypes and widths, and runs every dot variant with the serial/parallel choice
forced one way or the other, against scipy / NumPy on the densified inputs. CI runs a few
seeds; ``python -m pytest -m slow`` runs hundreds.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import sparsym as mx
from sparsym.kernels import _twins

nd = mx.nd
QUICK = list(range(4))
SLOW = list(range(4, 300))


def _case(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.choice([0, 1, 2, 7, 64, 300]))
    n = int(rng.choice([1, 5, 40, 1000, 200_000]))
    per_row = int(rng.choice([0, 1, 3, 15]))
    dtype = rng.choice([np.float32, np.float64])
    nnz = m * per_row
    rows = np.sort(rng.integers(0, max(m, 1), nnz)) if m else np.zeros(0, np.int64)
    cols = rng.integers(0, n, nnz)
    vals = rng.standard_normal(nnz).astype(dtype)
    indptr = np.zeros(m + 1, np.int64)
    np.add.at(indptr, rows + 1, 1)
    indptr = np.cumsum(indptr)
    if nnz and rng.random() < 0.5:  # non-canonical: shuffle columns within rows, duplicate
        for i in range(m):
            seg = slice(indptr[i], indptr[i + 1])
            cols[seg] = rng.permutation(cols[seg])
        if nnz > 1:
            cols[1] = cols[0] if rows[0] == rows[1] else cols[1]
    k = int(rng.choice([1, 2, 16, 70]))
    return rng, m, n, dtype, vals, cols, indptr, k


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


def _stress(seed, monkeypatch):
    rng, m, n, dtype, vals, cols, indptr, k = _case(seed)
    if seed % 2:  # the parallel twins and parallel dot kernels on any size
        monkeypatch.setattr(_twins, "PAR_MIN_WORK", 0)
        monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)
        monkeypatch.setattr(_twins, "_ADAPTIVE", False)
    s = sp.csr_matrix((vals, cols, indptr), shape=(m, n))
    d = s.toarray()  # duplicates summed
    x = nd.sparse.csr_matrix((vals, cols, indptr), shape=(m, n), dtype=dtype)
    t = _tol(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    np.testing.assert_allclose(nd.sparse.dot(x, nd.array(b, dtype=dtype)).asnumpy(), d @ b, **t)
    bt = rng.standard_normal((m, k)).astype(dtype)
    r = nd.sparse.dot(x, nd.array(bt, dtype=dtype), transpose_a=True)
    assert r.stype == "row_sparse"
    np.testing.assert_allclose(r.asnumpy(), d.T @ bt, **t)
    np.testing.assert_array_equal(r.indices.asnumpy(), np.unique(cols))
    # row_sparse right-hand sides: about half the rows present
    keep = np.flatnonzero(rng.random(n) < 0.5)
    wd = rng.standard_normal((len(keep), k)).astype(dtype)
    w = nd.sparse.row_sparse_array((wd, keep), shape=(n, k), dtype=dtype)
    wdense = np.zeros((n, k), dtype)
    wdense[keep] = wd
    np.testing.assert_allclose(nd.sparse.dot(x, w).asnumpy(), d @ wdense, **t)
    rkeep = np.flatnonzero(rng.random(m) < 0.5)
    v = nd.sparse.row_sparse_array((rng.standard_normal((len(rkeep), k)).astype(dtype), rkeep),
                                   shape=(m, k), dtype=dtype)
    np.testing.assert_allclose(nd.sparse.dot(x, v, transpose_a=True).asnumpy(),
                               d.T @ v.asnumpy(), **t)
    # dense left-hand sides
    xl = rng.standard_normal((3, m)).astype(dtype)
    np.testing.assert_allclose(nd.sparse.dot(nd.array(xl, dtype=dtype), x).asnumpy(), xl @ d, **t)
    xr = rng.standard_normal((3, n)).astype(dtype)
    np.testing.assert_allclose(nd.sparse.dot(nd.array(xr, dtype=dtype), x, transpose_b=True)
                               .asnumpy(), xr @ d.T, **t)
    # casts both ways and rsp + rsp on the same shapes
    np.testing.assert_allclose(nd.cast_storage(nd.array(d, dtype=dtype), stype="csr").asnumpy(),
                               d, **t)
    np.testing.assert_allclose(x.tostype("row_sparse").asnumpy(), d, **t)
    np.testing.assert_allclose(nd.sparse.elemwise_add(w, w).asnumpy(), 2 * wdense, **t)


@pytest.mark.parametrize("seed", QUICK)
def test_sparse_products_random_quick(seed, monkeypatch):
    _stress(seed, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_sparse_products_random_stress(seed, monkeypatch):
    _stress(seed, monkeypatch)
