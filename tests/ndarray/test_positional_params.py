"""Generated front ends take MXNet's positional order: inputs, then parameters in
declaration order (mx.nd.*, mx.sym.*, mx.nd.sparse.*, fluent methods)."""
import inspect

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError

A = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture
def x():
    return mx.nd.array(A)


def test_nd_positional_parameters(x):
    np.testing.assert_array_equal(mx.nd.sum(x, 1).asnumpy(), A.sum(1))
    np.testing.assert_array_equal(mx.nd.sum(x, 1, True).asnumpy(), A.sum(1, keepdims=True))
    np.testing.assert_array_equal(mx.nd.transpose(x, (1, 0)).asnumpy(), A.T)
    np.testing.assert_array_equal(mx.nd.reshape(x, (3, 2)).asnumpy(), A.reshape(3, 2))
    np.testing.assert_array_equal(mx.nd.clip(x, 0, 2).asnumpy(), A.clip(0, 2))
    np.testing.assert_array_equal(mx.nd.slice_axis(x, 1, 0, 2).asnumpy(), A[:, :2])
    w = mx.nd.ones((4, 3))
    out = mx.nd.FullyConnected(x, w, None, 4, True)  # bias skipped, num_hidden, no_bias
    np.testing.assert_allclose(out.asnumpy(), A @ np.ones((3, 4)))


def test_nd_positional_and_keyword_mix(x):
    np.testing.assert_array_equal(mx.nd.clip(x, 0, a_max=2).asnumpy(), A.clip(0, 2))
    with pytest.raises(ParamError, match="multiple values for parameter 'axis'"):
        mx.nd.sum(x, 1, axis=1)
    with pytest.raises(ParamError, match="positional parameter values"):
        mx.nd.clip(x, 0, 2, 3)


def test_fluent_methods_positional(x):
    np.testing.assert_array_equal(x.clip(0, 2).asnumpy(), A.clip(0, 2))
    np.testing.assert_array_equal(x.sum(0).asnumpy(), A.sum(0))
    assert x.reshape((3, 2)).shape == (3, 2)
    assert x.reshape(3, 2).shape == (3, 2)
    s = mx.sym.var("s")
    c = s.clip(0, 2)
    assert c.attr_dict()[c.name] == {"a_min": "0", "a_max": "2"}


def test_sparse_front_end_positional():
    csr = mx.nd.array(A).tostype("csr")
    dns = mx.nd.ones((2, 4))
    out = mx.nd.sparse.dot(csr, dns, True)  # transpose_a
    np.testing.assert_allclose(out.asnumpy(), A.T @ np.ones((2, 4)))


def test_sym_positional_parameters(x):
    s = mx.sym.var("a")
    y = mx.sym.transpose(s, (1, 0), name="t")
    assert y.attr_dict()["t"] == {"axes": "(1, 0)"}
    ex = mx.sym.sum(s, 1).bind(mx.cpu(), {"a": x})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), A.sum(1))
    with pytest.raises(ParamError, match="multiple values"):
        mx.sym.sum(s, 1, axis=0)
    with pytest.raises(ParamError, match="pass parameters by keyword"):
        mx.sym.Concat(s, s, 1)


def test_signature_and_doc_show_mxnet_order():
    sig = inspect.signature(mx.nd.FullyConnected)
    assert list(sig.parameters)[:6] == ["data", "weight", "bias", "num_hidden", "no_bias",
                                        "flatten"]
    assert "out" in sig.parameters and "name" in sig.parameters
    assert mx.nd.sum.__doc__.startswith("sum(data=None, axis=None, keepdims=False")
    assert list(inspect.signature(mx.sym.clip).parameters)[:3] == ["data", "a_min", "a_max"]
    concat = inspect.signature(mx.nd.concat).parameters
    assert [p.kind for p in concat.values()] == [inspect.Parameter.VAR_POSITIONAL,
                                                  inspect.Parameter.VAR_KEYWORD]
