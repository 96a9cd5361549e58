"""broadcast_to, broadcast_axis, broadcast_like, reshape_like, slice_like, shape_array and
size_array: shapes recorded from MXNet 1.9.1, values against NumPy, numeric gradients."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ShapeError
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(5)


def test_shapes_match_mxnet():
    x = mx.nd.ones((1, 2, 3))
    assert mx.nd.broadcast_to(x, shape=(2, 0, 3)).shape == (2, 2, 3)
    assert mx.nd.broadcast_axis(x, axis=0, size=3).shape == (3, 2, 3)
    assert mx.nd.broadcast_axes(mx.nd.ones((1, 2, 1)), axis=(0, 2), size=(3, 4)).shape == (3, 2, 4)
    # beyond MXNet 1.9.1 (which rejects it): negative axes count from the end
    assert mx.nd.broadcast_axis(mx.nd.ones((1, 2, 1)), axis=-1, size=5).shape == (1, 2, 5)
    bl = mx.nd.broadcast_like
    assert bl(mx.nd.ones((1, 3)), mx.nd.ones((2, 3))).shape == (2, 3)
    assert bl(mx.nd.ones((1, 3)), mx.nd.ones((5, 7, 2)), lhs_axes=(0,), rhs_axes=(1,)).shape \
        == (7, 3)
    assert bl(mx.nd.ones((1, 3, 1)), mx.nd.ones((5, 7, 2)), lhs_axes=(0, -1),
              rhs_axes=(-3, 2)).shape == (5, 3, 2)
    rl = mx.nd.reshape_like
    assert rl(mx.nd.ones((30, 7)), mx.nd.ones((15, 2, 4)), lhs_begin=0, lhs_end=1, rhs_begin=0,
              rhs_end=2).shape == (15, 2, 7)
    assert rl(mx.nd.ones((2, 3, 4)), mx.nd.ones((6,)), lhs_begin=-3, lhs_end=-1).shape == (6, 4)
    assert rl(mx.nd.ones((2, 3, 4)), mx.nd.ones((6, 5)), lhs_begin=0, lhs_end=2,
              rhs_end=1).shape == (6, 4)
    sl = mx.nd.slice_like
    assert sl(mx.nd.ones((3, 4, 5)), mx.nd.ones((2, 3)), axes=(0, 1)).shape == (2, 3, 5)
    assert sl(mx.nd.ones((3, 4, 5)), mx.nd.ones((2, 3, 4)), axes=(-1,)).shape == (3, 4, 4)
    with pytest.raises(ShapeError, match="broadcast to"):
        mx.nd.broadcast_to(x, shape=(4, 3))
    with pytest.raises(ShapeError, match="size 1 at broadcasting axis"):
        mx.nd.broadcast_axis(x, axis=1, size=3)
    s = mx.sym.broadcast_to(mx.sym.var("x"), shape=(4, 0, 3))
    assert s.infer_shape(x=(1, 2, 3))[1] == [(4, 2, 3)]


def test_shape_and_size_array_take_any_storage():
    x = mx.nd.ones((2, 3, 4))
    assert mx.nd.shape_array(x).asnumpy().tolist() == [2, 3, 4]
    assert mx.nd.size_array(x).dtype == np.int64 and mx.nd.size_array(x).asnumpy().tolist() == [24]
    c = mx.nd.ones((2, 3)).tostype("csr")
    assert mx.nd.shape_array(c).asnumpy().tolist() == [2, 3] and mx.nd.shape_array(c).stype \
        == "default"
    assert mx.sym.shape_array(mx.sym.var("x")).infer_type(x="float16")[1] == [np.int64]


@pytest.mark.parametrize("make,ref,shapes", [
    (lambda x, y: mx.sym.broadcast_to(x, shape=(3, 0, 4)),
     lambda a, b: np.broadcast_to(a, (3, 2, 4)), ((1, 2, 1), (1,))),
    (lambda x, y: mx.sym.broadcast_axis(x, axis=(0, 2), size=(3, 4)),
     lambda a, b: np.broadcast_to(a, (3, 2, 4)), ((1, 2, 1), (1,))),
    (lambda x, y: mx.sym.broadcast_like(x, y), lambda a, b: np.broadcast_to(a, b.shape),
     ((1, 3), (4, 3))),
    (lambda x, y: mx.sym.broadcast_like(x, y, lhs_axes=(0,), rhs_axes=(1,)),
     lambda a, b: np.broadcast_to(a, (5, 3)), ((1, 3), (2, 5))),
    (lambda x, y: mx.sym.reshape_like(x, y), lambda a, b: a.reshape(b.shape), ((2, 6), (3, 4))),
    (lambda x, y: mx.sym.slice_like(x, y, axes=(0, -1)), lambda a, b: a[:2, :, :3],
     ((3, 4, 5), (2, 1, 3))),
])
def test_forward_and_gradient(make, ref, shapes):
    a, b = rng.randn(*shapes[0]), rng.randn(*shapes[1])
    s = make(mx.sym.var("x"), mx.sym.var("y"))
    args = {"x": a, "y": b} if "y" in s.list_arguments() else {"x": a}
    check_symbolic_forward(s, args, [ref(a, b)])
    check_numeric_gradient(s, args, grad_nodes=["x"], rtol=1e-6, atol=1e-8,
                           dtype=np.float64)


@pytest.mark.parametrize("wanted", ["a", "b"])
def test_broadcast_mul_gradient_of_one_operand_only(wanted):
    # the backward skips the partial nobody reads (grad_req 'null'): the other stays exact
    rng = np.random.default_rng(3)
    av, bv, og = rng.random((4, 3, 5)), rng.random((4, 3, 1)), rng.random((4, 3, 5))
    a, b = mx.sym.var("a"), mx.sym.var("b")
    exe = mx.sym.broadcast_mul(a, b).bind(
        mx.cpu(), {"a": mx.nd.array(av), "b": mx.nd.array(bv)},
        args_grad={wanted: mx.nd.zeros(av.shape if wanted == "a" else bv.shape)},
        grad_req={"a": "write" if wanted == "a" else "null",
                  "b": "write" if wanted == "b" else "null"})
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(og))
    ref = og * bv if wanted == "a" else (og * av).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(exe.grad_dict[wanted].asnumpy(), ref, rtol=1e-5)
