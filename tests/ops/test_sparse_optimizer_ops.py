"""Optimizer update ops through nd.*: MXNet 1.9.1 formulas, lazy row_sparse semantics,
states updated in place, out=weight in place, and the places beyond MXNet."""
import numpy as np
import pytest

import sparsym as mx

nd = mx.nd
ROWS = [1, 4]


def _setup(w_stype="default"):
    w0 = np.arange(10, dtype=np.float32).reshape(5, 2) / 10 + 1
    gd = np.full((2, 2), 0.5, np.float32)
    g = nd.sparse.row_sparse_array((gd, ROWS), shape=(5, 2))
    w = nd.array(w0).tostype(w_stype)
    return w0, gd, g, w


@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
@pytest.mark.parametrize("lazy", [True, False])
def test_sgd_lazy_and_standard(w_stype, lazy):
    w0, gd, g, w = _setup(w_stype)
    out = nd.sgd_update(w, g, lr=0.1, wd=0.1, lazy_update=lazy, out=w)
    assert out is w and w.stype == w_stype
    want = w0 * (1 - 0.1 * 0.1) if not lazy else w0.copy()
    want[ROWS] = (1 - 0.01) * w0[ROWS] - 0.1 * gd
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)


def test_sgd_without_out_leaves_weight():
    w0, gd, g, w = _setup()
    new = nd.sgd_update(w, g, lr=0.1)
    np.testing.assert_array_equal(w.asnumpy(), w0)
    assert not np.array_equal(new.asnumpy(), w0)


def test_adam_lazy_rows_and_row_sparse_states():
    w0, gd, g, w = _setup("row_sparse")
    mean = nd.sparse.zeros("row_sparse", (5, 2))
    var = nd.sparse.zeros("row_sparse", (5, 2))
    nd.adam_update(w, g, mean, var, lr=0.1, out=w)
    m = 0.1 * gd
    v = 0.001 * gd * gd
    want = w0.copy()
    want[ROWS] -= 0.1 * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5)
    assert mean.stype == "row_sparse" and len(mean.indices.asnumpy()) == 5  # completed
    np.testing.assert_allclose(mean.asnumpy()[ROWS], m, rtol=1e-6)
    assert not mean.asnumpy()[[0, 2, 3]].any()


def test_adam_row_sparse_weight_dense_states_is_standard():
    w0, gd, g, w = _setup("row_sparse")
    mean, var = nd.zeros((5, 2)), nd.zeros((5, 2))
    nd.adam_update(w, g, mean, var, lr=0.1, wd=0.1, out=w)
    gg = np.zeros_like(w0)
    gg[ROWS] = gd
    gg = gg + 0.1 * w0
    m, v = 0.1 * gg, 0.001 * gg * gg
    np.testing.assert_allclose(w.asnumpy(), w0 - 0.1 * m / (np.sqrt(v) + 1e-8), rtol=1e-5)


def test_sgd_mom_updates_state_in_place():
    w0, gd, g, w = _setup()
    mom = nd.zeros((5, 2))
    nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, out=w)
    want_m = np.zeros_like(w0)
    want_m[ROWS] = -0.1 * gd
    np.testing.assert_allclose(mom.asnumpy(), want_m, rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), w0 + want_m, rtol=1e-6)


def test_ftrl_lazy_all_row_sparse_vs_full_dense():
    w0, gd, g, w = _setup("row_sparse")
    z, n = nd.sparse.zeros("row_sparse", (5, 2)), nd.sparse.zeros("row_sparse", (5, 2))
    nd.ftrl_update(w, g, z, n, lr=0.1, out=w)
    got = w.asnumpy()
    np.testing.assert_array_equal(got[[0, 2, 3]], w0[[0, 2, 3]])  # untouched rows
    wd = nd.array(w0)
    nd.ftrl_update(wd, g, nd.zeros((5, 2)), nd.zeros((5, 2)), lr=0.1, out=wd)
    assert not wd.asnumpy()[[0, 2, 3]].any()  # MXNet's fallback: every row recomputed
    np.testing.assert_allclose(wd.asnumpy()[ROWS], got[ROWS], rtol=1e-6)


def test_adagrad_with_wd_goes_beyond_mxnet():
    w0, gd, g, w = _setup("row_sparse")
    h = nd.sparse.zeros("row_sparse", (5, 2))
    nd.sparse.adagrad_update(w, g, h, lr=0.1, wd=0.1, out=w)
    gg = gd + 0.1 * w0[ROWS]
    want = w0.copy()
    want[ROWS] -= 0.1 * gg / np.sqrt(gg * gg + 1e-7)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5)
    np.testing.assert_allclose(h.asnumpy()[ROWS], gg * gg, rtol=1e-5)


def test_partial_row_sparse_weight_is_completed():
    w = nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(5, 2))
    _, gd, g, _ = _setup()
    nd.sgd_update(w, g, lr=0.1, out=w)
    want = np.zeros((5, 2), np.float32)
    want[1] = 1
    want[ROWS] -= 0.1 * gd
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)


def test_update_errors_name_the_op():
    _, _, g, w = _setup()
    with pytest.raises(mx.base.ShapeError, match="sgd_mom_update"):
        nd.sgd_mom_update(w, g, nd.zeros((4, 2)), lr=0.1)
    with pytest.raises(mx.base.DTypeError, match="adam_update"):
        nd.adam_update(w, g, nd.zeros((5, 2), dtype="float64"), nd.zeros((5, 2)), lr=0.1)
    with pytest.raises(mx.base.ParamError, match="lr"):
        nd.sgd_update(w, g)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "lazy-row_sparse"])
def test_zero_division_gives_nan_like_mxnet(sparse):
    """epsilon=0 with a zero gradient divides 0 by 0: MXNet 1.9.1 stores nan in that entry
    and finishes the update (probed: rmsprop [[nan 1.5527865]], adam [[nan 1.6837702]])."""
    def arr(x):
        a = nd.array(np.array(x, np.float32).reshape(1, 2))
        return a.tostype("row_sparse") if sparse else a

    w, g, n = arr([1.0, 2.0]), arr([0.0, 1.0]), arr([0.0, 0.0])
    r = nd.rmsprop_update(w, g, n, lr=0.1, epsilon=0.0).asnumpy()
    assert np.isnan(r[0, 0]) and r[0, 1] == pytest.approx(1.5527865, rel=1e-6)
    w, g, m, v = arr([1.0, 2.0]), arr([0.0, 1.0]), arr([0.0, 0.0]), arr([0.0, 0.0])
    r = nd.adam_update(w, g, m, v, lr=0.1, epsilon=0.0, out=w).asnumpy()
    assert np.isnan(r[0, 0]) and r[0, 1] == pytest.approx(1.6837702, rel=1e-5)
