"""Adversarial operator calls: each raises a typed error naming the op and what was expected,
where MXNet 1.9.1 raises, crashes (segfault), or answers silently (bounds it does not check)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import (
    AllocationError,
    DTypeError,
    IndexOutOfRange,
    MXNetError,
    ParamError,
    ShapeError,
)

nd = mx.nd
X = nd.array(np.arange(12).reshape(3, 4))

BAD_CALLS = [
    # MXNet: "Array cannot be broadcasted from [3,4] to [3,5]" (was a TypeError in fmt_shape)
    (lambda: nd.broadcast_to(X, shape=(3, 5)), ShapeError, r"size 1 or 5 at axis 1.*got \[3,4\]"),
    # MXNet checks slice_axis bounds (slice itself clips, in both)
    (lambda: nd.slice_axis(X, axis=1, begin=0, end=9), ShapeError,
     "Invalid end for end=9 as axis_size is 4"),
    (lambda: nd.slice_axis(X, axis=0, begin=-9, end=2), ShapeError, "Invalid begin for begin=-9"),
    (lambda: nd.sum(X, axis=(0, 0)), ShapeError, r"Reduction axes have duplicates \[0,0\]"),
    (lambda: nd.sum(X, axis=(0, -2)), ShapeError, "duplicates"),
    (lambda: nd.batch_dot(nd.ones((3, 4)), nd.ones((4, 5))), ShapeError, "N >= 3"),
    # _square_sum wrapped the axis modulo ndim (axis=5 summed axis 1)
    (lambda: nd._internal._square_sum(nd.sparse.row_sparse_array(np.eye(3)), axis=5), ShapeError,
     "axis 5 out of range"),
    # MXNet segfaults
    (lambda: nd.pick(nd.array(np.zeros((2, 0))), nd.array([0, 0])), IndexOutOfRange,
     "pick: axis 1 .* is empty"),
    # MXNet writes past the row
    (lambda: nd.fill_element_0index(nd.zeros((2, 3)), nd.array([1, 1]), nd.array([0, 7])),
     IndexOutOfRange, "index 7 of row 1 .* size 3"),
    # MXNet: "SparseEmbedding input contains data out of bound" for a row_sparse weight
    (lambda: nd.Embedding(nd.array([0, 9]), nd.ones((5, 2)).tostype("row_sparse"), input_dim=5,
                          output_dim=2), IndexOutOfRange, "contains data out of bound: id 9"),
    (lambda: nd.contrib.SparseEmbedding(nd.array([0, 9]), nd.ones((5, 2)).tostype("row_sparse"),
                                        input_dim=5, output_dim=2), IndexOutOfRange, "input_dim=5"),
    (lambda: nd.arange(0, float("nan")), ParamError, "stop must be a finite number, got nan"),
    (lambda: nd.arange(float("inf")), ParamError, "finite"),
    (lambda: nd.full((2,), "abc"), ParamError, "val must be a number, got 'abc'"),
    # the out= array must be the result's dtype and shape (it was cast or broadcast silently)
    (lambda: nd.relu(nd.ones((2,)), out=nd.zeros((2,), dtype="int32")), DTypeError,
     "0-th output: expected float32, got int32"),
    (lambda: nd.relu(nd.ones((2,)), out=nd.zeros((2, 2))), ShapeError,
     r"0-th output: expected \[2\], got \[2,2\]"),
    (lambda: nd.ones((2,), ctx="gpu"), MXNetError, "Invalid context string gpu"),
    # MXNet: "gather_nd requires index tensor to have at least 2 dimensions" (read x[0, 1])
    (lambda: nd.gather_nd(X, nd.array([0, 1])), ShapeError, "at least 2 dimensions"),
    # MXNet: "adj(y) must be smaller than stride" (a target_shape asking for adj 1 at stride 1)
    (lambda: nd.Deconvolution(nd.ones((1, 1, 3, 3)), nd.ones((1, 2, 3, 3)), no_bias=True,
                              kernel=(3, 3), num_filter=2, target_shape=(2, 2)), ShapeError,
     r"adj \(1, 1\) must be smaller than stride \(1, 1\)"),
    # MXNet (oneDNN) refuses it; the windows wholly in the padding gave -3.4e38
    (lambda: nd.Pooling(nd.ones((1, 1, 3, 3)), kernel=(2, 2), pad=(5, 5), pool_type="max"),
     ParamError, r"pad \(5, 5\) must be smaller than kernel \(2, 2\)"),
    (lambda: nd.softmax(nd.ones((2, 3)), length=nd.array([1, 2]), use_length=True), DTypeError,
     "This operation only support integer types, not float32"),
    (lambda: nd.add_n(), ParamError, "num_args must be >= 1"),
    # MXNet: SIGFPE
    (lambda: nd.random.multinomial(nd.array(np.zeros((0,)))), ShapeError, "no categories"),
    # MXNet reads memory outside the batch
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 1, 4, 4)), nd.array([[3, 0, 0, 2, 2]]),
                                 pooled_size=(2, 2), spatial_scale=1), IndexOutOfRange,
     "ROI batch index 3.0 is outside the 1 images"),
    # numpy's bare LinAlgError before
    (lambda: nd.linalg.inverse(nd.zeros((2, 2))), MXNetError, "non-convertible"),
    (lambda: nd.ones((2,), ctx=3), TypeError, "ctx must be a Context"),
]


@pytest.mark.parametrize("call,err,text", BAD_CALLS)
def test_bad_operator_calls_raise_typed_errors(call, err, text):
    with pytest.raises(err, match=text):
        call()


HUGE = [
    (lambda: nd.zeros((10**7, 10**7)), "default zeros"),
    (lambda: nd.empty((2**45,)), "zeros"),
    (lambda: nd.ones((2**40,)), "ones"),
    (lambda: nd.full((2**40,), 1.0), "full"),
    (lambda: nd.arange(0, 1e15), "_arange"),
    (lambda: nd.one_hot(nd.array([0]), depth=10**13), "one_hot"),
    (lambda: nd.random.uniform(shape=(10**8, 10**8)), "_random_uniform"),
    (lambda: nd.sparse.zeros("csr", (2**40, 2**40)), "csr zeros"),
    # a row_sparse array of that shape is fine (it stores no rows); densifying it is not
    (lambda: nd.sparse.zeros("row_sparse", (2**50, 2)).tostype("default"), "cast_storage"),
]


@pytest.mark.parametrize("call,where", HUGE)
def test_arrays_larger_than_memory_are_refused_before_allocating(call, where):
    # MXNet refuses them too (its int32 size cap); numpy raised a bare MemoryError or, between
    # free and total memory, let the OOM killer end the process
    with pytest.raises(AllocationError, match=f"{where}.*more than this machine's"):
        call()
    assert issubclass(AllocationError, MemoryError)


def test_negative_shapes_are_shape_errors():
    with pytest.raises(ShapeError, match=r"shape dim size must be >= 0, got \(-3,\)"):
        nd.scatter_nd(nd.array([1, 2]), nd.array([[0, 1]]), shape=(-3,))
    with pytest.raises(ShapeError, match=r"got \(-2,\)"):
        nd.random.uniform(shape=(-2,))


def test_valid_neighbours_of_the_bad_calls_still_work():
    assert nd.slice_axis(X, axis=1, begin=-4, end=-1).shape == (3, 3)
    assert nd.slice_axis(X, axis=1, begin=0, end=4).shape == (3, 4)
    assert nd.batch_dot(nd.ones((2, 3, 4)), nd.ones((2, 4, 5))).shape == (2, 3, 5)
    # an empty batch through FullyConnected (reshape(0, -1) used to fail)
    y = nd.FullyConnected(nd.array(np.zeros((0, 3))), nd.ones((4, 3)), no_bias=True, num_hidden=4)
    assert y.shape == (0, 4)
    w = nd.arange(10).reshape((5, 2))
    assert nd.Embedding(nd.array([4, 0]), w.tostype("row_sparse"), input_dim=5,
                        output_dim=2).asnumpy().tolist() == [[8, 9], [0, 1]]
    # a dense weight clips out-of-range ids, as MXNet's
    assert nd.Embedding(nd.array([9]), w, input_dim=5, output_dim=2).asnumpy().tolist() == [[8, 9]]
    assert nd.ones((2,), ctx="cpu(1)").context == mx.cpu(1)
    o = nd.zeros((2, 3))
    nd._internal._set_value(2.5, out=o)  # a 0-d result fills out=
    assert o.asnumpy().min() == 2.5
    assert issubclass(ParamError, ValueError) and issubclass(ParamError, TypeError)
    # a mean repeating one value applies to every channel (it raised numpy's broadcast error)
    y = nd.image.normalize(nd.ones((3, 2, 2)), mean=(0, 0), std=(2, 2))
    assert y.asnumpy().tolist() == np.full((3, 2, 2), 0.5).tolist()
    assert nd.softmax(nd.ones((1, 2)), length=nd.array([1], dtype="int32"),
                      use_length=True).asnumpy().tolist() == [[1, 0]]


@pytest.mark.parametrize("front", ["sym", "nd"])
@pytest.mark.parametrize("name", ["_CachedOp", "_CachedOpThreadSafe"])
def test_engine_internal_cached_op_names_the_alternative(front, name):
    # MXNet 1.9.1 registers _CachedOp but a front-end call fails ("The any container is
    # empty"): the node needs the C++ CachedOp state
    ns = getattr(mx, front)._internal
    arg = mx.sym.var("a") if front == "sym" else mx.nd.ones((2,))
    with pytest.raises(mx.MXNetError, match=r"engine-internal.*mx\.nd\.CachedOp") as err:
        getattr(ns, name)(arg)
    assert isinstance(err.value, NotImplementedError)
