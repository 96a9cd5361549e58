"""AdamW, LAMB phases, multi-precision SGD and multi_lars against NumPy formulas."""
import numpy as np
import pytest

import sparsym as mx

W, G = np.array([1.0, 2.0]), np.array([0.1, 0.2])


def _nd(x, dtype="float32"):
    return mx.nd.array(x, dtype=dtype)


def test_adamw_update_and_skip_on_inf_scale():
    mean, var = _nd([0.1, 0.1]), _nd([0.1, 0.1])
    out = mx.nd._adamw_update(_nd(W), _nd(G), mean, var, _nd([2.0]), lr=0.1, eta=0.5, wd=0.01)
    g = 2 * G
    m, v = 0.9 * 0.1 + 0.1 * g, 0.999 * 0.1 + 0.001 * g * g
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), v, rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), W - 0.5 * (0.1 * m / (np.sqrt(v) + 1e-8)
                                                         + 0.01 * W), rtol=1e-6)
    same = mx.nd._adamw_update(_nd(W), _nd(G), mean, var, _nd([np.inf]), lr=0.1, eta=0.5)
    np.testing.assert_array_equal(same.asnumpy(), W)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-6)


@pytest.mark.parametrize("bias_correction", [True, False])
def test_lamb_phases(bias_correction):
    mean, var = _nd([0.1, 0.1]), _nd([0.1, 0.1])
    g = mx.nd.lamb_update_phase1(_nd(W), _nd(G), mean, var, t=2, wd=0.01,
                                 bias_correction=bias_correction)
    m, v = 0.9 * 0.1 + 0.1 * G, 0.999 * 0.1 + 0.001 * G * G
    if bias_correction:
        m, v = m / (1 - 0.9 ** 2), v / (1 - 0.999 ** 2)
    want = m / (np.sqrt(v) + 1e-6) + 0.01 * W
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5)
    out = mx.nd.lamb_update_phase2(_nd(W), g, _nd([2.0]), _nd([0.5]), lr=0.1, lower_bound=3)
    np.testing.assert_allclose(out.asnumpy(), W - 0.1 * (3 / 0.5) * want, rtol=1e-5)
    out = mx.nd.lamb_update_phase2(_nd(W), g, _nd([0.0]), _nd([0.5]), lr=0.1)
    np.testing.assert_allclose(out.asnumpy(), W - 0.1 * want, rtol=1e-5)


def test_mp_sgd_updates_master_weight():
    w32 = _nd(W)
    out = mx.nd.mp_sgd_update(_nd(W, "float16"), _nd(G, "float16"), w32, lr=0.1, wd=0.1)
    want = (1 - 0.1 * 0.1) * W - 0.1 * G
    assert out.dtype == np.float16
    np.testing.assert_allclose(w32.asnumpy(), want, rtol=1e-3)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-3)
    mom, w32 = _nd([0.5, 0.5]), _nd(W)
    mx.nd.mp_sgd_mom_update(_nd(W, "float16"), _nd(G, "float16"), mom, w32, lr=0.1,
                            momentum=0.9)
    np.testing.assert_allclose(mom.asnumpy(), 0.45 - 0.1 * G, rtol=1e-3)
    np.testing.assert_allclose(w32.asnumpy(), W + 0.45 - 0.1 * G, rtol=1e-3)


def test_multi_lars():
    out = mx.nd.multi_lars(_nd([0.1, 0.2]), _nd([4.0, 0.0]), _nd([1.0, 1.0]), _nd([0.01, 0.01]),
                           eta=0.5, eps=1e-8, rescale_grad=2.0)
    np.testing.assert_allclose(out.asnumpy(), [0.1 * 0.5 * 2 / (2 + 0.02 + 1e-8), 0.2],
                               rtol=1e-6)
