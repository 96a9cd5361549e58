"""Shape operators: Reshape codes (expected values recorded from MXNet 1.9.1), Flatten,
expand_dims, squeeze, transpose, SwapAxis, tile, repeat, reverse, Concat, SliceChannel, stack,
clip, Cast; gradients and the csr rows."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError, ShapeError
from sparsym.test_utils import assert_almost_equal, check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(11)

# (source shape, shape codes, reverse) -> MXNet 1.9.1's inferred output shape
RESHAPE_CASES = [
    ((2, 3, 4), (4, 0, 2), False, (4, 3, 2)), ((2, 3, 4), (2, 0, 0), False, (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), False, (6, 1, 4)), ((2, 3, 4), (3, -1, 8), False, (3, 1, 8)),
    ((2, 3, 4), (-1,), False, (24,)), ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (2, -2), False, (2, 3, 4)), ((2, 3, 4), (-2, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), False, (6, 4)), ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4), (0, -3), False, (2, 12)), ((2, 3, 4, 5), (-3, -2), False, (6, 4, 5)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((10, 5, 4), (-1, 0), True, (50, 4)), ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((2, 3, 4), (0, 0, -4, 2, 2), False, (2, 3, 2, 2)),
    ((2, 3, 4), (-4, -1, 1, 0, 0), False, (2, 1, 3, 4)),
    # reverse reads the codes backwards as they are: -4 takes the two codes before it
    ((64,), (16, 4, -4), True, (16, 4)), ((64,), (16, -1, -4), True, (16, 4)),
    ((1, 2, 3, 64), (-2, -1, 16, -4), True, (1, 2, 3, 4, 16)),
]


@pytest.mark.parametrize("src,spec,reverse", [((64,), (-4, 2, 8), True),
                                              ((64,), (16, -4, -1, -1), False),
                                              ((4, 4), (-4, 2, -1, 0), True)])
def test_reshape_codes_mxnet_rejects(src, spec, reverse):
    with pytest.raises(ShapeError):
        mx.sym.Reshape(mx.sym.var("x"), shape=spec, reverse=reverse).infer_shape(x=src)


@pytest.mark.parametrize("src,spec,reverse,want", RESHAPE_CASES)
def test_reshape_codes_match_mxnet(src, spec, reverse, want):
    s = mx.sym.Reshape(mx.sym.var("x"), shape=spec, reverse=reverse)
    assert s.infer_shape(x=src)[1] == [want]
    x = rng.randn(*src)
    check_symbolic_forward(s, {"x": x}, [x.reshape(want)])


def test_reshape_gradient_errors_and_backward_inference():
    s = mx.sym.Reshape(mx.sym.var("x"), shape=(-1, 2))
    check_numeric_gradient(s, {"x": rng.randn(3, 2, 2)}, rtol=1e-6, dtype=np.float64)
    with pytest.raises(ShapeError):
        s.infer_shape(x=(3, 3))
    # one unknown input dim is filled from the output's size (MXNet does this too)
    y = mx.sym.Reshape(mx.sym.var("x"), shape=(6,)) + mx.sym.var("z")
    assert y.infer_shape_partial(x=(0, 3), z=(6,))[0][0] == (2, 3)
    assert mx.sym.Reshape(mx.sym.var("x"), target_shape=(0, 6)).infer_shape(x=(2, 3, 2))[1] \
        == [(2, 6)]


@pytest.mark.parametrize("make,ref", [
    (lambda x: mx.sym.Flatten(x), lambda a: a.reshape(a.shape[0], -1)),
    (lambda x: mx.sym.expand_dims(x, axis=1), lambda a: a[:, None]),
    (lambda x: mx.sym.expand_dims(x, axis=-1), lambda a: a[..., None]),
    (lambda x: mx.sym.transpose(x), lambda a: a.transpose()),
    (lambda x: mx.sym.transpose(x, axes=(1, 0, 2)), lambda a: a.transpose(1, 0, 2)),
    (lambda x: mx.sym.SwapAxis(x, dim1=0, dim2=2), lambda a: a.swapaxes(0, 2)),
    (lambda x: mx.sym.swapaxes(x, dim1=1, dim2=2), lambda a: a.swapaxes(1, 2)),
    (lambda x: mx.sym.tile(x, reps=(2, 1, 2)), lambda a: np.tile(a, (2, 1, 2))),
    (lambda x: mx.sym.tile(x, reps=(2,)), lambda a: np.tile(a, (2,))),
    (lambda x: mx.sym.tile(x, reps=(2, 1, 1, 3)), lambda a: np.tile(a, (2, 1, 1, 3))),
    (lambda x: mx.sym.repeat(x, repeats=2, axis=1), lambda a: np.repeat(a, 2, axis=1)),
    (lambda x: mx.sym.repeat(x, repeats=3), lambda a: np.repeat(a, 3)),
    (lambda x: mx.sym.reverse(x, axis=(0, 2)), lambda a: a[::-1, :, ::-1]),
    (lambda x: mx.sym.slice_axis(x, axis=2, begin=1, end=None), lambda a: a[:, :, 1:]),
    (lambda x: mx.sym.slice_axis(x, axis=0, begin=-1, end=2), lambda a: a[-1:2]),
    (lambda x: mx.sym.slice(x, begin=(None, 1), end=(None, 3)), lambda a: a[:, 1:3]),
    (lambda x: mx.sym.slice(x, begin=(1, None, 2), end=(None, None, 0), step=(1, -1, -1)),
     lambda a: a[1:, ::-1, 2:0:-1]),
    (lambda x: mx.sym.clip(x, a_min=-0.5, a_max=0.4), lambda a: np.clip(a, -0.5, 0.4)),
])
def test_shape_ops_forward_and_gradient(make, ref):
    x = rng.randn(2, 3, 4)
    x[np.abs(np.abs(x) - 0.45) < 0.06] = 0.0        # keep clear of clip edges
    s = make(mx.sym.var("x"))
    check_symbolic_forward(s, {"x": x}, [ref(x)])
    check_numeric_gradient(s, {"x": x}, rtol=1e-6, atol=1e-8, dtype=np.float64)


def test_squeeze():
    x = rng.randn(2, 1, 3, 1)
    assert mx.nd.squeeze(mx.nd.array(x)).shape == (2, 3)
    assert mx.nd.squeeze(mx.nd.array(x), axis=(3,)).shape == (2, 1, 3)
    assert mx.nd.squeeze(mx.nd.ones((1, 1))).shape == (1,)
    check_numeric_gradient(mx.sym.squeeze(mx.sym.var("x"), axis=1), {"x": x}, rtol=1e-6,
                           dtype=np.float64)
    with pytest.raises(ShapeError):
        mx.nd.squeeze(mx.nd.array(x), axis=(0,))


def test_transpose_ndarray_T_and_bad_axes():
    a = mx.nd.array(rng.randn(2, 3))
    assert_almost_equal(a.T, a.asnumpy().T)
    with pytest.raises(ShapeError):
        mx.sym.transpose(mx.sym.var("x"), axes=(0, 0, 1)).infer_shape(x=(2, 2, 2))


def test_concat_stack_split():
    a, b = rng.randn(2, 3), rng.randn(2, 1)
    c = mx.sym.Concat(mx.sym.var("a"), mx.sym.var("b"), dim=1)
    assert c.infer_shape(a=(2, 3), b=(2, 1))[1] == [(2, 4)]
    check_symbolic_forward(c, {"a": a, "b": b}, [np.concatenate([a, b], 1)])
    check_numeric_gradient(c, {"a": a, "b": b}, rtol=1e-6, dtype=np.float64)
    # one missing size along dim is inferred from the output
    z = mx.sym.concat(mx.sym.var("a"), mx.sym.var("b"), dim=0) + mx.sym.var("o")
    assert z.infer_shape_partial(a=(2, 3), o=(5, 3))[0][1] == (3, 3)
    st = mx.sym.stack(mx.sym.var("a"), mx.sym.var("b"), axis=1)
    p, q = rng.randn(2, 3), rng.randn(2, 3)
    check_symbolic_forward(st, {"a": p, "b": q}, [np.stack([p, q], 1)])
    check_numeric_gradient(st, {"a": p, "b": q}, rtol=1e-6, dtype=np.float64)
    x = rng.randn(2, 6, 2)
    sp = mx.sym.SliceChannel(mx.sym.var("x"), num_outputs=3, axis=1)
    assert len(sp.list_outputs()) == 3
    check_symbolic_forward(sp, {"x": x}, np.split(x, 3, axis=1))
    for k in range(3):
        check_numeric_gradient(sp[k], {"x": x}, rtol=1e-6, dtype=np.float64)
    sq = mx.sym.split(mx.sym.var("x"), num_outputs=2, axis=-1, squeeze_axis=True)
    check_symbolic_forward(sq, {"x": x}, [x[..., 0], x[..., 1]])
    check_numeric_gradient(sq[1], {"x": x}, rtol=1e-6, dtype=np.float64)
    with pytest.raises(ShapeError):
        sp.infer_shape(x=(2, 5, 2))
    with pytest.raises(ParamError):
        mx.sym.SliceChannel(mx.sym.var("x"), num_outputs=0)


def test_sparse_rows_slice_concat_clip():
    d = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]], np.float32)
    csr = mx.nd.array(d).tostype("csr")
    s = mx.nd.slice(csr, begin=(1, 1), end=(3, 4))
    assert s.stype == "csr"
    assert_almost_equal(s, d[1:3, 1:4])
    c = mx.nd.concat(csr, csr, dim=0)
    assert c.stype == "csr" and c.shape == (6, 4)
    assert_almost_equal(c, np.concatenate([d, d]))
    k = mx.nd.clip(csr, a_min=-1, a_max=3)
    assert k.stype == "csr"
    assert_almost_equal(k, np.clip(d, -1, 3))
    rsp = mx.nd.array(d).tostype("row_sparse")
    assert mx.nd.sparse.clip(rsp, a_min=0, a_max=2).stype == "row_sparse"
    # beyond MXNet: a range without 0 gives the correct dense result (MXNet: not implemented)
    for arr in (csr, rsp):
        out = mx.nd.clip(arr, a_min=1, a_max=3)
        assert out.stype == "default"
        assert_almost_equal(out, np.clip(d, 1, 3))
    with pytest.raises(ParamError):
        mx.sym.clip(mx.sym.var("x"), a_min=2, a_max=1)


def test_cast():
    x = np.array([1.7, -2.2])
    s = mx.sym.Cast(mx.sym.var("x"), dtype="int32")
    assert s.infer_type(x="float32")[1] == [np.int32]
    assert mx.nd.cast(mx.nd.array(x), dtype="int32").asnumpy().tolist() == [1, -2]
    s64 = mx.sym.Cast(mx.sym.var("x"), dtype="float64")
    check_symbolic_forward(s64, {"x": x}, [x.astype(np.float32)])
    exe = s64.simple_bind(mx.cpu(), x=(2,))
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([1.0, 2.0], dtype="float64"))
    assert exe.grad_dict["x"].dtype == np.float32
    with pytest.raises(ParamError):
        mx.sym.Cast(mx.sym.var("x"), dtype="complex64")


def test_partial_inference_through_slice_and_transpose():
    v = mx.sym.var("data", shape=(0, 20))
    assert mx.sym.slice(v, begin=(None, 3), end=(None, 10)).infer_shape_partial()[1][0] \
        == (0, 7)
    assert mx.sym.slice_axis(mx.sym.var("d", shape=(10, 0)), axis=0, begin=0, end=5) \
        .infer_shape_partial()[1][0] == (5, 0)
    # transpose infers its input back from its output; -1 dims of zeros/ones are unknown
    b = mx.sym.ones(shape=(2, 3)) + mx.sym.transpose(mx.sym.ones(shape=(-1, -1)))
    assert b.bind(mx.cpu(), args={}).forward()[0].shape == (2, 3)


def test_one_hot_of_depth_zero():
    assert mx.nd.one_hot(mx.nd.array([[1, 2]]), depth=0).shape == (1, 2, 0)
