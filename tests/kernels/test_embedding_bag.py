"""The embedding-bag kernels (kernels/rsp.py) against the separate ops they replace, bit for
bit, serial and parallel; the compiled id clip against NumPy's cast and clip."""
import numpy as np
import pytest

from sparsym.kernels import _twins
from sparsym.kernels import reduce as kred
from sparsym.kernels import rsp as krsp


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def par(request, monkeypatch):
    """Run the parallel kernels on tiny inputs too."""
    if request.param:
        monkeypatch.setattr(_twins, "PAR_MIN_WORK", 0)
        monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)
        monkeypatch.setattr(_twins, "_ADAPTIVE", False)
    return request.param


def _data(dtype, b=300, f=7, n=50, d=5, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(-3, n + 3, (b, f)).astype(np.float32)  # out of range: clipped
    vals = rng.standard_normal((b, f)).astype(dtype)
    w = rng.standard_normal((n, d)).astype(dtype)
    return ids, vals, w


def _numpy_clip(ids, n):
    with np.errstate(invalid="ignore"):
        return np.minimum(np.maximum(np.asarray(ids).astype(np.int64), 0), n - 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_ids_matches_numpy_cast(dtype):
    rng = np.random.default_rng(1)
    ids = np.concatenate([rng.uniform(-5, 1005, 600),
                          [np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0**63, -2.0**63, 0.5,
                           -0.5, 999.9, 1000.0, 1e3 - 1, 7.999]]).astype(dtype)
    np.testing.assert_array_equal(krsp.clip_ids(ids, 1000), _numpy_clip(ids, 1000))
    np.testing.assert_array_equal(krsp.clip_ids(ids.reshape(-1, 1)[::-1], 1000),
                                  _numpy_clip(ids.reshape(-1, 1)[::-1], 1000))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_take_rows_is_numpy_take(dtype, par):
    ids, _, w = _data(dtype)
    ref = np.take(w, _numpy_clip(ids, len(w)), axis=0)
    out = krsp.take_rows(w, ids)
    assert out.shape == ids.shape + (w.shape[1],) and out.dtype == dtype
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bag_sum_is_the_separate_ops(dtype, par):
    ids, vals, w = _data(dtype)
    emb = krsp.take_rows(w, ids)
    ref = kred.sum_block(kred.mul_by_column(emb, vals[:, :, None].copy()), (1,))
    out = krsp.embedding_bag_sum(w, ids, vals)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_allclose(out, (emb * vals[:, :, None]).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(krsp.embedding_bag_sum(w, ids[:, :0], vals[:, :0]),
                                  np.zeros((len(ids), w.shape[1]), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bag_grad_is_the_separate_ops(dtype, par):
    ids, vals, w = _data(dtype, seed=3)
    og = np.random.default_rng(4).standard_normal((len(ids), w.shape[1])).astype(dtype)
    # the unfused backward: sum's broadcast, the product's scale, Embedding's row sums
    g3 = kred.broadcast_block(og, ids.shape + (w.shape[1],), (1,))
    ref = krsp.embedding_grad_rsp(ids, kred.mul_by_column(g3, vals[:, :, None].copy()), len(w))
    g = krsp.embedding_bag_grad_rsp(ids, vals, og, len(w))
    np.testing.assert_array_equal(g.indices, ref.indices)
    np.testing.assert_array_equal(g.data, ref.data)
    assert g.shape == (len(w), w.shape[1]) and g.data.dtype == dtype
    empty = krsp.embedding_bag_grad_rsp(ids[:0], vals[:0], og[:0], len(w))
    assert empty.data.shape == (0, w.shape[1]) and len(empty.indices) == 0


def test_segment_rows_sum_order(par):
    rng = np.random.default_rng(5)
    inv = rng.integers(0, 40, 500)
    g = rng.standard_normal((500, 6)).astype(np.float32)
    ref = np.zeros((40, 6), np.float32)
    for t in range(500):  # the serial order, one row at a time
        ref[inv[t]] += g[t]
    np.testing.assert_array_equal(krsp.segment_rows_sum(inv, g, 40), ref)
