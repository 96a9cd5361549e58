"""Recorded ops whose output shape depends on the values (boolean_mask) through backward."""
import numpy as np

import sparsym as mx


def test_boolean_mask_backward_with_changing_kept_counts():
    a = mx.nd.array(np.arange(12).reshape(4, 3))
    a.attach_grad(grad_req="add")
    total = np.zeros((4, 3))
    # the same tape structure with different kept counts: each needs its own plan
    for mask in ([0, 1, 0, 1], [1, 1, 1, 0], [0, 0, 1, 0], [0, 1, 0, 1]):
        idx = mx.nd.array(mask)
        with mx.autograd.record():
            b = mx.nd.contrib.boolean_mask(a, idx)
            loss = (b * b).sum()
        loss.backward()
        assert b.shape == (sum(mask), 3)
        total += 2 * a.asnumpy() * np.array(mask)[:, None]
        np.testing.assert_allclose(a.grad.asnumpy(), total)
