"""The fused multi-weight SGD ops against values probed on MXNet 1.9.1."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError


def _pair():
    return (mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, 0.5]), mx.nd.array([3.0, 4.0, 5.0]),
            mx.nd.array([1.0, 1.0, 1.0]))


def test_multi_sgd_update_in_place_with_per_weight_rates():
    w0, g0, w1, g1 = _pair()
    out = mx.nd.multi_sgd_update(w0, g0, w1, g1, lrs=(0.1, 0.2), wds=(0.0, 0.1), num_weights=2,
                                 rescale_grad=2.0, clip_gradient=1.5, out=[w0, w1])
    np.testing.assert_allclose(out[0].asnumpy(), [0.9, 1.9], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [2.64, 3.62, 4.6], rtol=1e-6)
    np.testing.assert_allclose(w1.asnumpy(), [2.64, 3.62, 4.6], rtol=1e-6)


def test_multi_sgd_mom_update_updates_momentum_in_place():
    w0, g0, w1, g1 = _pair()
    w0[:] = [0.9, 1.9]
    w1[:] = [2.64, 3.62, 4.6]
    m0, m1 = mx.nd.zeros(2), mx.nd.zeros(3)
    out = mx.nd.multi_sgd_mom_update(w0, g0, m0, w1, g1, m1, lrs=(0.1, 0.2), wds=(0.0, 0.1),
                                     momentum=0.9, num_weights=2, out=[w0, w1])
    np.testing.assert_allclose(out[0].asnumpy(), [0.85, 1.85], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [2.3872, 3.3476, 4.308], rtol=1e-5)
    np.testing.assert_allclose(m0.asnumpy(), [-0.05, -0.05], rtol=1e-6)
    np.testing.assert_allclose(m1.asnumpy(), [-0.2528, -0.2724, -0.292], rtol=1e-5)


def test_multi_mp_sgd_updates_the_float32_master_copy():
    w32 = mx.nd.array([0.9, 1.9])
    wh = w32.astype("float16")
    gh = mx.nd.array([0.5, 0.5]).astype("float16")
    out = mx.nd.multi_mp_sgd_update(wh, gh, w32, lrs=(0.1,), wds=(0.0,), num_weights=1,
                                    out=[wh])
    assert out[0].dtype == np.float16
    np.testing.assert_allclose(w32.asnumpy(), [0.85, 1.85], rtol=1e-6)
    np.testing.assert_allclose(wh.asnumpy(), [0.85, 1.85], rtol=1e-3)


def test_preloaded_multi_sgd_reads_rates_from_arrays():
    w0, g0, w1, g1 = _pair()
    w0[:] = [0.85, 1.85]
    w1[:] = [2.3872, 3.3476, 4.308]
    out = mx.nd.preloaded_multi_sgd_update(w0, g0, w1, g1, mx.nd.array([0.1, 0.2]),
                                           mx.nd.array([0.0, 0.1]), num_weights=2,
                                           out=[w0, w1])
    np.testing.assert_allclose(out[0].asnumpy(), [0.8, 1.8], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [2.139456, 3.080648, 4.02184], rtol=1e-5)


def test_symbolic_form_infers_shapes_and_too_few_rates_is_a_param_error():
    s = mx.sym.multi_sgd_update(mx.sym.var("a"), mx.sym.var("b"), lrs=(0.1,), wds=(0.0,),
                                num_weights=1)
    ex = s.bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0]), "b": mx.nd.array([1.0, 1.0])})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), [0.9, 1.9], rtol=1e-6)
    w0, g0, w1, g1 = _pair()
    with pytest.raises(ParamError, match="2 weights need 2 learning rates"):
        mx.nd.multi_sgd_update(w0, g0, w1, g1, lrs=(0.1,), wds=(0.0,), num_weights=2)
