"""Gradients of shape ops whose data input is sparse (the forward falls back to dense):
the backward used to receive the sparse data and crash (found by the op sweep)."""
import numpy as np
import pytest

import sparsym as mx


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
@pytest.mark.parametrize("make,ref", [
    (lambda x: mx.sym.clip(x, a_min=-0.2, a_max=0.3),
     lambda x, g: g * ((x >= -0.2) & (x <= 0.3))),
    (lambda x: mx.sym.transpose(x), lambda x, g: g.T),
    (lambda x: mx.sym.tile(x, reps=(2, 1)), lambda x, g: g[:4] + g[4:]),
])
def test_backward_through_a_shape_op_on_sparse_data(stype, make, ref):
    rng = np.random.RandomState(3)
    x = rng.uniform(-0.5, 0.5, (4, 6)) * (rng.uniform(size=(4, 6)) > 0.5)
    x[1] = 0
    s = make(mx.sym.var("x", stype=stype))
    ex = s.simple_bind(mx.cpu(), x=(4, 6), stype_dict={"x": stype}, grad_req="write")
    ex.arg_dict["x"][:] = mx.nd.array(x).tostype(stype)
    ex.forward(is_train=True)
    g = rng.uniform(size=ex.outputs[0].shape)
    ex.backward(mx.nd.array(g))
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), ref(x, g).astype(np.float32),
                               rtol=1e-6, atol=1e-6)
