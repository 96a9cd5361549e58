"""amp_cast/amp_multicast, all_finite, multi_all_finite,
multi_sum_sq, div_sqrt_dim and allclose: values recorded from MXNet 1.9.1 or
against NumPy, numeric gradients in float64."""
import numpy as np

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(8)


def test_amp_and_finiteness():
    r = mx.nd.amp_multicast(mx.nd.ones(2, dtype="float16"), mx.nd.ones(2), num_outputs=2)
    assert [x.dtype for x in r] == [np.float32, np.float32]
    r = mx.nd.amp_multicast(mx.nd.ones(2, dtype="float16"), mx.nd.ones(2), num_outputs=2,
                            cast_narrow=True)
    assert [x.dtype for x in r] == [np.float16, np.float16]
    assert mx.nd.amp_cast(mx.nd.ones(2, dtype="int32"), dtype="float16").dtype == np.int32
    assert mx.nd.amp_cast(mx.nd.ones(2), dtype="float16").dtype == np.float16
    a, b = mx.nd.array([1, 2, np.inf]), mx.nd.array([1, 2, 3])
    assert mx.nd.all_finite(a).asnumpy().tolist() == [0] and mx.nd.all_finite(b).asnumpy()[0] == 1
    assert mx.nd.multi_all_finite(a, b, num_arrays=2).asnumpy().tolist() == [0]
    assert mx.nd.multi_all_finite(b, b, num_arrays=2).asnumpy().tolist() == [1]
    assert mx.nd.multi_sum_sq(a, b, num_arrays=2).asnumpy().tolist() == [np.inf, 14]
    assert mx.nd.contrib.allclose(b, b + 1e-6).asnumpy() == 1
    assert mx.nd.contrib.allclose(a, b).asnumpy() == 0
    s = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2)
    assert s.list_outputs() == ["amp_multicast0_output0", "amp_multicast0_output1"]


def test_div_sqrt_dim_and_amp_cast_gradient():
    x = rng.randn(3, 4)
    s = mx.sym.contrib.div_sqrt_dim(mx.sym.var("x"))
    check_symbolic_forward(s, {"x": x}, [x / 2.0])
    check_numeric_gradient(s, {"x": x}, rtol=1e-6, atol=1e-8, dtype=np.float64)
    s = mx.sym.amp_cast(mx.sym.var("x"), dtype="float64")
    check_numeric_gradient(s, {"x": x}, rtol=1e-6, atol=1e-8, dtype=np.float64)
