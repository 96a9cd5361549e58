"""Invalid parameter arrays and indices give typed errors naming the op (not NumPy's bare
ValueError, a wrong answer or a broadcasting error deep in a kernel)."""
import pytest

import sparsym as mx


@pytest.mark.parametrize("call,text", [
    (lambda: mx.nd.sample_gamma(mx.nd.array([-1.0]), mx.nd.array([1.0])), "_sample_gamma"),
    (lambda: mx.nd.sample_exponential(mx.nd.array([-1.0])), "_sample_exponential"),
    (lambda: mx.nd.sample_poisson(mx.nd.array([-1.0])), "_sample_poisson"),
    (lambda: mx.nd.sample_normal(mx.nd.array([0.0]), mx.nd.array([-1.0])), "_sample_normal"),
])
def test_sample_ops_refuse_invalid_parameter_arrays(call, text):
    with pytest.raises(mx.base.ParamError, match=f"operator {text}: invalid parameter array"):
        call()


def test_onehot_encode_refuses_out_of_range_indices():
    with pytest.raises(IndexError, match="index 5 is out of range for 3 classes"):
        mx.nd._internal._onehot_encode(mx.nd.array([5, 1]), mx.nd.zeros((2, 3)))
    out = mx.nd._internal._onehot_encode(mx.nd.array([2, 0]), mx.nd.zeros((2, 3)))
    assert out.asnumpy().tolist() == [[0, 0, 1], [1, 0, 0]]


def test_grid_generator_warp_wants_a_two_channel_flow():
    with pytest.raises(mx.base.ShapeError, match=r"\(N, 2, H, W\) flow field"):
        mx.nd.GridGenerator(mx.nd.zeros((1, 3, 4, 4)), transform_type="warp")
    assert mx.nd.GridGenerator(mx.nd.zeros((1, 2, 4, 4)), transform_type="warp").shape == \
        (1, 2, 4, 4)
