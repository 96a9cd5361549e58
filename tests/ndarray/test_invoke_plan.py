"""The imperative invoke path memoises checked dispatch plans: repeated calls reuse the plan,
and any change of shape, dtype, storage type or parameters is checked afresh."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError
from sparsym.ndarray import op as ndop

nd = mx.nd


def test_plan_reused_and_rechecked():
    x = nd.sparse.csr_matrix((np.ones(3, np.float32), [0, 2, 1], [0, 2, 3]), shape=(2, 3))
    b = nd.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    xd = x.tostype("default")

    def dot_plans():
        return sum(k[0] == "dot" for k in ndop._PLANS)
    ndop._PLANS.clear()
    y = nd.sparse.dot(x, b)
    assert dot_plans() == 1
    np.testing.assert_allclose(nd.sparse.dot(x, b).asnumpy(), y.asnumpy())
    assert dot_plans() == 1                       # same plan reused
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() @ b.asnumpy())
    # a different parameter, stype, shape or dtype is a new plan, checked again
    r = nd.sparse.dot(x, nd.array(np.ones((2, 2), np.float32)), transpose_a=True)
    assert r.stype == "row_sparse"
    assert nd.sparse.dot(xd, b).stype == "default"
    with pytest.raises(MXNetError, match="dot"):
        nd.sparse.dot(x, nd.array(np.ones((4, 2), np.float32)))
    with pytest.raises(MXNetError, match="dtype"):
        nd.sparse.dot(x, nd.array(np.ones((3, 2)), dtype=np.float64))
    assert dot_plans() == 3                       # failed checks are not memoised
    with pytest.raises(MXNetError, match="dot"):
        nd.sparse.dot(x, nd.array(np.ones((4, 2), np.float32)))


def test_plan_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(ndop, "_PLANS_MAX", 2)
    ndop._PLANS.clear()
    for n in range(1, 6):
        a = nd.array(np.ones(n, np.float32))
        np.testing.assert_array_equal((a + a).asnumpy(), np.full(n, 2, np.float32))
    assert len(ndop._PLANS) == 2


def test_fallback_plans_follow_the_current_policy(monkeypatch):
    """A fallback is not memoised: switching the policy to 'raise' after a first (logged)
    fallback makes the next identical call raise."""
    x = nd.sparse.csr_matrix((np.ones(2, np.float32), [0, 1], [0, 1, 2]), shape=(2, 2))
    monkeypatch.setenv("SPARSYM_STORAGE_FALLBACK", "silent")
    np.testing.assert_allclose(nd.log(x).asnumpy(), np.log(x.asnumpy()))
    monkeypatch.setenv("SPARSYM_STORAGE_FALLBACK", "raise")
    with pytest.raises(MXNetError):
        nd.log(x)
