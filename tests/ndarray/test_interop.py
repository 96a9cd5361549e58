"""NDArray exchange and state: from_numpy, DLPack capsules, pickled state, CachedOp,
creation with out=, contrib isinf/isfinite/isnan (behaviour probed on MXNet 1.9.1)."""
import pickle

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError, MXNetError, ShapeError

# mx.nd.arange(1, ctx=mx.gpu()).__getstate__() on MXNet 1.9.1 (a GPU array: device type 2)
_GPU_STATE = {"handle": bytearray(
    b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02"
    b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}


def test_from_numpy_shares_memory_and_takes_the_buffer():
    a = np.array([[1, 2], [3, 4]], dtype="float32")
    b = mx.nd.from_numpy(a)
    assert not a.flags.writeable and b.dtype == np.float32
    b[1, 0] = 9
    assert a[1, 0] == 9
    c = mx.nd.from_numpy(a)          # a second hand-over of the same buffer shares it too
    c[0, 0] = 7
    assert b.asnumpy()[0, 0] == 7
    copy = mx.nd.from_numpy(np.arange(4).reshape(2, 2).T, zero_copy=False)
    assert copy.dtype == np.int64 and copy.asnumpy().tolist() == [[0, 2], [1, 3]]
    with pytest.raises(ValueError, match="c-contiguous"):
        mx.nd.from_numpy(np.arange(4).reshape(2, 2).T)
    with pytest.raises(ValueError, match="read-only"):
        mx.nd.from_numpy(np.frombuffer(b"abcd", dtype=np.int8))
    assert mx.nd.from_numpy(np.array(3.0)).shape == ()


def test_dlpack_round_trip_shares_memory_and_is_consumed_once():
    x = mx.nd.arange(6).reshape((2, 3))
    for pack in (x.to_dlpack_for_read(), mx.nd.to_dlpack_for_write(x)):
        y = mx.nd.from_dlpack(pack)
        assert y.shape == (2, 3)
        with pytest.raises(FormatError, match="consumed only once"):
            mx.nd.from_dlpack(pack)
    y[0, 0] = 100
    assert x.asnumpy()[0, 0] == 100
    # any DLPack consumer reads the capsule (numpy here)
    z = np.from_dlpack(type("Src", (), {"__dlpack__": lambda s, **k: x.to_dlpack_for_read(),
                                        "__dlpack_device__": lambda s: (1, 0)})())
    np.testing.assert_array_equal(z, x.asnumpy())
    with pytest.raises(FormatError, match="got int"):
        mx.nd.from_dlpack(3)


def test_getstate_is_mxnet_raw_bytes_and_setstate_reads_mxnet_states():
    state = mx.nd.ones((2, 2), ctx=mx.cpu(1)).__getstate__()
    # byte for byte what MXNet 1.9.1 writes (its context included)
    assert bytes(state["handle"]) == (
        b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x02"
        b"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
        + b"\x00\x00\x80?" * 4)
    a = mx.nd.arange(3)
    a.__setstate__(_GPU_STATE)                   # saved on a GPU, loads on the cpu
    assert a.shape == (1,) and a.context == mx.cpu(0) and a.asnumpy().tolist() == [0.0]
    with pytest.raises(FormatError):
        a.__setstate__({"handle": bytearray(b"\x00\x01")})


@pytest.mark.parametrize("make", [
    lambda: mx.nd.array([[1, 0], [0, 2]]).tostype("csr"),
    lambda: mx.nd.array([[1, 0], [0, 0]]).tostype("row_sparse"),
    lambda: mx.nd.array(3, dtype="float64").reshape(()),
    lambda: mx.nd.array([1, 2], dtype="int16"),           # a dtype MXNet's format lacks
])
def test_pickle_round_trip(make):
    a = make()
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is type(a) and b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_cached_op_runs_a_symbol_with_out_and_autograd():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc") * 2
    op = mx.nd.CachedOp(sym)
    data, w, b = mx.nd.ones((2, 4)), mx.nd.ones((3, 4)), mx.nd.zeros((3,))
    o1 = op(data, w, b)
    np.testing.assert_allclose(o1.asnumpy(), np.full((2, 3), 8.0))
    out = mx.nd.zeros((2, 3))
    assert op(data, w, b + 1, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), np.full((2, 3), 10.0))
    w.attach_grad()
    with mx.autograd.record():
        y = op(data, w, b)
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), np.full((3, 4), 4.0))
    with pytest.raises(MXNetError, match="expected 3 inputs"):
        op(data, w)


def test_cached_op_takes_aux_states_among_its_inputs():
    sym = mx.sym.BatchNorm(mx.sym.var("x"), fix_gamma=False, name="bn")
    assert sym.list_inputs() == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    op = mx.nd.CachedOp(sym)
    x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
    y = op(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,)), mx.nd.ones((2,)))
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-3), rtol=1e-5)


