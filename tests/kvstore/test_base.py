"""KVStoreBase, its registry, TestStore and create (MXNet 1.9's mxnet.kvstore.base)."""
import numpy as np
import pytest

import sparsym as mx


def test_builtin_stores_are_kvstorebase():
    for name in ("local", "device", "Local", "local_allreduce_cpu"):
        kv = mx.kv.create(name)
        assert isinstance(kv, mx.kv.KVStoreBase) and isinstance(kv, mx.kv.KVStore)
        assert kv.type == name.lower()
    assert mx.kv.create("local").is_capable(mx.kv.KVStoreBase.OPTIMIZER)
    with pytest.raises(ValueError, match="Unknown capability: foo"):
        mx.kv.create("local").is_capable("foo")
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)
    with pytest.raises(mx.MXNetError, match="Unknown KVStore type 'nope'"):
        mx.kv.create("nope")


def test_teststore():
    kv = mx.kv.create("teststore")
    assert (kv.type, kv.rank, kv.num_workers) == ("teststore", 0, 1)
    assert not kv.is_capable("optimizer")
    vals = [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2]
    kv.pushpull("k", vals)
    assert [v.asnumpy().tolist() for v in vals] == [[3, 3], [3, 3]]
    out = mx.nd.zeros((2,))
    kv.pushpull("k", [mx.nd.ones((2,)), mx.nd.ones((2,))], out=out)
    assert out.asnumpy().tolist() == [2, 2]
    outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]
    kv.broadcast("k", mx.nd.ones((2,)) * 5, out=outs)
    assert [o.asnumpy().tolist() for o in outs] == [[5, 5], [5, 5]]
    with pytest.raises(NotImplementedError):
        kv.set_optimizer(mx.optimizer.SGD())


def test_register_custom_store():
    @mx.kv.KVStoreBase.register
    class DoubleStore(mx.kv.KVStoreBase):
        def broadcast(self, key, value, out, priority=0):
            out[:] = value

        def pushpull(self, key, value, out=None, priority=0):
            (value if out is None else out)[:] = value * 2

    try:
        kv = mx.kv.create("doublestore")
        assert isinstance(kv, DoubleStore)
        x = mx.nd.ones((3,))
        kv.pushpull(0, x)
        np.testing.assert_array_equal(x.asnumpy(), [2, 2, 2])
        with pytest.raises(NotImplementedError):
            _ = kv.rank
        with pytest.warns(UserWarning, match="overriding existing kvstore"):
            mx.kv.KVStoreBase.register(DoubleStore)
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("doublestore", None)


def test_modules_and_server():
    assert mx.kvstore.kvstore.KVStore is mx.kv.KVStore
    assert mx.kvstore.base.KVStoreBase is mx.kv.KVStoreBase
    server = mx.kvstore.kvstore_server.KVStoreServer(mx.kv.create("local"))
    with pytest.raises(NotImplementedError, match="Ray actors"):
        server.run()
