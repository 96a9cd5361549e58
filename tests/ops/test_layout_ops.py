"""depth_to_space, space_to_depth, diag, split_v2, Pad, ravel/unravel: values recorded from
MXNet 1.9.1 or against NumPy, numeric gradients in float64."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ShapeError
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(4)


def test_depth_space_match_mxnet():
    x = mx.nd.array(np.arange(16).reshape(1, 4, 2, 2))
    assert mx.nd.depth_to_space(x, 2).asnumpy().ravel().tolist() == \
        [0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15]
    y = mx.nd.array(np.arange(16).reshape(1, 1, 4, 4))
    assert mx.nd.space_to_depth(y, 2).asnumpy().ravel().tolist() == \
        [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]
    z = rng.randn(2, 8, 3, 2)
    assert np.array_equal(mx.nd.space_to_depth(mx.nd.depth_to_space(mx.nd.array(z), 2), 2)
                          .asnumpy(), z.astype(np.float32))
    with pytest.raises(ShapeError):
        mx.nd.depth_to_space(mx.nd.ones((1, 3, 2, 2)), 2)


def test_diag_and_split_v2():
    assert mx.nd.diag(mx.nd.array([1, 2]), k=1).asnumpy().tolist() == [[0, 1, 0], [0, 0, 2],
                                                                      [0, 0, 0]]
    x = np.arange(24.0).reshape(2, 3, 4)
    assert np.array_equal(mx.nd.diag(mx.nd.array(x), k=1, axis1=-1, axis2=0).asnumpy(),
                          np.diagonal(x, 1, 2, 0))
    r = mx.nd.split_v2(mx.nd.array(np.arange(12).reshape(6, 2)), (2, 5))
    assert [a.shape for a in r] == [(2, 2), (3, 2), (1, 2)]
    r = mx.nd.split_v2(mx.nd.array(np.arange(12).reshape(2, 6)), 2, axis=0, squeeze_axis=True)
    assert [a.shape for a in r] == [(6,), (6,)]
    assert [a.shape for a in mx.nd.ones((6, 2)).split_v2(3)] == [(2, 2)] * 3


@pytest.mark.parametrize("make,ref,shape", [
    (lambda x: mx.sym.depth_to_space(x, 2), None, (1, 8, 2, 3)),
    (lambda x: mx.sym.space_to_depth(x, 2), None, (1, 2, 4, 6)),
    (lambda x: mx.sym.diag(x, k=-1), lambda a: np.diagonal(a, -1), (4, 5)),
    (lambda x: mx.sym.diag(x, k=1), lambda a: np.diag(a, 1), (4,)),
    (lambda x: mx.sym.diag(x, k=1, axis1=2, axis2=0), lambda a: np.diagonal(a, 1, 2, 0),
     (3, 2, 4)),
    (lambda x: mx.sym.split_v2(x, (1, 3), axis=1)[1], lambda a: a[:, 1:3], (2, 5)),
    (lambda x: mx.sym.pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 0, 1),
                          constant_value=0.5),
     lambda a: np.pad(a, ((0, 0), (0, 0), (1, 2), (0, 1)), constant_values=0.5), (1, 2, 3, 3)),
    (lambda x: mx.sym.Pad(x, mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)),
     lambda a: np.pad(a, ((0, 0), (0, 0), (2, 1), (1, 2)), mode="edge"), (2, 1, 3, 3)),
    (lambda x: mx.sym.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 1, 1, 0)),
     lambda a: np.pad(a, ((0, 0), (0, 0), (1, 1), (2, 1), (1, 0)), mode="reflect"),
     (1, 1, 3, 4, 2)),
])
def test_forward_and_gradient(make, ref, shape):
    x = rng.randn(*shape)
    s = make(mx.sym.var("x"))
    if ref is not None:
        check_symbolic_forward(s, {"x": x}, [ref(x)])
    check_numeric_gradient(s, {"x": x}, rtol=1e-6, atol=1e-8, dtype=np.float64)


def test_pad_limits_match_mxnet():
    with pytest.raises(ShapeError, match="only supports 4-D or 5-D input"):
        mx.nd.pad(mx.nd.ones((2, 2)), mode="constant", pad_width=(1, 1, 1, 1))
    with pytest.raises(ShapeError, match="padding on the first two axes to be zero"):
        mx.nd.pad(mx.nd.ones((1, 1, 2, 2)), mode="constant", pad_width=(1, 1, 0, 0, 1, 1, 1, 1))


def test_ravel_unravel():
    r = mx.nd.ravel_multi_index(mx.nd.array([[1, 2], [0, 3]]), shape=(3, 4))
    assert r.asnumpy().tolist() == [4, 11]
    u = mx.nd.unravel_index(mx.nd.array([4, 11]), shape=(3, 4))
    assert u.asnumpy().tolist() == [[1, 2], [0, 3]]
    idx = rng.randint(0, 5, size=(3, 7))
    flat = np.ravel_multi_index(tuple(idx), (5, 5, 5))
    assert np.array_equal(mx.nd.ravel_multi_index(mx.nd.array(idx, dtype="int64"),
                                                  shape=(5, 5, 5)).asnumpy(), flat)
    assert np.array_equal(mx.nd.unravel_index(mx.nd.array(flat, dtype="int64"),
                                              shape=(5, 5, 5)).asnumpy(), idx)


def test_diag_offset_past_the_edge_and_empty_spatial_dims_raise_like_mxnet():
    x = mx.nd.ones((5, 4))
    assert mx.nd.diag(x, k=4).shape == (0,) and mx.nd.diag(x, k=-5).shape == (0,)
    for k in (5, -6):
        with pytest.raises(mx.base.ShapeError, match="Diagonal does not exist"):
            mx.nd.diag(x, k=k)
    for shape in ((0, 4, 2, 2), (1, 0, 2, 2), (1, 4, 2, 0)):
        for fn in (mx.nd.depth_to_space, mx.nd.space_to_depth):
            with pytest.raises(mx.base.ShapeError, match="cannot be 0"):
                fn(mx.nd.array(np.zeros(shape)), 2)


def test_unravel_index_leaves_the_leading_coordinate_unwrapped():
    # MXNet 1.9.1: 100 in (3, 4) -> (25, 0); a leading -1 (unknown) dim works the same way
    for shape in ((3, 4), (-1, 4)):
        out = mx.nd.unravel_index(mx.nd.array([100, 5]), shape=shape).asnumpy()
        assert out.tolist() == [[25, 1], [0, 1]]
