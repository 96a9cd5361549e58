"""The softmax family and Activation run on floating-point data only, as in MXNet 1.9.1
(which refuses integer inputs with "This operation only support floating point types")."""
import pytest

import sparsym as mx


@pytest.mark.parametrize("call", [
    lambda x: mx.nd.softmax(x), lambda x: mx.nd.log_softmax(x), lambda x: mx.nd.softmin(x),
    lambda x: mx.nd.SoftmaxActivation(x), lambda x: mx.nd.Activation(x, act_type="relu")])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_inputs_are_refused(call, dtype):
    with pytest.raises(mx.base.DTypeError, match=f"only support floating point types, not {dtype}"):
        call(mx.nd.array([1, 2], dtype=dtype))


def test_symbolic_inference_refuses_them_too():
    y = mx.sym.softmax(mx.sym.var("x"))
    with pytest.raises(mx.MXNetError, match="floating point"):
        y.infer_type(x="int32")
    assert y.infer_type(x="float16")[1] == [mx.nd.array([0], dtype="float16").dtype]
