"""MXNet's legacy NumpyOp / NDArrayOp interface over the Custom machinery (values as MXNet
1.9.1 gives them)."""
import numpy as np
import pytest

import sparsym as mx


def _run(sym, x, head):
    dx = mx.nd.zeros(x.shape)
    exe = sym.bind(mx.cpu(), args=[x], args_grad={"X": dx})
    exe.forward(is_train=True)
    out = exe.outputs[0].asnumpy()
    exe.backward(head)
    return out, dx.asnumpy()


def test_default_numpy_op_copies_forward_and_writes_ones_backward():
    with pytest.warns(UserWarning, match="deprecated"):
        op = mx.operator.NumpyOp()
    s = op.get_symbol(mx.sym.var("X"), name="numpy_op")
    assert s.list_outputs() == ["numpy_op_output"]
    out, dx = _run(s, mx.nd.ones(4) * 10, mx.nd.ones(4) * 3)
    assert out.tolist() == [10.0] * 4 and dx.tolist() == [1.0] * 4  # MXNet: ones, not dy


@pytest.mark.parametrize("base", ["NumpyOp", "NDArrayOp"])
def test_subclassed_square(base):
    class Square(getattr(mx.operator, base)):
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] * in_data[0]

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * in_data[0] * out_grad[0]

    with pytest.warns(UserWarning):
        op = Square()
    out, dx = _run(op(mx.sym.var("X"), name="sq"), mx.nd.array([1.0, 2.0, 3.0]), mx.nd.ones(3))
    np.testing.assert_allclose(out, [1, 4, 9])
    np.testing.assert_allclose(dx, [2, 4, 6])
