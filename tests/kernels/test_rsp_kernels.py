"""Row-sparse kernels against numpy references."""
import numpy as np
import pytest

from sparsym.base import ShapeError
from sparsym.kernels import _twins
from sparsym.kernels import rsp as krsp
from sparsym.storage import IDX, RSP

dtypes = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
# (shape, fraction of rows present)
CASES = [((0, 3), 0.5), ((6, 4), 0.0), ((6, 4), 1.0), ((50, 7), 0.3), ((40,), 0.5),
         ((30, 2, 3), 0.4), ((1000, 5), 0.02)]
cases = pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}@{c[1]}")


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def par(request, monkeypatch):
    """Run the parallel twin of the lookup / row-scan kernels on tiny inputs too."""
    if request.param:
        monkeypatch.setattr(_twins, "PAR_MIN_WORK", 0)
        monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)
    return request.param


def rand_rsp(shape, frac, dtype, seed=0, power=False):
    rng = np.random.default_rng(seed)
    m = shape[0]
    if power and m:
        rows = np.unique((m * rng.random(max(1, int(frac * m))) ** 4).astype(IDX))
    else:
        rows = np.flatnonzero(rng.random(m) < frac).astype(IDX)
    data = rng.standard_normal((len(rows),) + tuple(shape[1:])).astype(dtype)
    return RSP(data, rows, shape)


def dense(r):
    out = np.zeros(r.shape, r.data.dtype)
    out[r.indices] = r.data
    return out


def canonical(r):
    assert r.indices.dtype == IDX
    assert np.all(np.diff(r.indices) > 0)
    assert r.data.shape == (len(r.indices),) + tuple(r.shape[1:])


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@cases
@dtypes
def test_casts(case, dtype, par):
    r = rand_rsp(*case, dtype)
    d = dense(r)
    np.testing.assert_array_equal(krsp.rsp_to_dense(r), d)
    back = krsp.dense_to_rsp(d)
    canonical(back)
    flat = d.reshape(len(d), int(np.prod(d.shape[1:])))
    np.testing.assert_array_equal(back.indices, np.flatnonzero(flat.any(1)))
    np.testing.assert_array_equal(krsp.rsp_to_dense(back), d)


@dtypes
def test_canonicalize(dtype):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 20, 50)
    data = rng.standard_normal((50, 3)).astype(dtype)
    snap = (idx.copy(), data.copy())
    r = krsp.canonicalize_rsp(data, idx, (20, 3))
    canonical(r)
    ref = np.zeros((20, 3), dtype)
    np.add.at(ref, idx, data)
    np.testing.assert_allclose(dense(r), ref, **tol(dtype))
    np.testing.assert_array_equal(r.indices, np.unique(idx))
    np.testing.assert_array_equal(idx, snap[0])
    np.testing.assert_array_equal(data, snap[1])
    r2 = krsp.canonicalize_rsp(r.data, r.indices, r.shape)  # sorted unique: copy
    assert r2.data is not r.data
    np.testing.assert_array_equal(r2.indices, r.indices)
    e = krsp.canonicalize_rsp(np.zeros((0, 3), dtype), np.zeros(0, IDX), (20, 3))
    assert len(e.indices) == 0 and e.data.shape == (0, 3)


@cases
@dtypes
def test_elementwise(case, dtype):
    shape, frac = case
    for power in (False, True):
        a = rand_rsp(shape, frac, dtype, 1, power)
        b = rand_rsp(shape, frac, dtype, 2, power)
        da, db = dense(a), dense(b)
        t = tol(dtype)
        for al, be in [(1.0, 1.0), (0.5, -2.0)]:
            r = krsp.add_rsp_rsp(a, b, al, be)
            canonical(r)
            np.testing.assert_allclose(dense(r), al * da + be * db, **t)
            np.testing.assert_array_equal(r.indices, np.union1d(a.indices, b.indices))
            r = krsp.add_rsp_rsp(a, a, al, be)
            np.testing.assert_allclose(dense(r), (al + be) * da, **t)
        r = krsp.mul_rsp_rsp(a, b)
        canonical(r)
        np.testing.assert_array_equal(r.indices, np.intersect1d(a.indices, b.indices))
        np.testing.assert_allclose(dense(r), da * db, **t)
        D = np.random.default_rng(4).standard_normal(shape).astype(dtype)
        r = krsp.mul_rsp_dns(a, D)
        np.testing.assert_array_equal(r.indices, a.indices)
        np.testing.assert_allclose(dense(r), da * D, **t)
        np.testing.assert_allclose(krsp.add_rsp_dns(a, D), da + D, **t)
        c = rand_rsp(shape, frac, dtype, 5, power)
        for group in ([a], [a, b], [a, b, c, a]):
            r = krsp.add_n_rsp(group)
            canonical(r)
            np.testing.assert_allclose(dense(r), sum(dense(x) for x in group), **t)
        r = krsp.map_values(a, np.abs)
        np.testing.assert_array_equal(dense(r), np.abs(da))


