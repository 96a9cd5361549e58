"""reset_arrays zeroes its inputs in place (MXNet's Parameter.zero_grad helper)."""
import numpy as np
import pytest

import sparsym as mx


def test_reset_arrays_in_place():
    arrs = [mx.nd.ones((2, 3)), mx.nd.ones((4,), dtype="float16"), mx.nd.ones((1, 1, 2))]
    mx.nd.reset_arrays(*arrs, num_arrays=len(arrs))
    for a in arrs:
        assert not a.asnumpy().any()
    assert arrs[1].dtype == np.float16
    with pytest.raises(mx.base.MXNetError, match="num_arrays"):
        mx.nd.reset_arrays(mx.nd.ones(2), num_arrays=0)