def test_recording_after_a_freed_backward_treats_old_outputs_as_constants():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        b = x + 1
        b.backward()
    with mx.autograd.record():     # b's graph is gone: b is a constant now (MXNet)
        y = b * x
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]


def test_creation_out_and_fluent_reshape_like():
    out = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=out) is out and out.asnumpy().sum() == 4
    assert mx.nd.zeros((2, 2), out=out) is out and out.asnumpy().sum() == 0
    with pytest.raises(ShapeError, match="Shape inconsistent"):
        mx.nd.ones((2, 3), out=out)
    x = mx.nd.ones((5, 17, 2, 3))
    assert x.reshape_like(rhs=mx.nd.ones((30, 17))).shape == (30, 17)
    assert x.reshape_like(mx.nd.ones((10, 6)), lhs_begin=2, lhs_end=4, rhs_begin=1,
                          rhs_end=2).shape == (5, 17, 6)


def test_contrib_isinf_isfinite_isnan():
    x = mx.nd.array([np.inf, -np.inf, np.nan, 1.0])
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [1, 1, 0, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [0, 0, 0, 1]
    assert mx.nd.contrib.isnan(x).asnumpy().tolist() == [0, 0, 1, 0]


def test_inplace_writes_under_record_raise_as_mxnet():
    x = mx.nd.ones((3, 4))
    y = mx.nd.ones((4,))
    y.attach_grad()
    with mx.autograd.record():
        x[:] = mx.nd.zeros((3, 4))    # [:] copies (allowed)
        with pytest.raises(MXNetError, match="Inplace operations"):
            x[0] = y
        with pytest.raises(MXNetError, match="Inplace operations"):
            x += y
        with pytest.raises(MXNetError, match="already in a computational graph"):
            y[0] = 1
        x[1] = 5                       # nothing recorded is read: allowed


def test_recorded_advanced_indexing_scatters_gradients():
    x = mx.nd.arange(24).reshape((2, 3, 4))
    x.attach_grad()
    key = ([1, 0], slice(None), None, [3, 1])
    with mx.autograd.record():
        y = x[key]
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy()[key[0], :, None, key[3]])
    y.backward()
    expect = np.zeros((2, 3, 4))
    expect[key[0], :, key[3]] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), expect)
    with mx.autograd.record():
        z = x[1, 2, 3]
    assert z.shape == (1,)


def test_setitem_puts_a_one_element_list_into_one_element():
    x = mx.nd.zeros((2, 2))
    x[1, 0] = [5]
    assert x.asnumpy()[1, 0] == 5


def test_load_refuses_the_other_shape_semantics(tmp_path):
    f = str(tmp_path / "a")
    with mx.np_shape(True):
        mx.nd.save(f, [mx.nd.zeros((2, 0, 1))])
        assert mx.nd.load(f)[0].shape == (2, 0, 1)
    with pytest.raises(MXNetError, match="np shape semantics"):
        mx.nd.load(f)
    mx.nd.save(f, [mx.nd.ones((2, 1))])
    with mx.np_shape(True), pytest.raises(MXNetError, match="legacy shape semantics"):
        mx.nd.load(f)
    mx.nd.save(f, [mx.nd.array(2.0).reshape(())])    # 0-d outside np_shape: sparsym's extension
    assert mx.nd.load(f)[0].shape == ()


def test_integer_indexing_of_every_axis_gives_shape_1_outside_np_shape():
    # MXNet's legacy shapes have no 0-d arrays: x[1, 2] is [6.] (shape (1,)), recorded or not
    x = mx.nd.arange(12).reshape((3, 4))
    for got in (x[1, 2], x[-1, -1], x[(1, 2)], x[1][2], mx.nd.arange(3)[1]):
        assert got.shape == (1,)
    assert [a.shape for a in mx.nd.arange(2)] == [(1,), (1,)]      # iteration: x[i]
    # NumPy reads NDArrays through __array__ (not item by item, which would nest)
    assert np.all(mx.nd.array([5], dtype="int32") == 5)
    assert np.asarray(x).shape == (3, 4) and np.asarray(mx.nd.arange(3)).shape == (3,)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert x[1, 2].asscalar() == 6.0 and x[1, 2:3].shape == (1,)
    x.attach_grad()
    with mx.autograd.record():
        y = x[1, 2]
    assert y.shape == (1,)
    with mx.util.np_shape(True):
        assert x[1, 2].shape == ()


def test_random_draw_without_shape_fills_out():
    # MXNet: nd.random.*(..., out=arr) without a shape draws arr's shape and dtype
    a = mx.nd.zeros((3, 2))
    mx.nd.random.uniform(low=5, high=10, out=a)
    assert a.shape == (3, 2) and (a.asnumpy() >= 5).all()
    b = mx.nd.zeros((4,), dtype="float64")
    mx.nd.random.normal(out=b)
    assert b.dtype == np.float64 and b.asnumpy().std() > 0