@cases
@dtypes
def test_rows(case, dtype, par):
    shape, frac = case
    r = rand_rsp(shape, frac, dtype, 1)
    d = dense(r)
    m = shape[0]
    rng = np.random.default_rng(6)
    for ids in ([], rng.integers(0, max(m, 1), 7) if m else [], np.arange(m)[::-1],
                r.indices[::2]):
        ids = np.asarray(ids, dtype=IDX)
        k = krsp.retain(r, ids)
        canonical(k)
        keep = np.intersect1d(r.indices, ids)
        np.testing.assert_array_equal(k.indices, keep)
        ref = np.zeros_like(d)
        ref[keep] = d[keep]
        np.testing.assert_array_equal(dense(k), ref)
    idx = rng.integers(0, max(m, 1), (3, 4)) if m else np.zeros((3, 0), IDX)
    out = krsp.take_rows_rsp(r, idx)
    assert out.shape == idx.shape + tuple(shape[1:])
    np.testing.assert_array_equal(out, d[idx])
    out = krsp.take_rows_rsp(r, idx.astype(np.float32))  # Embedding passes float indices
    np.testing.assert_array_equal(out, d[idx])
    pos = krsp.rows_lookup(r.indices, idx)
    assert pos.shape == idx.shape and pos.dtype == IDX
    ref = np.array([np.flatnonzero(r.indices == i)[0] if i in r.indices else -1
                    for i in idx.ravel()], dtype=IDX).reshape(idx.shape)
    np.testing.assert_array_equal(pos, ref)


@dtypes
def test_embedding_grad(dtype):
    rng = np.random.default_rng(8)
    for idx_shape in [(0,), (5,), (4, 6)]:
        idx = rng.integers(0, 30, idx_shape)
        og = rng.standard_normal(idx_shape + (3,)).astype(dtype)
        g = krsp.embedding_grad_rsp(idx.astype(np.float32), og, 30)
        canonical(g)
        assert g.shape == (30, 3) and g.data.dtype == dtype
        ref = np.zeros((30, 3), dtype)
        np.add.at(ref, idx.ravel(), og.reshape(-1, 3))
        np.testing.assert_allclose(dense(g), ref, **tol(dtype))
        np.testing.assert_array_equal(g.indices, np.unique(idx))


@cases
@dtypes
def test_reductions(case, dtype):
    shape, frac = case
    r = rand_rsp(shape, frac, dtype, 2)
    d = dense(r)
    t = tol(dtype)
    for ax in [None] + list(range(len(shape))) + [-1]:
        for kd in (False, True):
            np.testing.assert_allclose(krsp.sum_rsp(r, ax, kd), d.sum(axis=ax, keepdims=kd), **t)
            out = krsp.square_sum_rsp(r, ax, kd)
            ref = (d ** 2).sum(axis=ax, keepdims=kd)
            if ax in (1, -1) and kd and len(shape) == 2:
                assert isinstance(out, RSP) and out.shape == (shape[0], 1)
                np.testing.assert_array_equal(out.indices, r.indices)
                out = dense(out)
            np.testing.assert_allclose(out, ref, **t)
    n = krsp.norm_rsp(r)
    assert n.shape == ()
    np.testing.assert_allclose(n, np.sqrt((d.astype(np.float64) ** 2).sum()), rtol=1e-5)


def test_errors_and_large_lookup():
    a = rand_rsp((10, 2), 0.5, np.float32)
    with pytest.raises(ShapeError):
        krsp.add_rsp_rsp(a, rand_rsp((11, 2), 0.5, np.float32))
    with pytest.raises(ShapeError):
        krsp.sum_rsp(a, 3)
    snap = (a.data.copy(), a.indices.copy())
    krsp.add_rsp_rsp(a, a, 2.0, 3.0)
    krsp.mul_rsp_dns(a, np.ones((10, 2), np.float32))
    np.testing.assert_array_equal(a.data, snap[0])
    np.testing.assert_array_equal(a.indices, snap[1])
    # int64 row ids beyond 2**31
    rows = np.array([3, 2**33, 2**40], IDX)
    w = RSP(np.arange(6, dtype=np.float32).reshape(3, 2), rows, (2**41, 2))
    np.testing.assert_array_equal(krsp.rows_lookup(rows, np.array([2**40, 5, 3], IDX)), [2, -1, 0])
    out = krsp.take_rows_rsp(w, np.array([2**33, 7], IDX))
    np.testing.assert_array_equal(out, [[2, 3], [0, 0]])
    # out-of-range ids are clipped (MXNet Embedding mode='clip')
    np.testing.assert_array_equal(krsp.take_rows_rsp(w, np.array([-5, 2**45], IDX)),
                                  [[0, 0], [0, 0]])
    w2 = RSP(np.ones((2, 2), np.float32), np.array([0, 9], IDX), (10, 2))
    np.testing.assert_array_equal(krsp.take_rows_rsp(w2, np.array([-1, 12, 5])),
                                  [[1, 1], [1, 1], [0, 0]])
    g = krsp.embedding_grad_rsp(np.array([-3, 11]), np.ones((2, 1)), 10)
    np.testing.assert_array_equal(g.indices, [0, 9])
    g = krsp.embedding_grad_rsp(np.array([2**40, 2**40, 1], IDX), np.ones((3, 2)), 2**41)
    np.testing.assert_array_equal(g.indices, [1, 2**40])
    np.testing.assert_array_equal(g.data, [[1, 1], [2, 2]])


@pytest.mark.parametrize("n", [1, 7, 8, 1001, 100_000])
def test_sorted_unique_and_positions_every_path(n):
    # the byte maps (n up to 256x the ids) and the sorts all agree with NumPy
    from sparsym.kernels._arrays import sorted_unique, unique_positions
    rng = np.random.default_rng(n)
    for size in (1, 3, 50, 2000):
        ids = rng.integers(0, n, size)
        ref, inv = np.unique(ids, return_inverse=True)
        np.testing.assert_array_equal(sorted_unique(ids, n), ref)
        uniq, pos = unique_positions(ids, n)
        np.testing.assert_array_equal(uniq, ref)
        np.testing.assert_array_equal(pos, inv.reshape(-1))
    with pytest.raises(ValueError, match="outside"):
        sorted_unique(np.array([0, n]), n)
    with pytest.raises(ValueError, match="outside"):
        sorted_unique(np.array([-1]), n)
    assert sorted_unique(np.zeros(0, np.int64), n).shape == (0,)
