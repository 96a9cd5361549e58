"""CSR kernels against numpy/scipy references."""
import numpy as np
import pytest
import scipy.sparse as sp

from sparsym.base import ShapeError
from sparsym.kernels import _twins, csr_dot
from sparsym.kernels import csr as kcsr
from sparsym.storage import CSR, IDX, RSP

DTYPES = [np.float32, np.float64]
# (rows, cols, nnz per row, column distribution)
SHAPES = [
    (0, 5, 0, "uniform"),
    (4, 6, 0, "uniform"),          # nnz == 0
    (1, 1, 1, "uniform"),
    (7, 13, 2, "uniform"),         # some empty rows (rows are sampled)
    (50, 300, 12, "power"),
    (64, 40, 40, "uniform"),       # nearly all rows / columns present
]


def rand_csr(m, n, per_row, dist, dtype, seed=0, empty_frac=0.3):
    """Canonical random CSR (as our CSR and scipy csr_matrix)."""
    rng = np.random.default_rng(seed)
    nnz = m * per_row if n else 0
    rows = rng.integers(0, max(m, 1), nnz)
    if m and empty_frac:
        keep = rng.random(m) >= empty_frac
        rows = rows[keep[rows]]
    u = rng.random(len(rows))
    cols = (n * (u ** 4 if dist == "power" else u)).astype(IDX)
    vals = rng.standard_normal(len(rows)).astype(dtype)
    s = sp.csr_matrix((vals, (rows, cols)), shape=(m, n), dtype=dtype)
    s.sum_duplicates()
    s.sort_indices()
    return to_ours(s), s


def to_ours(s):
    return CSR(s.data.copy(), s.indices.astype(IDX), s.indptr.astype(IDX), s.shape)


def dense(a):
    return np.asarray(sp.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape).toarray())


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


def canonical(a):
    for i in range(a.shape[0]):
        seg = a.indices[a.indptr[i]:a.indptr[i + 1]]
        assert np.all(np.diff(seg) > 0)
    assert a.indices.dtype == IDX and a.indptr.dtype == IDX
    assert len(a.indptr) == a.shape[0] + 1 and a.indptr[-1] == len(a.data) == len(a.indices)


cases = pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}:{s[2]}{s[3][0]}")
dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])


@cases
@dtypes
def test_casts(shape, dtype):
    a, s = rand_csr(*shape, dtype)
    d = s.toarray()
    np.testing.assert_array_equal(kcsr.csr_to_dense(a), d)
    b = kcsr.dense_to_csr(d)
    canonical(b)
    assert b.data.dtype == dtype
    np.testing.assert_array_equal(b.indices, s.indices)
    np.testing.assert_array_equal(b.indptr, s.indptr)
    np.testing.assert_array_equal(b.data, s.data)


@dtypes
def test_canonicalize_unsorted_duplicates(dtype):
    rng = np.random.default_rng(1)
    m, n = 30, 20
    rows = np.sort(rng.integers(0, m, 200))
    cols = rng.integers(0, n, 200)
    vals = rng.standard_normal(200).astype(dtype)
    indptr = np.zeros(m + 1, IDX)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    a = CSR(vals.copy(), cols.astype(IDX), indptr, (m, n))
    before = (a.data.copy(), a.indices.copy())
    c = kcsr.canonicalize_csr(a)
    canonical(c)
    ref = sp.csr_matrix((vals, (rows, cols)), shape=(m, n))
    ref.sum_duplicates()
    np.testing.assert_allclose(dense(c), ref.toarray(), **tol(dtype))
    np.testing.assert_array_equal(c.indptr, ref.indptr)
    np.testing.assert_array_equal(a.data, before[0])  # input untouched
    np.testing.assert_array_equal(a.indices, before[1])
    # unsorted input works for the any-order kernels too
    np.testing.assert_allclose(kcsr.csr_to_dense(a), ref.toarray(), **tol(dtype))
    b = rng.standard_normal((n, 3)).astype(dtype)
    np.testing.assert_allclose(csr_dot.dot_csr_dns(a, b), ref @ b, **tol(dtype))
    # already canonical and empty inputs
    e = kcsr.canonicalize_csr(c)
    np.testing.assert_array_equal(e.indices, c.indices)
    z = kcsr.canonicalize_csr(CSR(np.zeros(0, dtype), np.zeros(0, IDX), np.zeros(4, IDX), (3, 5)))
    assert z.nnz == 0 and z.shape == (3, 5) and len(z.indptr) == 4


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def par(request, monkeypatch):
    """Run the row-parallel kernels on tiny inputs too (normally they go serial), whatever
    the speed gate would pick."""
    if request.param:
        monkeypatch.setattr(_twins, "PAR_MIN_WORK", 0)
        monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)
        monkeypatch.setattr(_twins, "_ADAPTIVE", False)
    return request.param


