"""_contrib_hawkesll (nd.contrib.hawkesll, sym.contrib.hawkesll): log-likelihood, carried
state and gradients against MXNet 1.9.1 (tests/fixtures/make_compat_fixtures.py --only
hawkes), and the gradient against finite differences."""
import os

import numpy as np

import sparsym as mx

R = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet",
                         "compat_hawkes.npz"))
NAMES = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]


def _args():
    return [mx.nd.array(R[k], dtype=R[k].dtype) for k in NAMES]


def test_forward_and_gradient_match_mxnet():
    args = _args()
    for a in args[:3]:
        a.attach_grad()
    with mx.autograd.record():
        ll, state = mx.nd.contrib.hawkesll(*args)
    ll.backward(mx.nd.array(R["head"]))
    np.testing.assert_allclose(ll.asnumpy(), R["ll"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), R["out_state"], rtol=1e-5, atol=1e-7)
    for a, key in zip(args, ("g_lda", "g_alpha", "g_beta")):
        np.testing.assert_allclose(a.grad.asnumpy(), R[key], rtol=1e-5, atol=1e-5)
    assert ll.dtype == np.float32 and state.shape == (5, 3)


def test_symbolic_form_and_finite_differences():
    syms = [mx.sym.var(k) for k in NAMES]
    out = mx.sym.contrib.hawkesll(*syms)
    assert out.list_outputs()[0].endswith("output") and len(out.list_outputs()) == 2
    args = {k: mx.nd.array(R[k], dtype=R[k].dtype) for k in NAMES}
    grads = {k: mx.nd.zeros(R[k].shape) for k in NAMES[:3]}
    exe = out.bind(mx.cpu(), args, args_grad=grads,
                   grad_req={k: "write" if k in grads else "null" for k in NAMES})
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), R["ll"], rtol=1e-5, atol=1e-5)
    exe.backward([mx.nd.ones((5,)), mx.nd.zeros((5, 3))])
    # d(sum ll)/d alpha by central differences in float64
    from sparsym.kernels.hawkes import hawkesll
    x = {k: R[k].astype(np.float64) if k != "marks" else R[k] for k in NAMES}
    for i in range(3):
        hi, lo = dict(x), dict(x)
        hi["alpha"] = x["alpha"] + np.eye(3)[i] * 1e-6
        lo["alpha"] = x["alpha"] - np.eye(3)[i] * 1e-6
        num = (hawkesll(*[hi[k] for k in NAMES])[0].sum()
               - hawkesll(*[lo[k] for k in NAMES])[0].sum()) / 2e-6
        assert abs(grads["alpha"].asnumpy()[i] - num) < 1e-3 * max(1.0, abs(num))
