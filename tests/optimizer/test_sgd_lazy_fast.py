"""SGD's direct kernel path for a lazy row_sparse update and the updater's list form."""
import numpy as np

import sparsym as mx


def _reference(w, m, rows, g, lr, mu, wd, rs, cg):
    """MXNet's lazy SGD with momentum on the rows of a row_sparse gradient."""
    for k, r in enumerate(rows):
        x = np.clip(rs * g[k], -cg, cg)
        m[r] = mu * m[r] - lr * wd * w[r] - lr * x
        w[r] += m[r]


def test_lazy_momentum_update_of_a_row_sparse_weight_matches_the_formula():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((6, 3)).astype(np.float32)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1, rescale_grad=0.5,
                           clip_gradient=0.3)
    upd = mx.optimizer.get_updater(opt)
    weight = mx.nd.array(w0).tostype("row_sparse")
    w_ref, m_ref = w0.astype(np.float64), np.zeros((6, 3))
    for rows in ([1, 3], [0, 3, 5]):
        g = rng.standard_normal((len(rows), 3)).astype(np.float32)
        grad = mx.nd.sparse.row_sparse_array((g, rows), shape=(6, 3))
        upd(0, grad, weight)
        _reference(w_ref, m_ref, rows, g.astype(np.float64), 0.1, 0.9, 0.1, 0.5, 0.3)
    assert weight.stype == "row_sparse"
    np.testing.assert_allclose(weight.asnumpy(), w_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(upd.states[0].asnumpy(), m_ref, rtol=1e-5, atol=1e-6)
    # rows 2 and 4 had no gradient: untouched, weight decay included (lazy update)
    np.testing.assert_array_equal(weight.asnumpy()[[2, 4]], w0[[2, 4]])


def test_updater_list_form_equals_one_call_per_parameter():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((5, 2)).astype(np.float32)
    b0 = rng.standard_normal((2,)).astype(np.float32)
    results = []
    for as_list in (False, True):
        opt = mx.optimizer.SGD(learning_rate=0.05, momentum=0.9)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.array(w0).tostype("row_sparse")
        b = mx.nd.array(b0)
        for step in range(3):
            gw = mx.nd.sparse.row_sparse_array((np.full((2, 2), step + 1.0, np.float32),
                                                [step, 4]), shape=(5, 2))
            gb = mx.nd.array(np.full(2, -1.0 - step, np.float32))
            if as_list:
                upd([0, 1], [gw, gb], [w, b])
            else:
                upd(0, gw, w)
                upd(1, gb, b)
        results.append((w.asnumpy(), b.asnumpy(), opt.num_update))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] == 3


def test_dense_weight_with_a_row_sparse_gradient_takes_the_kernel_and_matches_the_general_path(
        monkeypatch):
    """Gluon's sparse_grad Embedding: a dense weight (and dense momentum) with a row_sparse
    gradient goes straight to the lazy kernel, with the general path's result."""
    from sparsym.optimizer import optimizer as optmod
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((7, 4)).astype(np.float32)
    grads = [(rng.standard_normal((2, 4)).astype(np.float32), [1, 5]),
             (rng.standard_normal((3, 4)).astype(np.float32), [0, 5, 6])]
    out = {}
    for fast in (True, False):
        for mu in (0.0, 0.9):
            calls = []
            if not fast:  # the general path only
                monkeypatch.setattr(optmod, "sgd_step", lambda *a, **k: False)
            orig = optmod.SGD._step
            monkeypatch.setattr(optmod.SGD, "_step",
                                lambda self, *a, calls=calls, orig=orig:
                                (calls.append(1), orig(self, *a))[1])
            opt = mx.optimizer.SGD(learning_rate=0.1, momentum=mu, wd=0.05, rescale_grad=0.5,
                                   clip_gradient=0.4)
            upd = mx.optimizer.get_updater(opt)
            w = mx.nd.array(w0)
            for g, rows in grads:
                upd(0, mx.nd.sparse.row_sparse_array((g, rows), shape=(7, 4)), w)
            assert bool(calls) != fast  # the fast form never falls back to _step
            out[fast, mu] = (w.asnumpy(), None if mu == 0 else upd.states[0].asnumpy())
            monkeypatch.undo()
    for mu in (0.0, 0.9):
        np.testing.assert_array_equal(out[True, mu][0], out[False, mu][0])
        if mu:
            np.testing.assert_array_equal(out[True, mu][1], out[False, mu][1])
        # rows without a gradient keep their values (lazy: no weight decay there either)
        np.testing.assert_array_equal(out[True, mu][0][[2, 3, 4]], w0[[2, 3, 4]])
