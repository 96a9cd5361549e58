"""mx.sym._internal / mx.nd._internal expose every op by its registered name."""
import numpy as np

import sparsym as mx


def test_internal_namespaces_call_registered_ops():
    v = mx.sym.Variable("v", stype="row_sparse")
    s = mx.sym._internal._square_sum(v, axis=1, keepdims=True)
    assert s.list_arguments() == ["v"]
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(mx.nd._internal._plus_scalar(x, scalar=1.0).asnumpy(),
                               x.asnumpy() + 1)
