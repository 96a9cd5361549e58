"""mx.autograd through the public API: recording state, variables, backward, grad, Function,
get_symbol, the plan cache and sparse gradients (checked against the symbolic executor)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import autograd as ag
from sparsym import nd
from sparsym.base import MXNetError


def test_state_scopes():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
        with ag.predict_mode():
            assert ag.is_recording() and not ag.is_training()
    with ag.record(train_mode=False):
        assert not ag.is_training()
        with ag.train_mode():
            assert ag.is_training()
    assert not ag.is_recording() and not ag.is_training()
    assert ag.set_recording(True) is False
    assert ag.set_recording(False) is True
    assert ag.set_training(True) is False
    assert ag.set_training(False) is True


def test_attach_grad_write_add_null():
    x = nd.array([1.0, 2.0, 3.0])
    assert x.grad is None
    x.attach_grad()
    assert x.grad.asnumpy().tolist() == [0, 0, 0]
    for _ in range(2):
        with ag.record():
            y = (x * x).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4, 6])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with ag.record():
            y = x * 3
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 6, 6])
    z = nd.ones((3,))
    z.attach_grad(grad_req="null")
    with ag.record():
        y = x * z
    y.backward()
    assert z.grad.asnumpy().tolist() == [0, 0, 0]
    assert y.grad is None


def test_backward_head_grads_multi_output():
    x = nd.ones((3, 4))
    dx = nd.zeros_like(x)
    ag.mark_variables([x], [dx])
    with ag.record():
        a, b, c = nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
    ag.backward([a, b, c], [None, nd.array([1, 2, 3, 4]), nd.array([4, 3, 2, 1])])
    np.testing.assert_allclose(dx.asnumpy(), [[1] * 4, [1, 2, 3, 4], [4, 3, 2, 1]])
    assert x._fresh_grad


def test_out_grad_and_chain():
    x = nd.array([[1.0, -2.0], [3.0, 0.5]])
    w = nd.array([[0.5, 1.0], [-1.0, 2.0]])
    x.attach_grad()
    w.attach_grad()
    with ag.record():
        y = nd.FullyConnected(nd.relu(x), w, num_hidden=2, no_bias=True)
    og = nd.array([[1.0, 2.0], [3.0, 4.0]])
    y.backward(og)
    r = np.maximum(x.asnumpy(), 0)
    np.testing.assert_allclose(w.grad.asnumpy(), og.asnumpy().T @ r)
    np.testing.assert_allclose(x.grad.asnumpy(), (og.asnumpy() @ w.asnumpy()) * (r > 0))


def test_detach_cuts_the_graph():
    x = nd.ones((2, 2))
    x.attach_grad()
    y = nd.ones((2, 2))
    y.attach_grad()
    with ag.record():
        z = (x + 2).detach() + y
    z.backward()
    assert (x.grad.asnumpy() == 0).all() and (y.grad.asnumpy() == 1).all()
    assert y._fresh_grad and not x._fresh_grad


def test_retain_graph_and_errors():
    x = nd.ones((2,))
    x.attach_grad(grad_req="add")
    with ag.record():
        y = x * 2
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.asnumpy().tolist() == [4, 4]
    with pytest.raises(MXNetError, match="retain_graph"):
        y.backward()
    with ag.record():
        c = nd.ones((2,)) * 2  # nothing on the tape: not recorded
    with pytest.raises(MXNetError, match="not in a computational graph"):
        c.backward()


def test_training_mode_dropout():
    x = nd.ones((20, 20))
    x.attach_grad()
    with ag.record():
        y = nd.Dropout(x, p=0.5)
    vals = set(np.unique(y.asnumpy()).tolist())
    assert vals == {0.0, 2.0}
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), y.asnumpy())
    with ag.record(train_mode=False):
        y = nd.Dropout(x, p=0.5)
    assert (y.asnumpy() == 1).all()
    with ag.train_mode():
        assert set(np.unique(nd.Dropout(x, p=0.5).asnumpy()).tolist()) == {0.0, 2.0}


@pytest.mark.parametrize("fn, d1, d2, d3", [
    ("sin", np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v)),
    ("exp", np.exp, np.exp, np.exp),
    ("sigmoid", lambda v: np.exp(-v) / (1 + np.exp(-v)) ** 2,
     lambda v: (s := 1 / (1 + np.exp(-v))) * (1 - s) * (1 - 2 * s), None),
])
def test_higher_order_grad(fn, d1, d2, d3):
    v = np.array([0.3, -0.8, 1.5], dtype=np.float32)
    x = nd.array(v)
    x.attach_grad()
    derivs = [d for d in (d1, d2, d3) if d is not None]
    with ag.record():
        g = getattr(nd, fn)(x)
        got = []
        for _ in derivs:
            g = ag.grad(g, x, create_graph=True, retain_graph=True)[0]
            got.append(g.asnumpy())
    for want, have in zip(derivs, got):
        np.testing.assert_allclose(have, want(v), rtol=1e-5, atol=1e-6)


def test_grad_leaves_buffers_and_reports_unreachable():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    u = nd.ones((2,))
    u.attach_grad()
    with ag.record():
        y = x * x * x
    dx = ag.grad(y, x, head_grads=nd.array([1.0, 0.5]), retain_graph=True)[0]
    np.testing.assert_allclose(dx.asnumpy(), [3.0, 6.0])
    assert x.grad.asnumpy().tolist() == [0, 0]
    with pytest.raises(MXNetError, match="unreachable"):
        ag.grad(y, [x, u])


def test_function():
    class Scale(ag.Function):
        def forward(self, x, y):
            self.save_for_backward(x, y)
            return x * y, x + y

        def backward(self, dm, dn):
            x, y = self.saved_tensors
            return dm * y + dn, dm * x + dn

    x = nd.array([1.0, 2.0])
    y = nd.array([3.0, 5.0])
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        m, n = Scale()(x, y)
        ag.backward([m, n])
    np.testing.assert_allclose(x.grad.asnumpy(), [4, 6])
    np.testing.assert_allclose(y.grad.asnumpy(), [2, 3])
    f = Scale()
    f(x, y)
    with pytest.raises(MXNetError, match="only be called once"):
        f(x, y)


def test_get_symbol():
    x = nd.ones((1,))
    z = nd.ones((1,))
    x.attach_grad()
    z.attach_grad()
    with ag.record():
        y = x * x + 2 * z - 1
    sym = ag.get_symbol(y)
    assert len(sym.list_arguments()) == 2
    ex = sym.bind(mx.cpu(), {n: nd.array([3.0]) for n in sym.list_arguments()})
    assert ex.forward()[0].asnumpy().tolist() == [14.0]


def test_plan_cache_reused_across_steps():
    w = nd.ones((3, 2))
    w.attach_grad()
    ag._PLANS.clear()
    for step in range(3):
        x = nd.array(np.full((4, 3), step + 1.0))
        with ag.record():
            loss = nd.dot(x, w).sum()
        loss.backward()
        np.testing.assert_allclose(w.grad.asnumpy(), np.full((3, 2), 4.0 * (step + 1)))
    assert len(ag._PLANS) == 1


def test_sparse_dot_row_sparse_grad_matches_executor():
    rng = np.random.default_rng(0)
    dense = rng.random((5, 8)).astype(np.float32) * (rng.random((5, 8)) < 0.3)
    csr = nd.array(dense).tostype("csr")
    w = nd.array(rng.random((8, 3)).astype(np.float32))
    w.attach_grad(stype="row_sparse")
    og = nd.array(rng.random((5, 3)).astype(np.float32))
    with ag.record():
        y = nd.dot(csr, w)
    y.backward(og)
    assert w.grad.stype == "row_sparse"
    # the symbolic executor's gradient of the same graph
    data = mx.sym.var("data", stype="csr")
    weight = mx.sym.var("weight")
    ex = mx.sym.dot(data, weight).simple_bind(
        mx.cpu(), data=(5, 8), weight=(8, 3), stype_dict={"data": "csr"},
        grad_req={"data": "null", "weight": "write"})
    ex.copy_params_from({"data": csr, "weight": w})
    ex.forward(is_train=True)
    ex.backward(og)
    np.testing.assert_allclose(w.grad.asnumpy(), ex.grad_dict["weight"].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.asnumpy(), dense.T @ og.asnumpy(), rtol=1e-5)


def test_csr_built_from_duplicate_columns_records_like_any_csr():
    """A csr from unsorted/duplicate column indices (summed as scipy does) is an ordinary
    input of recorded ops."""
    x = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [2, 2, 0], [0, 2, 3]), shape=(2, 3))
    w = nd.ones((3, 2))
    w.attach_grad(stype="row_sparse")
    with ag.record():
        y = nd.sparse.dot(x, w)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [[3, 3], [3, 3]])
    np.testing.assert_allclose(w.grad.asnumpy(), [[3, 3], [0, 0], [3, 3]])


def test_infer_dtype_of_grad():
    data = nd.arange(16, dtype=np.float64).reshape((4, 4))
    data.attach_grad()
    with ag.record():
        y = nd.split(data, axis=0, num_outputs=2)
    y[0].backward()
    assert data.grad.dtype == np.float64
    np.testing.assert_array_equal(data.grad.asnumpy()[:2], 1)


def test_contrib_autograd():
    from sparsym.contrib import autograd as cag
    x = nd.array([1.0, 2.0])
    grads, out = cag.grad_and_loss(lambda a: a * a)(x)
    np.testing.assert_allclose(grads[0].asnumpy(), [2, 4])
    with cag.train_section():
        assert ag.is_recording() and ag.is_training()
        with cag.test_section():
            assert not ag.is_recording() and not ag.is_training()
    assert not ag.is_recording()


def test_embedding_sparse_grad_is_row_sparse():
    w = nd.ones((10, 3))
    w.attach_grad(stype="row_sparse")
    with ag.record():
        y = nd.Embedding(nd.array([1, 3, 3]), w, input_dim=10, output_dim=3, sparse_grad=True)
    y.backward()
    assert w.grad.stype == "row_sparse"
    assert w.grad.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_allclose(w.grad.data.asnumpy(), [[1] * 3, [2] * 3])


def test_batchnorm_training_mode_updates_moving_stats_once():
    x = nd.array(np.arange(8, dtype=np.float32).reshape(4, 2))
    x.attach_grad()
    gamma, beta, mm, mv = nd.ones(2), nd.zeros(2), nd.zeros(2), nd.ones(2)
    with ag.record():
        y = nd.BatchNorm(x, gamma, beta, mm, mv)
    np.testing.assert_allclose(y.asnumpy()[:, 0], [-1.3416, -0.4472, 0.4472, 1.3416], atol=1e-3)
    y.backward()
    np.testing.assert_allclose(mm.asnumpy(), [0.3, 0.4], rtol=1e-6)
    np.testing.assert_allclose(mv.asnumpy(), [1.4, 1.4], rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 0, atol=1e-5)
    with ag.record(train_mode=False):  # inference: the moving statistics normalise
        y = nd.BatchNorm(x, gamma, beta, mm, mv)
    np.testing.assert_allclose(mm.asnumpy(), [0.3, 0.4], rtol=1e-6)


def test_cast_takes_numpy_types_and_records():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = nd.Cast(x, dtype=np.float64)
    assert y.dtype == np.float64
    y.backward()
    assert x.grad.dtype == np.float32 and x.grad.asnumpy().tolist() == [1, 1]


@pytest.mark.parametrize("key", [slice(None), Ellipsis, 0])
def test_assigning_into_a_recorded_array_is_refused(key):
    # MXNet's check; the gradient would use the old value (x.grad 7 instead of an error)
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
        with pytest.raises(mx.base.MXNetError, match="already in a computational graph"):
            y[key] = 5
        with pytest.raises(mx.base.MXNetError, match="already in a computational graph"):
            x[key] = 3
        a = mx.nd.zeros((2,))
        a[:] = x * 2   # a fresh array may take a recorded value, as in MXNet
    assert a.asnumpy().tolist() == [2, 2]