@cases
@dtypes
def test_dot(shape, dtype, par):
    a, s = rand_csr(*shape, dtype)
    m, n = s.shape
    rng = np.random.default_rng(2)
    t = tol(dtype)
    for k in (None, 1, 5):
        bshape = (n,) if k is None else (n, k)
        b = rng.standard_normal(bshape).astype(dtype)
        out = csr_dot.dot_csr_dns(a, b)
        assert out.dtype == dtype and out.shape == (m,) + bshape[1:]
        np.testing.assert_allclose(out, s @ b, **t)
        bt = rng.standard_normal((m,) + bshape[1:]).astype(dtype)
        np.testing.assert_allclose(csr_dot.dot_csrT_dns(a, bt), s.T @ bt, **t)
        r = csr_dot.dot_csrT_dns_rsp(a, bt)
        assert isinstance(r, RSP) and r.shape == (n,) + bshape[1:]
        np.testing.assert_array_equal(r.indices, np.unique(s.indices))
        np.testing.assert_allclose(_rsp_dense(r), s.T @ bt, **t)
        x = rng.standard_normal((3, m)).astype(dtype)
        np.testing.assert_allclose(csr_dot.dot_dns_csr(x, a), x @ s.toarray(), **t)
        np.testing.assert_allclose(csr_dot.dot_dns_csr(x[0], a), x[0] @ s.toarray(), **t)
        c = csr_dot.dot_dns_csr_csr(x, a)
        canonical(c)
        np.testing.assert_allclose(dense(c), x @ s.toarray(), **t)
        xt = rng.standard_normal((3, n)).astype(dtype)
        np.testing.assert_allclose(csr_dot.dot_dns_csrT(xt, a), xt @ s.toarray().T, **t)
        np.testing.assert_allclose(csr_dot.dot_dns_csrT(xt[1], a), xt[1] @ s.toarray().T, **t)


def _rsp_dense(r):
    out = np.zeros(r.shape, r.data.dtype)
    out[r.indices] = r.data
    return out


def _rand_rsp(n, k, frac, dtype, seed):
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(rng.random(n) < frac).astype(IDX)
    shape = (n,) if k is None else (n, k)
    return RSP(rng.standard_normal((len(rows),) + shape[1:]).astype(dtype), rows, shape)


@pytest.fixture(params=["densify", "map", "hash", "search"])
def rsp_lookup(request, monkeypatch):
    """Force each way dot(csr, row_sparse) finds a column's stored row: a dense copy of w,
    a dense column map, a hash of the stored rows, a binary search."""
    never = -10**12
    if request.param != "densify":
        monkeypatch.setattr(csr_dot, "_DENSIFY_FACTOR", never)
    if request.param in ("hash", "search"):
        monkeypatch.setattr(csr_dot, "MAP_FACTOR", never)
    if request.param == "search":
        monkeypatch.setattr(csr_dot, "_HASH_FACTOR", never)
    return request.param


@cases
@dtypes
@pytest.mark.parametrize("frac", [0.0, 0.4, 1.0])
def test_dot_rsp(shape, dtype, frac, par, rsp_lookup):
    a, s = rand_csr(*shape, dtype)
    m, n = s.shape
    t = tol(dtype)
    for k in (None, 3):
        w = _rand_rsp(n, k, frac, dtype, 3)
        out = csr_dot.dot_csr_rsp(a, w)
        assert out.shape == (m,) + w.shape[1:]
        np.testing.assert_allclose(out, s @ _rsp_dense(w), **t)
        v = _rand_rsp(m, k, frac, dtype, 4)
        r = csr_dot.dot_csrT_rsp_rsp(a, v)
        assert r.shape == (n,) + v.shape[1:]
        assert np.all(np.diff(r.indices) > 0)
        np.testing.assert_allclose(_rsp_dense(r), s.T @ _rsp_dense(v), **t)
        sub = s[v.indices] if len(v.indices) else s[:0]
        np.testing.assert_array_equal(r.indices, np.unique(sub.indices))


