"""The one lazy-update policy (ops/optim/service.py): its rules, and the update operators
and the optimizers deciding the same way through it."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.ops.optim.service import LAZY_RULES, lazy_update_applies


def test_rules():
    rsp, dns = "row_sparse", "default"
    assert not any(lazy_update_applies(r, dns, True, rsp, (rsp,)) for r in LAZY_RULES)
    assert lazy_update_applies("param", rsp, True, dns, (rsp,))
    assert not lazy_update_applies("param", rsp, False, dns, ())
    assert lazy_update_applies("states", rsp, True, rsp, (rsp, rsp))
    assert not lazy_update_applies("states", rsp, True, rsp, (rsp, dns))
    assert lazy_update_applies("all_rsp", rsp, True, rsp, (rsp,))
    assert not lazy_update_applies("all_rsp", rsp, True, dns, (dns,))
    assert lazy_update_applies("always", rsp, False, dns, ())
    assert not lazy_update_applies("never", rsp, True, rsp, ())
    with pytest.raises(ValueError, match="unknown rule 'lazyish'"):
        lazy_update_applies("lazyish", rsp, True, rsp, ())


@pytest.mark.parametrize("lazy", [True, False])
def test_adam_optimizer_and_operator_agree_on_a_row_sparse_gradient(lazy):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    g = mx.nd.array(rng.standard_normal((5, 3)).astype(np.float32)).tostype("row_sparse")
    g = mx.nd.sparse.retain(g, mx.nd.array([1, 3]))
    kw = dict(beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.1, rescale_grad=1.0)

    w_op = mx.nd.array(w0)
    mean, var = mx.nd.zeros((5, 3)), mx.nd.zeros((5, 3))
    t_lr = 0.1 * np.sqrt(1 - 0.999) / (1 - 0.9)
    mx.nd.adam_update(w_op, g, mean, var, out=w_op, lr=t_lr, lazy_update=lazy, **kw)

    opt = mx.optimizer.Adam(learning_rate=0.1, wd=0.1, lazy_update=lazy)
    w_opt = mx.nd.array(w0)
    mx.optimizer.get_updater(opt)(0, g, w_opt)

    np.testing.assert_allclose(w_opt.asnumpy(), w_op.asnumpy(), rtol=1e-6)
    untouched = np.allclose(w_op.asnumpy()[[0, 2, 4]], w0[[0, 2, 4]])
    assert untouched == lazy  # lazy: weight decay reaches only the gradient's rows
