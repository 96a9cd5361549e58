"""BatchNorm on sparse inputs: a dense fallback, refused with fix_gamma as MXNet 1.9.1."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError


def _inputs():
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.normal(size=(4, 3))).tostype("row_sparse")
    return x, mx.nd.ones(3), mx.nd.zeros(3), mx.nd.zeros(3), mx.nd.ones(3)


def test_fix_gamma_on_sparse_input_is_refused_in_both_front_ends(monkeypatch):
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    with pytest.raises(MXNetError, match="fix_gamma=True is not supported for sparse"):
        mx.nd.BatchNorm(*_inputs())
    data = mx.sym.Variable("data", stype="row_sparse")
    x, g, b, m, v = _inputs()
    with pytest.raises(MXNetError, match="fix_gamma=True is not supported for sparse"):
        mx.sym.BatchNorm(data, fix_gamma=True, name="bn").bind(
            mx.cpu(), {"data": x, "bn_gamma": g, "bn_beta": b}, aux_states=[m, v]).forward()


def test_without_fix_gamma_sparse_input_falls_back_to_dense(monkeypatch):
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    x, g, b, m, v = _inputs()
    out = mx.nd.BatchNorm(x, g, b, m, v, fix_gamma=False, use_global_stats=True)
    ref = mx.nd.BatchNorm(x.tostype("default"), g, b, m, v, fix_gamma=False,
                          use_global_stats=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