def test_dot_csr_rsp_binary_search_path(par):
    # n >> nnz: exercises the binary-search lookup rather than the dense map
    a, s = rand_csr(20, 100000, 3, "power", np.float64)
    w = _rand_rsp(100000, 4, 0.3, np.float64, 5)
    np.testing.assert_allclose(csr_dot.dot_csr_rsp(a, w), s @ _rsp_dense(w), rtol=1e-12)
    # ... and the sort-based unique-column path of the transposed products
    b = np.random.default_rng(6).standard_normal((20, 3))
    r = csr_dot.dot_csrT_dns_rsp(a, b)
    np.testing.assert_array_equal(r.indices, np.unique(s.indices))
    np.testing.assert_allclose(r.data, (s.T @ b)[r.indices], rtol=1e-12)
    v = _rand_rsp(20, 3, 0.5, np.float64, 7)
    r = csr_dot.dot_csrT_rsp_rsp(a, v)
    np.testing.assert_allclose(_rsp_dense(r), s.T @ _rsp_dense(v), rtol=1e-12)
    c = csr_dot.dot_dns_csr_csr(b.T, a)
    np.testing.assert_allclose(dense(c), b.T @ s.toarray(), rtol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 16, 20])
@pytest.mark.parametrize("n", [131, 10**9], ids=["column-map", "sorted-keys"])
def test_csrT_rows_kernels_agree(n, k):
    """Every csr.T @ dense kernel the csrT gate can pick (serial scatter, serial and
    parallel transpose-and-gather) gives the stored columns and their sums: unsorted and
    duplicate columns, empty rows, stored zeros, a column map or a sort over the keys."""
    rng = np.random.default_rng(k)
    m = 40
    rows = np.sort(rng.integers(0, m, 300))
    rows = rows[(rows % 7) != 3]                       # some empty rows
    cols = rng.integers(0, 131, len(rows)) * (n // 131)
    cols[:4] = cols[4]                                 # duplicates within a row
    vals = rng.standard_normal(len(rows))
    vals[5] = 0.0
    indptr = np.zeros(m + 1, IDX)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    a = CSR(vals, cols.astype(IDX), indptr, (m, n))
    b = rng.standard_normal((m, k))
    want, pos = np.unique(cols, return_inverse=True)
    ref = sp.csr_matrix((vals, (rows, pos)), shape=(m, len(want))).T @ b  # compact columns
    got = [csr_dot._csrT_rows_scatter(a, vals, b), csr_dot._csrT_rows_gather(a, vals, b, False),
           csr_dot._csrT_rows_gather(a, vals, b, True)]
    for uniq, out in got:
        np.testing.assert_array_equal(uniq, want)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dense_buf", [True, False], ids=["dense-buffer", "column-map"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dot_csrT_k1_unsorted_duplicates_structural_zeros(dtype, dense_buf, monkeypatch):
    """dot(csr.T, b) with one output column, through the public op and both kernel paths:
    unsorted and duplicate columns are summed, stored zeros and cancelling duplicates keep
    their row, n is not a multiple of 64 (the dense path's bit set has a ragged tail)."""
    import sparsym as mx
    from sparsym import kernels
    monkeypatch.setattr(csr_dot, "_DENSE_T_BYTES", (1 << 21) if dense_buf else 0)
    rng = np.random.default_rng(11)
    m, n = 9, 131
    rows = np.sort(rng.integers(0, m, 60))
    cols = rng.integers(0, n, 60)
    cols[:3] = [130, 0, 64]
    vals = rng.standard_normal(60)
    vals[rows == rows[5]] = 0.0                      # a row of stored zeros
    rows = np.concatenate([rows, [2, 2]])            # duplicates that cancel in column 77
    cols = np.concatenate([cols, [77, 77]])
    vals = np.concatenate([vals, [1.5, -1.5]])
    order = np.argsort(rows, kind="stable")
    rows, cols, vals = rows[order], cols[order], vals[order].astype(dtype)
    indptr = np.zeros(m + 1, IDX)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    a = CSR(vals, cols.astype(IDX), indptr, (m, n))
    s = sp.csr_matrix((vals.astype(np.float64), (rows, cols)), shape=(m, n))
    t = dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else tol(dtype)
    for bshape in ((m,), (m, 1)):
        b = rng.standard_normal(bshape).astype(dtype)
        ref = s.T @ b.astype(np.float64)
        r = kernels.csr_dot.dot_csrT_dns_rsp(a, b)
        assert r.shape == (n,) + bshape[1:] and r.data.dtype == dtype
        np.testing.assert_array_equal(r.indices, np.unique(cols))
        np.testing.assert_allclose(r.data.astype(np.float64), ref[r.indices], **t)
        x = mx.nd.sparse.csr_matrix((vals, cols, indptr), shape=(m, n))
        y = mx.nd.sparse.dot(x, mx.nd.array(b, dtype=dtype), transpose_a=True)
        assert y.stype == "row_sparse" and y.dtype == dtype
        np.testing.assert_array_equal(y.indices.asnumpy(), np.unique(cols))
        np.testing.assert_allclose(y.asnumpy().astype(np.float64), ref, **t)
        d = mx.nd.sparse.dot(x, mx.nd.array(b, dtype=dtype), transpose_a=True,
                             forward_stype="default")
        assert d.stype == "default"
        np.testing.assert_allclose(d.asnumpy().astype(np.float64), ref, **t)


def test_large_int64_shape_without_densifying():
    """8192 x 1,000,000 (8.2e9 > 2**31 elements) csr dot a 1,000,000 x 2 rsp weight."""
    m, n, per = 8192, 1_000_000, 15
    rng = np.random.default_rng(7)
    indptr = np.arange(m + 1, dtype=IDX) * per
    indices = np.sort(rng.integers(0, n, (m, per)), axis=1).reshape(-1).astype(IDX)
    data = rng.random(m * per).astype(np.float32)
    a = CSR(data, indices, indptr, (m, n))
    s = sp.csr_matrix((data, indices, indptr), shape=(m, n))
    rows = np.flatnonzero(rng.random(n) < 0.5).astype(IDX)
    w = RSP(rng.standard_normal((len(rows), 2)).astype(np.float32), rows, (n, 2))
    wd = np.zeros((n, 2), np.float32)
    wd[rows] = w.data
    np.testing.assert_allclose(csr_dot.dot_csr_rsp(a, w), s @ wd, rtol=1e-4, atol=1e-5)
    wall = RSP(rng.standard_normal((n, 2)).astype(np.float32), np.arange(n, dtype=IDX), (n, 2))
    np.testing.assert_allclose(csr_dot.dot_csr_rsp(a, wall), s @ wall.data, rtol=1e-4, atol=1e-5)
    b = rng.standard_normal((m, 2)).astype(np.float32)
    g = csr_dot.dot_csrT_dns_rsp(a, b)
    assert g.shape == (n, 2)
    np.testing.assert_array_equal(g.indices, np.unique(indices))
    ref = (s.T @ b)[g.indices]
    np.testing.assert_allclose(g.data, ref, rtol=1e-4, atol=1e-5)
    assert int(kcsr.getnnz(a)) == m * per
    np.testing.assert_allclose(kcsr.sum_csr(a, 1), np.asarray(s.sum(1)).ravel(), rtol=1e-5)
    sl = kcsr.slice_csr(a, (100, 999_000), (200, None))
    np.testing.assert_allclose(dense(sl), s[100:200, 999_000:].toarray())


@cases
@dtypes
def test_slicing_take_concat(shape, dtype):
    a, s = rand_csr(*shape, dtype)
    m, n = s.shape
    d = s.toarray()
    for b, e in [(0, m), (1, m - 1), (m // 2, m // 2), (None, None), (-2, None)]:
        r = kcsr.slice_rows(a, b, e)
        np.testing.assert_array_equal(dense(r), d[b:e])
    for (r0, c0), (r1, c1) in [((0, 0), (m, n)), ((1, 2), (m - 1, n - 1)),
                               ((None, n // 3), (None, None)), ((0, 3), (m, 3))]:
        r = kcsr.slice_csr(a, (r0, c0), (r1, c1))
        canonical(r)
        np.testing.assert_array_equal(dense(r), d[r0:r1, c0:c1])
    rng = np.random.default_rng(5)
    for idx in ([], rng.integers(0, max(m, 1), 9) if m else [], [m - 1, 0, m - 1] if m else []):
        t = kcsr.take_rows_csr(a, idx)
        canonical(t)
        np.testing.assert_array_equal(dense(t), d[np.asarray(idx, dtype=int)])
    c = kcsr.concat_rows_csr([a, kcsr.slice_rows(a, 1, None), a])
    canonical(c)
    np.testing.assert_array_equal(dense(c), np.concatenate([d, d[1:], d]))


@cases
@dtypes
def test_elementwise(shape, dtype):
    a, s = rand_csr(*shape, dtype, seed=0)
    b, sb = rand_csr(*shape, dtype, seed=1)
    m, n = s.shape
    da, db = s.toarray(), sb.toarray()
    t = tol(dtype)
    r = kcsr.map_values(a, np.square)
    np.testing.assert_array_equal(r.indices, a.indices)
    np.testing.assert_allclose(dense(r), da ** 2, **t)
    for al, be in [(1.0, 1.0), (2.0, -0.5)]:
        r = kcsr.add_csr_csr(a, b, al, be)
        canonical(r)
        assert r.data.dtype == dtype
        np.testing.assert_allclose(dense(r), al * da + be * db, **t)
        assert r.nnz == (abs(s) + abs(sb)).nnz
    r = kcsr.mul_csr_csr(a, b)
    canonical(r)
    np.testing.assert_allclose(dense(r), da * db, **t)
    assert r.nnz == s.multiply(sb).tocsr().nnz or r.nnz >= s.multiply(sb).nnz
    rng = np.random.default_rng(9)
    D = rng.standard_normal((m, n)).astype(dtype)
    r = kcsr.mul_csr_dns(a, D)
    np.testing.assert_allclose(dense(r), da * D, **t)
    np.testing.assert_allclose(kcsr.add_csr_dns(a, D), da + D, **t)
    for vshape in [(1, n), (n,), (m, 1), (m, n), (1, 1)]:
        v = (rng.random(vshape) + 0.5).astype(dtype)
        np.testing.assert_allclose(dense(kcsr.broadcast_mul_csr_vec(a, v)), da * v, **t)
        np.testing.assert_allclose(dense(kcsr.broadcast_div_csr_vec(a, v)), da / v, **t)
    col = (rng.random(m) + 0.5).astype(dtype)
    np.testing.assert_allclose(dense(kcsr.broadcast_mul_csr_vec(a, col, (m, 1))),
                               da * col[:, None], **t)
    y = rng.standard_normal((m, n)).astype(dtype)
    np.testing.assert_allclose(kcsr.where_csr_dns_dns(a, D, y), np.where(da != 0, D, y))


@cases
@dtypes
def test_reductions(shape, dtype):
    a, s = rand_csr(*shape, dtype)
    d = s.toarray()
    t = tol(dtype)
    for ax in (None, 0, 1, -1):
        out = kcsr.sum_csr(a, ax)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, d.sum(axis=ax), **t)
        np.testing.assert_allclose(kcsr.norm_csr(a, ax), np.sqrt((d ** 2).sum(axis=ax)), **t)
        g = kcsr.getnnz(a, ax)
        assert g.dtype == IDX
        np.testing.assert_array_equal(g, s.getnnz(axis=None if ax is None else ax % 2))
    assert kcsr.sum_csr(a).shape == ()


def test_errors_and_no_mutation():
    a, s = rand_csr(5, 6, 2, "uniform", np.float32)
    snap = (a.data.copy(), a.indices.copy(), a.indptr.copy())
    with pytest.raises(ShapeError):
        csr_dot.dot_csr_dns(a, np.ones((5, 2), np.float32))
    with pytest.raises(ShapeError):
        kcsr.add_csr_csr(a, rand_csr(5, 7, 2, "uniform", np.float32)[0])
    with pytest.raises(ShapeError):
        kcsr.broadcast_mul_csr_vec(a, np.ones((2, 6)))
    with pytest.raises(ShapeError):
        kcsr.sum_csr(a, 2)
    kcsr.add_csr_csr(a, a, 3.0, 2.0)
    csr_dot.dot_csrT_dns_rsp(a, np.ones((5, 2), np.float32))
    kcsr.slice_csr(a, (1, 1), (3, 4))
    for x, y in zip(snap, (a.data, a.indices, a.indptr)):
        np.testing.assert_array_equal(x, y)
    # mixed dtypes promote
    out = csr_dot.dot_csr_dns(a, np.ones((6, 2), np.float64))
    assert out.dtype == np.float64


def test_parallel_gate_follows_measured_speed(monkeypatch):
    """The serial/parallel gate alternates pairs of serial and parallel calls until each
    mode has _SETTLE readings (a pair's first call is a warm-up), keeps the faster one by
    the median of its last _WINDOW readings, re-probes the other for two calls every
    _PROBE_S seconds, shrugs off one stalled call and follows a lasting slowdown."""
    monkeypatch.setattr(_twins, "_SETTLE", 2)
    monkeypatch.setattr(_twins, "_WINDOW", 5)
    g = _twins.Gate()

    def call(now, secs):
        par = g.parallel(now)
        g.record(par, secs, 10)
        return par

    # settling: s s P P s s P P; each pair's first call is not a reading
    modes = [call(0.0, secs) for secs in (50.0, 1.0, 90.0, 3.0, 9.0, 1.2, 9.0, 0.5)]
    assert modes == [False, False, True, True, False, False, True, True]
    assert g.rate[0] == pytest.approx(0.1)   # lower median of 0.1, 0.12
    assert g.rate[1] == pytest.approx(0.05)  # lower median of 0.3, 0.05
    assert call(0.0, 9.0) is False           # settled: the probe of the other mode ...
    assert call(0.0, 1.0) is False           # ... lasts two calls, the second a reading
    assert g.rate[0] == pytest.approx(0.1)
    assert [call(t, 0.5) for t in (0.1, 0.2, 0.3, 0.35)] == [True] * 4
    # parallel window now 0.3, 0.05, 0.05, 0.05, 0.05 (the switch-back call did not count)
    assert g.win[1] == pytest.approx([0.3, 0.05, 0.05, 0.05, 0.05])
    assert call(0.4, 100.0) is True          # one stalled call: 0.3 leaves, 10 enters
    assert g.rate[1] == pytest.approx(0.05)
    assert [call(0.4, 100.0) for _ in range(2)] == [True, True]   # busy: 3 stalls in 5
    assert g.rate[1] == pytest.approx(10.0)
    assert g.parallel(0.45) is False         # serial wins until the next probe
    g.record(False, 1.0, 10)
    # fast again: each probe (a warm-up, then a reading) adds one 0.04 reading; the third
    # makes 3 fast readings in 5
    for k in (1, 2, 3):
        t = k * _twins._PROBE_S + 0.01
        assert g.parallel(t - 0.02) is False
        g.record(False, 1.0, 10)
        assert [call(t, 0.4), call(t, 0.4)] == [True, True]
    assert g.rate[1] == pytest.approx(0.04)
    assert g.parallel(1.6) is True
    # through the public op the gate picks a mode and the result does not depend on it
    import sparsym as mx
    monkeypatch.setattr(_twins, "PAR_MIN_WORK", 0)
    monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)
    monkeypatch.setattr(_twins, "_GATES", {})
    a, s = rand_csr(64, 40, 8, "uniform", np.float64)
    x = mx.nd.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape)
    b = np.random.default_rng(3).standard_normal((40, 1))
    for _ in range(4):
        np.testing.assert_allclose(mx.nd.sparse.dot(x, mx.nd.array(b, dtype=np.float64))
                                   .asnumpy(), s @ b, rtol=1e-12)
    gate = _twins._GATES["mv"]
    import numba
    if numba.get_num_threads() >= 2:
        assert gate.rate[0] is not None and gate.rate[1] is not None
    else:  # one thread: the gate's parallel picks run serially and are timed as serial
        assert gate.rate[0] is not None and gate.rate[1] is None
