"""KVStore 'local' / 'device': MXNet 1.9.1's semantics (inventory section 3, probed)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError, ShapeError

SHAPE = (4, 2)


@pytest.fixture(params=["local", "device"])
def kv(request):
    return mx.kv.create(request.param)


def test_properties(kv):
    assert kv.type in ("local", "device") and kv.rank == 0 and kv.num_workers == 1
    assert kv.is_capable("optimizer")


def test_init_push_pull_single_and_list(kv):
    kv.init(3, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 1)
    kv.push(3, mx.nd.ones(SHAPE) * 4)  # no updater: replaced
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 4)
    kv.init([5, 7], [mx.nd.zeros(SHAPE), mx.nd.ones(SHAPE)])
    # a list of values per key is summed (per-device copies)
    kv.push([5, 7], [[mx.nd.ones(SHAPE)] * 3, [mx.nd.ones(SHAPE) * 2] * 2])
    outs = [[mx.nd.zeros(SHAPE)] * 2, mx.nd.zeros(SHAPE)]
    kv.pull([5, 7], out=outs)
    np.testing.assert_array_equal(outs[0][1].asnumpy(), 3)
    np.testing.assert_array_equal(outs[1].asnumpy(), 4)


def test_errors(kv):
    kv.init("a", mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="duplicate init of key a"):
        kv.init("a", mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="key b has not been inited"):
        kv.pull("b", out=mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="Mixed key types are not allowed"):
        kv.init(1, mx.nd.ones(SHAPE))
    with pytest.raises(ShapeError, match="key a holds shape"):
        kv.push("a", mx.nd.ones((3, 3)))
    with pytest.raises(MXNetError, match="Mixed key types"):
        mx.kv.create("local").init([1, "x"], [mx.nd.ones(SHAPE)] * 2)


def test_updater_and_str_keys(kv):
    kv.init("w", mx.nd.ones(SHAPE))
    seen = []

    def upd(key, grad, weight):
        seen.append(key)
        weight[:] += grad

    kv._set_updater(upd)
    kv.push("w", [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])
    out = mx.nd.zeros(SHAPE)
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), 3)
    assert seen == ["w"]


def test_set_optimizer_and_states(kv, tmp_path):
    kv.init(0, mx.nd.ones(SHAPE))
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5, momentum=0.9))
    kv.push(0, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), 0.5)
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname, dump_optimizer=True)
    kv.push(0, mx.nd.ones(SHAPE))
    kv.pull(0, out=out)
    after = out.asnumpy().copy()
    kv2 = mx.kv.create(kv.type)
    kv2.init(0, mx.nd.ones(SHAPE) * 0.5)
    kv2.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5, momentum=0.9))
    kv2.load_optimizer_states(fname)
    kv2.push(0, mx.nd.ones(SHAPE))
    kv2.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), after)  # momentum restored


def test_pushpull_and_broadcast(kv):
    kv.init(1, mx.nd.zeros(SHAPE))
    val = mx.nd.ones(SHAPE) * 2
    kv.pushpull(1, val)
    np.testing.assert_array_equal(val.asnumpy(), 2)
    out = mx.nd.zeros(SHAPE)
    kv.pushpull(1, mx.nd.ones(SHAPE), out=out)
    np.testing.assert_array_equal(out.asnumpy(), 1)
    outs = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.broadcast(2, mx.nd.ones(SHAPE) * 9, out=outs)
    np.testing.assert_array_equal(outs[1].asnumpy(), 9)


def _rsp(rows, shape=SHAPE, scale=1.0):
    data = np.zeros(shape, np.float32)
    data[rows] = (np.arange(len(rows))[:, None] + 1) * scale
    return mx.nd.array(data).tostype("row_sparse")


def test_row_sparse_push_replaces_without_updater(kv):
    kv.init(0, mx.nd.ones(SHAPE).tostype("row_sparse"))
    kv.push(0, [_rsp([1]), _rsp([1, 3])])
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)  # a dense output receives every row
    exp = np.zeros(SHAPE)
    exp[1] = 2
    exp[3] = 2
    np.testing.assert_array_equal(out.asnumpy(), exp)  # unpushed rows became 0 (MXNet)


def test_row_sparse_pull_ids(kv):
    full = np.arange(8, dtype=np.float32).reshape(SHAPE)
    kv.init("e", mx.nd.array(full).tostype("row_sparse"))
    out = mx.nd.zeros(SHAPE).tostype("row_sparse")
    kv.row_sparse_pull("e", out=out, row_ids=mx.nd.array([[3, 1], [3, 3]]))  # 2-D, float, dup
    assert out.stype == "row_sparse"
    assert out.indices.asnumpy().tolist() == [1, 3]
    exp = np.zeros(SHAPE)
    exp[[1, 3]] = full[[1, 3]]
    np.testing.assert_array_equal(out.asnumpy(), exp)
    kv.row_sparse_pull("e", out=out, row_ids=mx.nd.array([]))
    np.testing.assert_array_equal(out.asnumpy(), 0)
    outs = [mx.nd.zeros(SHAPE).tostype("row_sparse") for _ in range(3)]
    kv.row_sparse_pull("e", out=outs, row_ids=mx.nd.array([0]))  # one ids for all outs
    for o in outs:
        assert o.indices.asnumpy().tolist() == [0]
    kv.row_sparse_pull("e", out=outs[:2], row_ids=[mx.nd.array([2]), mx.nd.array([1])])
    assert outs[1].indices.asnumpy().tolist() == [1]


def test_row_sparse_pull_errors(kv):
    kv.init(0, mx.nd.ones(SHAPE).tostype("row_sparse"))
    kv.init(1, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="Expected row_sparse storage type for "
                                         "row_sparse_pull values"):
        kv.row_sparse_pull(0, out=mx.nd.zeros(SHAPE), row_ids=mx.nd.array([1]))
    with pytest.raises(MXNetError, match="PullRowSparse expects row_sparse src NDArray"):
        kv.row_sparse_pull(1, out=mx.nd.zeros(SHAPE).tostype("row_sparse"),
                           row_ids=mx.nd.array([1]))
    with pytest.raises(MXNetError, match="out of range"):
        kv.row_sparse_pull(0, out=mx.nd.zeros(SHAPE).tostype("row_sparse"),
                           row_ids=mx.nd.array([9]))


def test_pull_into_row_sparse_output_warns(kv, caplog):
    kv.init(0, mx.nd.ones(SHAPE).tostype("row_sparse"))
    out = mx.nd.zeros(SHAPE).tostype("row_sparse")
    with caplog.at_level(logging.WARNING, logger="sparsym"):
        kv.pull(0, out=out)
    assert "non-default weights detected during kvstore pull" in caplog.text
    np.testing.assert_array_equal(out.asnumpy(), 0)  # skipped, as in MXNet
    kv.pull(0, out=out, ignore_sparse=False)
    np.testing.assert_array_equal(out.asnumpy(), 1)


def test_row_sparse_updater_sees_merged_rows(kv):
    kv.init(0, mx.nd.ones(SHAPE).tostype("row_sparse"))
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=1.0))
    kv.push(0, [_rsp([2]), _rsp([2])])
    out = mx.nd.zeros(SHAPE).tostype("row_sparse")
    kv.row_sparse_pull(0, out=out, row_ids=mx.nd.arange(0, 4))
    exp = np.ones(SHAPE)
    exp[2] -= 2
    np.testing.assert_array_equal(out.asnumpy(), exp)  # lazy: other rows untouched


def test_gradient_compression_and_create():
    with pytest.raises(Exception, match="Gradient compression is not supported"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit", "threshold": 0.5})
    mx.kv.create("device").set_gradient_compression({"type": "2bit", "threshold": 0.5})
    with pytest.raises(MXNetError, match="Unknown KVStore type"):
        mx.kv.create("nope")


def test_a_key_and_an_output_keep_their_dtypes(kv):
    """A float64 push into a float32 key is cast (MXNet 1.9.1, probed); a pull casts into
    the output's dtype. The store used to adopt the pushed dtype, and the next
    row_sparse_pull changed the output array's dtype under the user."""
    kv.init("w", mx.nd.ones((5, 3)).tostype("row_sparse"))
    kv.push("w", (mx.nd.ones((5, 3), dtype="float64") * 2).tostype("row_sparse"))
    out = mx.nd.zeros((5, 3)).tostype("row_sparse")
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.arange(5))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), 2)
    out64 = mx.nd.zeros((5, 3), dtype="float64").tostype("row_sparse")
    kv.row_sparse_pull("w", out=out64, row_ids=mx.nd.array([1, 3]))
    assert out64.dtype == np.float64
    np.testing.assert_array_equal(out64.asnumpy()[[1, 3]], 2)
    kv.init("d", mx.nd.ones((2, 3)))
    kv.push("d", mx.nd.ones((2, 3), dtype="float64") * 3)
    dense = mx.nd.zeros((2, 3))
    kv.pull("d", out=dense)
    assert dense.dtype == np.float32
    np.testing.assert_array_equal(dense.asnumpy(), 3)


def test_device_kvstore_compresses_each_push_with_residuals():
    """MXNet 1.9.1's 'device' kvstore with 2-bit compression (figures recorded on it): each
    device's gradient is sent as -t/0/+t, the remainder carried to its next push."""
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init("a", mx.nd.zeros((3, 4)))
    vals = [mx.nd.array(np.linspace(-1, 1, 12).reshape(3, 4)),
            mx.nd.array(np.linspace(1, -0.2, 12).reshape(3, 4))]
    expect = [[0, 0, 0, .5, .5, 0, 0, 0, 0, .5, .5, .5],
              [0, 0, 0, 0, 0, .5, .5, .5, .5, .5, .5, .5],
              [0, 0, 0, 0, .5, .5, .5, .5, .5, .5, .5, 0]]
    out = mx.nd.zeros((3, 4))
    for row in expect:
        kv.push("a", vals)
        kv.pull("a", out=out)
        np.testing.assert_allclose(out.asnumpy().ravel(), row)
    with pytest.raises(mx.base.MXNetError, match="Unknown type for gradient compression"):
        mx.kv.create("device").set_gradient_compression({"type": "1bit"})
