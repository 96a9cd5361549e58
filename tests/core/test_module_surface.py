"""MXNet 1.9.1's small modules through the public API: base, util, context, runtime,
engine, attribute, name, symbol.sparse, visualization (behaviour probed on the oracle)."""
import importlib
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError


@pytest.mark.parametrize("mod", ["sparsym.attribute", "sparsym.name", "sparsym.symbol.sparse",
                                 "sparsym.ndarray.sparse", "sparsym.util", "sparsym.runtime",
                                 "sparsym.engine", "sparsym.visualization"])
def test_modules_import(mod):
    assert importlib.import_module(mod) is not None


def test_base_names():
    from sparsym.base import _as_list, integer_types, mx_real_t, numeric_types, py_str, string_types
    assert mx_real_t is np.float32 and string_types == (str,)
    assert isinstance(np.float64(1), numeric_types) and isinstance(np.int64(1), integer_types)
    assert py_str(b"ab") == "ab" and _as_list(3) == [3] and _as_list((1,)) == (1,)


def test_data_dir(monkeypatch):
    from sparsym.base import data_dir
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")
    monkeypatch.setenv("MXNET_HOME", "/tmp/mxnet_data")
    assert data_dir() == "/tmp/mxnet_data"


def test_not_implemented_for_symbol():
    from sparsym.base import NotImplementedForSymbol
    with pytest.raises(NotImplementedForSymbol, match="asnumpy is not implemented for Symbol"):
        mx.sym.var("a").asnumpy()


def test_util_env_roundtrip():
    mx.util.setenv("SPARSYM_TEST_ENV", "7")
    assert mx.util.getenv("SPARSYM_TEST_ENV") == "7" == os.environ["SPARSYM_TEST_ENV"]
    mx.util.setenv("SPARSYM_TEST_ENV", None)
    assert mx.util.getenv("SPARSYM_TEST_ENV") is None


def test_np_shape_scope_and_decorator():
    assert not mx.is_np_shape()
    with mx.np_shape():
        assert mx.is_np_shape()
        with mx.np_shape(False):
            assert not mx.is_np_shape()
        assert mx.is_np_shape()
    assert not mx.is_np_shape()
    assert mx.util.set_np_shape(True) is False and mx.util.set_np_shape(False) is True

    @mx.use_np_shape
    def inside():
        return mx.is_np_shape()
    assert inside() and not mx.is_np_shape()


def test_np_array_semantics_is_refused():
    assert mx.is_np_array() is False
    with pytest.raises(NotImplementedError, match="mx.np"):
        mx.np_array(True)

    @mx.use_np  # decorating works (test files decorate at import); calling refuses
    def f():
        return 1
    with pytest.raises(NotImplementedError):
        f()


def test_gpu_context_raises_only_when_used():
    g = mx.gpu(0)
    assert str(g) == "gpu(0)" and g.device_typeid == 2
    assert mx.Context.default_ctx == mx.cpu(0)
    with pytest.raises(MXNetError, match="no GPU backend"):
        mx.nd.zeros((2,), ctx=g)
    with pytest.raises(MXNetError, match="no GPU backend"):
        mx.nd.ones((2,)).as_in_context(g)
    with pytest.raises(MXNetError, match="no GPU backend"):
        mx.sym.var("a").simple_bind(g, a=(2,))
    with pytest.raises(MXNetError, match="no GPU backend"):
        mx.context.gpu_memory_info(0)


def test_runtime_features_truthful():
    f = mx.runtime.Features()
    assert f is mx.runtime.Features() and len(f) == 33
    assert not f.is_enabled("CUDA") and not f.is_enabled("cudnn")
    assert f.is_enabled("INT64_TENSOR_SIZE")
    assert [x.name for x in mx.runtime.feature_list()][:3] == ["CUDA", "CUDNN", "NCCL"]
    assert repr(f["CUDA"]) == "✖ CUDA"
    with pytest.raises(RuntimeError, match="unknown"):
        f.is_enabled("NOPE")


def test_engine_bulk():
    prev = mx.engine.set_bulk_size(5)
    assert mx.engine.set_bulk_size(prev) == 5
    with mx.engine.bulk(10):
        assert mx.engine.set_bulk_size(10) == 10
        x = mx.nd.ones((3,))
        x += 1
    assert (x.asnumpy() == 2).all()


def test_attribute_and_name_modules():
    from sparsym.attribute import AttrScope
    from sparsym.name import NameManager, Prefix
    with AttrScope(group="4"):
        a = mx.sym.var("a")
    assert a.attr("group") == "4"
    with Prefix("p_"):
        assert mx.sym.FullyConnected(a, num_hidden=2).name == "p_fullyconnected0"
    with NameManager():
        assert mx.sym.exp(a).name == "exp0"


def test_symbol_sparse_module():
    import sparsym.symbol.sparse as ss
    y = ss.dot(mx.sym.var("x", stype="csr"), mx.sym.var("w"))
    assert y.list_arguments() == ["x", "w"]
