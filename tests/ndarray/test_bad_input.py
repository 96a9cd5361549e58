"""Malformed sparse input raises typed errors naming the constructor/op, expected vs got."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import DTypeError, ShapeError, StorageError

nd = mx.nd


@pytest.mark.parametrize("parts,shape,match", [
    (([1.0, 2.0], [0, 7], [0, 1, 2]), (2, 3), r"column indices must be in \[0, 3\).*7"),
    (([1.0, 2.0], [0, 1], [0, 2, 1]), (2, 3), "non-decreasing|start at 0 and end"),
])
def test_csr_parts_out_of_range_fail_check_format_and_every_use(parts, shape, match):
    """MXNet builds these and reports them in check_format; any use raises here."""
    a = nd.sparse.csr_matrix(parts, shape=shape)
    assert a.shape == shape and a.stype == "csr"
    with pytest.raises(StorageError, match=match):
        a.check_format()
    for use in (a.asnumpy, lambda: a * 2, lambda: nd.sparse.dot(a, nd.ones((3, 1)))):
        with pytest.raises(StorageError, match="built from invalid parts"):
            use()


@pytest.mark.parametrize("parts,shape,match", [
    (([1.0, 2.0], [0, 1], [0, 2]), (2, 3), r"indptr must have length rows\+1 = 3, got 2"),
    (([1.0, 2.0], [0], [0, 1, 2]), (2, 3), "same length, got 1 and 2"),
    (([1.0], [0.5], [0, 1, 1]), (2, 3), "must be integers"),
    # MXNet: "invalid shape" (these were flattened)
    (([[1.0, 2.0]], [0, 1], [0, 1, 2]), (2, 3), r"data must be 1-D, got shape \(1, 2\)"),
    (([1.0, 2.0], [0, 1], [[0, 1, 2]]), (2, 3), "indptr must be 1-D"),
])
def test_bad_csr_parts(parts, shape, match):
    with pytest.raises(StorageError, match=match) as err:
        nd.sparse.csr_matrix(parts, shape=shape)
    assert "csr_matrix" in str(err.value)


def test_csr_parts_need_a_2d_shape_and_rsp_indices_1d():
    # MXNet: ValueError "invalid shape" at construction (was an array failing every use)
    with pytest.raises(ShapeError, match=r"csr array is 2-D, got shape \(2, 3, 4\)"):
        nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 3, 4))
    with pytest.raises(StorageError, match="indices must be 1-D"):
        nd.sparse.row_sparse_array(([[1.0, 2.0]], [[0]]), shape=(3, 2))


def test_bad_row_sparse_parts():
    a = nd.sparse.row_sparse_array(([[1.0, 2.0]], [3]), shape=(3, 2))
    with pytest.raises(StorageError, match=r"row indices must be in \[0, 3\)"):
        a.check_format()
    with pytest.raises(StorageError, match=r"\[0, 3\).*built from invalid parts"):
        a + 1
    with pytest.raises(StorageError, match="data has 2 rows but indices has 1"):
        nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [0]), shape=(3, 2))
    with pytest.raises(ShapeError, match="row shape"):
        nd.sparse.row_sparse_array(([[1.0, 2.0, 3.0]], [0]), shape=(3, 2))


def test_mismatched_shapes_and_dtypes_name_the_op_and_input():
    a = nd.sparse.csr_matrix(np.eye(3, dtype=np.float32))
    # MXNet's text, as a bound graph prints it
    with pytest.raises(ShapeError, match=r"elemwise_add.*Incompatible attr in node elemwise_add at "
                                         r"1-th input 'rhs': expected \[3,3\], got \[2,2\]"):
        nd.elemwise_add(a, nd.ones((2, 2)).tostype("csr"))
    with pytest.raises(ShapeError, match="dot"):
        nd.dot(a, nd.ones((4, 2)))
    with pytest.raises(DTypeError, match="elemwise_add.*Incompatible attr.*1-th input 'rhs': "
                                         "expected float32, got float64"):
        nd.elemwise_add(a, nd.ones((3, 3), dtype="float64").tostype("csr"))


def test_csr_needs_two_dims_and_bad_stype():
    with pytest.raises((StorageError, ShapeError)):
        nd.ones((2, 3, 4)).tostype("csr")
    with pytest.raises(StorageError, match="invalid storage type"):
        nd.ones((2, 3)).tostype("coo")


def test_mxnet_ndarray_view_and_scalar_assignment_semantics():
    t = (mx.nd.arange(30) + 1).reshape(2, 3, 5)
    copy, view = t.flatten(), t.flatten(inplace=True)
    t[0] = -1
    assert copy.asnumpy()[0, 0] == 1 and view.asnumpy()[0, 0] == -1
    assert mx.nd.ones((1, 1, 1)).squeeze().shape == (1,)  # MXNet's legacy shape
    e = t.expand_dims(0, inplace=True)
    t[1] = 5
    assert e.asnumpy()[0, 1, 0, 0] == 5
    b = mx.nd.zeros(1)
    b[0] = np.array([47.5], dtype=np.float32)  # one element into one element (MXNet)
    assert b.asnumpy().tolist() == [47.5]
    is_contig = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    x = np.zeros((6, 7, 8))
    for key in [(slice(None), slice(2)), (slice(1, 4),), (slice(None, None, 2),),
                (slice(0, 1), slice(None), slice(None, None, -1))]:
        assert is_contig(key, x.shape) == x[key].flags.c_contiguous
    assert mx.nd.ndarray.py_slice is slice


def test_in_place_operators_keep_the_left_shape_and_from_numpy_wants_numbers():
    a = nd.ones((2, 1))
    # MXNet: "Shape inconsistent, Provided = [2,1], inferred shape=[2,3]" (numpy's error before)
    with pytest.raises(ShapeError, match=r"Provided = \[2, 1\], inferred shape=\[2, 3\]"):
        a += nd.ones((2, 3))
    a += nd.ones((1,))
    assert a.asnumpy().tolist() == [[2], [2]]
    # MXNet: "object is not supported." (an object NDArray was built)
    with pytest.raises(DTypeError, match="dtype object is not supported"):
        nd.from_numpy(np.array([None, 1]))
