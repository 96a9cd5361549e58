"""topk, sort, argsort: values against NumPy's stable sorts, MXNet 1.9.1's tie order and
output types (recorded from the oracle), gradients checked numerically."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

X = np.array([[3, 1, 2, 1, 5], [0, 4, 4, -1, 2]], dtype=np.float32)


def test_topk_return_types_and_ties_match_mxnet():
    x = mx.nd.array(X)
    # recorded on MXNet 1.9.1: ties keep their index order in both directions
    assert mx.nd.topk(x, k=2).asnumpy().tolist() == [[4, 0], [1, 2]]
    v, i = mx.nd.topk(x, k=2, ret_typ="both", is_ascend=True)
    assert v.asnumpy().tolist() == [[1, 1], [-1, 0]] and i.asnumpy().tolist() == [[1, 3], [3, 0]]
    assert mx.nd.topk(x, k=2, ret_typ="mask").asnumpy().tolist() == [[1, 0, 0, 0, 1],
                                                                    [0, 1, 1, 0, 0]]
    assert mx.nd.topk(x, k=3, axis=None, ret_typ="value").asnumpy().tolist() == [5, 4, 4]
    assert mx.nd.topk(x, k=2, axis=None).asnumpy().tolist() == [4, 6]
    assert mx.nd.topk(x, k=2, axis=-2).asnumpy().tolist() == [[0, 1, 1, 0, 0], [1, 0, 0, 1, 1]]
    r = mx.nd.topk(x, k=1, axis=0, dtype="int32")
    assert r.dtype == np.int32 and r.asnumpy().tolist() == [[0, 1, 1, 0, 0]]
    assert mx.nd.topk(x, k=0, ret_typ="value").shape == (2, 5)   # k <= 0: the whole axis
    with pytest.raises(MXNetError, match="k must be smaller than 5"):
        mx.nd.topk(x, k=7)
    with pytest.raises(MXNetError, match="Invalid axis"):
        mx.nd.topk(x, axis=3)


def test_sort_argsort_against_numpy():
    x = np.random.RandomState(0).randint(-3, 4, size=(3, 4, 5)).astype(np.float64)
    for axis in (0, 1, -1):
        asc = np.sort(x, axis=axis, kind="stable")
        assert np.array_equal(mx.nd.sort(mx.nd.array(x), axis=axis).asnumpy(), asc)
        assert np.array_equal(mx.nd.sort(mx.nd.array(x), axis=axis, is_ascend=False).asnumpy(),
                              -np.sort(-x, axis=axis, kind="stable"))
        idx = mx.nd.argsort(mx.nd.array(x), axis=axis, dtype="int64").asnumpy()
        assert np.array_equal(idx, np.argsort(x, axis=axis, kind="stable"))
        idx = mx.nd.argsort(mx.nd.array(x), axis=axis, is_ascend=False).asnumpy()
        assert np.array_equal(idx, np.argsort(-x, axis=axis, kind="stable"))
    assert mx.nd.argsort(mx.nd.array(X), axis=None).asnumpy().tolist() == \
        [8, 5, 1, 3, 2, 9, 0, 6, 7, 4]
    u = mx.nd.array(np.array([3, 0, 255, 7], np.uint8), dtype="uint8")
    assert mx.nd.sort(u, is_ascend=False).asnumpy().tolist() == [255, 7, 3, 0]


def test_symbolic_outputs_and_types():
    s = mx.sym.topk(mx.sym.var("x"), k=2, ret_typ="both", dtype="int32")
    assert s.list_outputs() == ["topk0_output0", "topk0_output1"]
    assert s.infer_type(x="float64")[1] == [np.float64, np.int32]
    assert s.infer_shape(x=(2, 5))[1] == [(2, 2), (2, 2)]
    v = mx.sym.topk(mx.sym.var("x"), k=2, ret_typ="value")
    assert len(v.list_outputs()) == 1
    assert mx.sym.argsort(mx.sym.var("x")).infer_type(x="float64")[1] == [np.float32]
    assert mx.sym.topk(mx.sym.var("x"), ret_typ="mask").infer_shape(x=(2, 5))[1] == [(2, 5)]


@pytest.mark.parametrize("make", [
    lambda x: mx.sym.topk(x, k=2, ret_typ="value"),
    lambda x: mx.sym.topk(x, k=3, axis=0, ret_typ="value", is_ascend=True),
    lambda x: mx.sym.topk(x, k=4, axis=None, ret_typ="value"),
    lambda x: mx.sym.sort(x, axis=1, is_ascend=False),
    lambda x: mx.sym.sort(x, axis=None),
])
def test_value_gradients(make):
    x = np.random.RandomState(3).permutation(60).reshape(3, 4, 5).astype(np.float64)
    check_numeric_gradient(make(mx.sym.var("x")), {"x": x}, numeric_eps=1e-3, rtol=1e-5,
                           dtype=np.float64)


def test_topk_both_forward_and_fluent():
    x = np.random.RandomState(1).randn(4, 6)
    s = mx.sym.topk(mx.sym.var("x"), k=3, ret_typ="both")
    idx = np.argsort(-x, axis=-1, kind="stable")[:, :3]
    check_symbolic_forward(s, {"x": x}, [np.take_along_axis(x, idx, -1), idx])
    assert mx.nd.array(x).topk(k=2).shape == (4, 2)
    assert mx.nd.array(x).sort().shape == (4, 6)
    assert mx.nd.array(x).argsort().shape == (4, 6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_topk_of_few_from_a_long_axis_is_the_stable_sort_prefix(dtype):
    """A small k on a long axis takes the partition path; ties keep their index order."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 40 if dtype != np.float32 else 10**6, (3, 9000, 2)).astype(dtype)
    for ascend in (True, False):
        got = mx.nd.topk(mx.nd.array(x, dtype=dtype), axis=1, k=6, is_ascend=ascend,
                         ret_typ="indices", dtype="int64").asnumpy()
        key = x.astype(np.int64) if ascend else -x.astype(np.int64)
        want = np.argsort(key, axis=1, kind="stable")[:, :6]
        np.testing.assert_array_equal(got, want)
