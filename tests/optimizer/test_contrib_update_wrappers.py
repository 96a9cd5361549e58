"""nd.contrib's AdamW/LAMB wrappers: scalar rescale_grad, per-tensor lists (MXNet's API)."""
import numpy as np

import sparsym as mx


def _tensors(seed):
    rng = np.random.default_rng(seed)
    return ([mx.nd.array(rng.uniform(size=(3, 2))) for _ in range(2)],
            [mx.nd.array(rng.uniform(size=(3, 2))) for _ in range(2)],
            [mx.nd.zeros((3, 2)) for _ in range(2)], [mx.nd.zeros((3, 2)) for _ in range(2)])


def test_adamw_wrapper_takes_a_scalar_rescale_grad():
    w, g, m, v = _tensors(0)
    mx.nd.contrib.adamw_update(w[0], g[0], m[0], v[0], 0.5, lr=0.1, eta=1.0, wd=0.01, out=w[0])
    w2, g2, m2, v2 = _tensors(0)
    mx.nd._internal._adamw_update(w2[0], g2[0], m2[0], v2[0], mx.nd.array([0.5]), lr=0.1,
                                  eta=1.0, wd=0.01, out=w2[0])
    for a, b in ((w, w2), (m, m2), (v, v2)):
        np.testing.assert_allclose(a[0].asnumpy(), b[0].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(m[0].asnumpy(), 0.1 * 0.5 * g[0].asnumpy(), rtol=1e-6)


def test_multi_adamw_wrapper_equals_one_call_per_tensor():
    w, g, m, v = _tensors(1)
    mx.nd.contrib.multi_adamw_update(w, g, m, v, 2.0, lrs=[0.1, 0.2], wds=[0.0, 0.1],
                                     etas=[1.0, 0.5], out=w)
    w2, g2, m2, v2 = _tensors(1)
    for i, (lr, wd, eta) in enumerate(((0.1, 0.0, 1.0), (0.2, 0.1, 0.5))):
        mx.nd.contrib.adamw_update(w2[i], g2[i], m2[i], v2[i], 2.0, lr=lr, eta=eta, wd=wd,
                                   out=w2[i])
    for a, b in zip(w + m + v, w2 + m2 + v2):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5)


def test_multi_lamb_wrapper_updates_every_tensor():
    w, g, m, v = _tensors(2)
    before = [x.asnumpy().copy() for x in w]
    mx.nd.contrib.multi_lamb_update(w, g, m, v, step_count=[1, 1], lrs=[0.1, 0.1],
                                    wds=[0.0, 0.0], out=w)
    for x, b, gi in zip(w, before, g):
        # first step with bias correction: the update direction is g / (|g| + eps)
        r = np.linalg.norm(b) / np.linalg.norm(gi.asnumpy() / (np.abs(gi.asnumpy()) + 1e-6))
        np.testing.assert_allclose(x.asnumpy(), b - 0.1 * r * gi.asnumpy() /
                                   (np.abs(gi.asnumpy()) + 1e-6), rtol=1e-4)


def test_symbol_wrappers_compose():
    s = mx.sym.contrib.adamw_update(mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("m"),
                                    mx.sym.var("v"), mx.sym.var("r"), lr=0.1, eta=1.0)
    assert s.list_arguments() == ["w", "g", "m", "v", "r"]
