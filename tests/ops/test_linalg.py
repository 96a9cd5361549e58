"""mx.nd.linalg / mx.sym.linalg front ends: factorizations checked by their defining
identities, MXNet's sign conventions and shapes (values and gradients of every linalg op
are in the registry sweeps)."""
import numpy as np
import pytest

import sparsym as mx


def test_gelqf_reconstructs_and_is_orthonormal():
    a = np.random.RandomState(0).randn(2, 3, 5)
    q, low = mx.nd.linalg.gelqf(mx.nd.array(a, dtype=np.float64))
    q, low = q.asnumpy(), low.asnumpy()
    np.testing.assert_allclose(low @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ q.swapaxes(1, 2), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)
    assert np.allclose(low, np.tril(low))
    with pytest.raises(mx.MXNetError, match="no more rows"):
        mx.nd.linalg.gelqf(mx.nd.ones((4, 3)))


def test_syevd_sign_convention_and_reconstruction():
    b = np.random.RandomState(1).randn(4, 4)
    s = b + b.T
    u, lam = mx.nd.linalg.syevd(mx.nd.array(s, dtype=np.float64))
    u, lam = u.asnumpy(), lam.asnumpy()
    assert np.all(np.diff(lam) >= 0)
    np.testing.assert_allclose(u.T @ np.diag(lam) @ u, s, atol=1e-12)
    rows = np.arange(4)
    assert np.all(u[rows, np.abs(u).argmax(1)] > 0)  # MXNet: largest entry of a row positive


def test_linalg_namespaces_and_aliases():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    g = mx.sym.linalg.gemm2(a, b, transpose_b=True)
    assert g.name.startswith("gemm2")
    assert g.infer_shape(a=(2, 3, 4), b=(2, 5, 4))[1] == [(2, 3, 5)]
    x = mx.nd.array([[4.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(mx.nd.linalg_potrf(x).asnumpy(), mx.nd.linalg.potrf(x).asnumpy())
    sign, logdet = mx.nd.linalg.slogdet(mx.nd.array([[1.0, 2.0], [3.0, 4.0]]))
    assert sign.shape == (1,) and sign.asscalar() == -1
    np.testing.assert_allclose(logdet.asscalar(), np.log(2.0), rtol=1e-6)
    assert mx.nd.linalg.maketrian(mx.nd.ones((2, 6)), offset=1).shape == (2, 4, 4)
    with pytest.raises(mx.MXNetError, match="triangular number"):
        mx.nd.linalg.maketrian(mx.nd.ones((5,)))
    with pytest.raises(mx.MXNetError, match="positive definite"):
        mx.nd.linalg.potrf(mx.nd.array([[1.0, 2.0], [2.0, 1.0]]))


def test_gemm_row_axis():
    a, b = np.random.rand(2, 3, 4, 6), np.random.rand(2, 6, 4, 5)
    out = mx.nd.linalg.gemm2(mx.nd.array(a), mx.nd.array(b), axis=-3)
    np.testing.assert_allclose(out.asnumpy(), np.einsum("nikj,njkl->nikl", a, b), rtol=1e-5)
    with pytest.raises(mx.MXNetError):
        mx.nd.linalg.gemm2(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)))
