"""NDArray under NumPy's array protocol and the DLPack exchange protocol: values read as
asnumpy gives them, memory shared both ways with NumPy (and PyTorch when it is installed),
NDArray's reflected operators still winning over NumPy's, sparse arrays refusing."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError, MXNetError, StorageError


def test_asarray_is_a_copy_with_the_dtype_asked_for():
    x = mx.nd.array([[1, 2], [3, 4]])
    a = np.asarray(x)
    assert type(a) is np.ndarray and a.dtype == np.float32 and a.tolist() == [[1, 2], [3, 4]]
    a[0, 0] = 100                                    # a copy, as asnumpy() gives
    assert x.asnumpy()[0, 0] == 1
    assert np.array(x, dtype=np.int64).dtype == np.int64
    assert np.asarray(mx.nd.array([1, 2], dtype="int32")).dtype == np.int32
    assert np.asarray(mx.nd.array(3.0).reshape(())).shape == ()


def test_asarray_copy_false_shares_memory_and_refuses_a_cast():
    x = mx.nd.zeros((3,))
    v = np.asarray(x, copy=False)
    v[1] = 5
    assert x.asnumpy().tolist() == [0, 5, 0]
    x[2] = 7
    assert v.tolist() == [0, 5, 7]
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(x, dtype=np.float64, copy=False)


def test_numpy_functions_read_ndarrays_and_ndarray_operators_keep_priority():
    x = mx.nd.array([1, 2, 3])
    assert np.all(x == x) and not np.all(x == 2) and np.any(x == 2)
    assert type(np.all(x == 2)) is np.bool_
    np.testing.assert_allclose(np.exp(x), np.exp([1, 2, 3]), rtol=1e-6)
    np.testing.assert_array_equal(x, [1, 2, 3])
    # numpy on the left: NDArray's reflected operator runs and gives an NDArray (as MXNet)
    for res in (np.ones(3) + x, np.ones(3) * x, np.float32(2) * x, np.float64(2) - x,
                np.ones(3) == x, np.float64(2) < x):
        assert isinstance(res, mx.nd.NDArray), type(res)
    assert (np.ones(3, dtype="float32") - x).asnumpy().tolist() == [0, -1, -2]
    assert (np.array([1, 5, 3]) == x).asnumpy().tolist() == [1, 0, 1]
    stacked = np.stack([x, x])
    assert stacked.shape == (2, 3) and stacked.dtype == np.float32


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_sparse_arrays_refuse_unless_densified_explicitly(stype):
    s = mx.nd.array([[1, 0], [0, 2]]).tostype(stype)
    with pytest.raises(StorageError, match=f"{stype} NDArray.*asnumpy"):
        np.asarray(s)
    with pytest.raises(StorageError, match="__dlpack__"):
        np.from_dlpack(s)
    with pytest.raises(StorageError, match="from_dlpack"):
        mx.nd.from_dlpack(s)
    with pytest.raises(TypeError, match=stype):
        s.to_dlpack_for_read()
    assert np.asarray(s.tostype("default")).tolist() == [[1, 0], [0, 2]]
    assert s.asnumpy().tolist() == [[1, 0], [0, 2]]


def test_numpy_from_dlpack_shares_the_ndarray_memory():
    x = mx.nd.arange(6).reshape((2, 3))
    assert x.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(x)
    assert a.flags.writeable and a.shape == (2, 3)
    a[0, 1] = 50                                    # numpy writes, the NDArray sees it
    assert x.asnumpy()[0, 1] == 50
    x[1, 2] = -1                                    # and the other way round
    assert a[1, 2] == -1
    c = np.from_dlpack(x, copy=True)
    c[0, 0] = 9
    assert x.asnumpy()[0, 0] == 0


def test_nd_from_dlpack_reads_protocol_objects_sharing_memory():
    a = np.arange(4, dtype="float32")
    y = mx.nd.from_dlpack(a)
    assert y.dtype == np.float32 and y.shape == (4,)
    y[0] = 10
    a[3] = 30
    assert a[0] == 10 and y.asnumpy()[3] == 30
    assert (y * 2).asnumpy().tolist() == [20, 2, 4, 60]
    # strided memory is shared as it is (no compaction copy)
    m = np.zeros((3, 4), dtype="float64")
    s = mx.nd.from_dlpack(m[:, ::2])
    s[:] = 1
    assert m.tolist() == [[1, 0, 1, 0]] * 3 and (s + 1).asnumpy().sum() == 12
    # another NDArray, and bool/int dtypes
    x = mx.nd.array([1, 2], dtype="int64")
    z = mx.nd.from_dlpack(x)
    z[0] = 5
    assert x.asnumpy().tolist() == [5, 2]
    assert mx.nd.from_dlpack(np.array([True, False])).asnumpy().tolist() == [True, False]


def test_read_only_memory_stays_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    y = mx.nd.from_dlpack(a)
    assert not y.writable and y.asnumpy().tolist() == [0, 1, 2]
    with pytest.raises(MXNetError, match="readonly"):
        y[0] = 1
    assert a[0] == 0


def test_capsules_and_protocol_errors():
    with pytest.raises(FormatError, match="__dlpack__"):
        mx.nd.from_dlpack([1, 2])
    x = mx.nd.ones((2,))
    with pytest.raises(BufferError, match="stream"):
        x.__dlpack__(stream=1)

    class OnGpu:
        def __dlpack__(self, **kwargs):
            return np.zeros(1).__dlpack__()

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(BufferError, match="device"):
        mx.nd.from_dlpack(OnGpu())


def test_torch_round_trips_share_memory():
    torch = pytest.importorskip("torch")
    x = mx.nd.array([1, 2, 3])
    t = torch.from_dlpack(x)
    t[0] = 7
    assert x.asnumpy().tolist() == [7, 2, 3]
    x[2] = 0
    assert t.tolist() == [7, 2, 0]
    src = torch.arange(4, dtype=torch.float32)
    y = mx.nd.from_dlpack(src)                      # a protocol object
    y[1] = 9
    assert src.tolist() == [0, 9, 2, 3]
    z = mx.nd.from_dlpack(torch.utils.dlpack.to_dlpack(src))  # a capsule
    src[3] = -3
    assert z.asnumpy().tolist() == [0, 9, 2, -3]
    w = torch.utils.dlpack.from_dlpack(x.to_dlpack_for_write())  # MXNet's capsule API
    w[1] = 8
    assert x.asnumpy().tolist() == [7, 8, 0]
