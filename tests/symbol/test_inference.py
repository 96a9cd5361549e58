"""infer_shape / infer_type (+ partial) / infer_storage_type: results, warnings and errors.

Incomplete input never crashes: it returns what is known, warns, or raises a typed error.
"""
import warnings

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import DTypeError, MXNetError, ShapeError


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _mlp():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    return mx.sym.FullyConnected(fc, num_hidden=3, name="fc2")


def test_infer_shape_complete_by_name_and_position():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    assert (x + y).infer_shape(x=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert (x + y).infer_shape((2, 3), None) == ([(2, 3), (2, 3)], [(2, 3)], [])
    arg, out, aux = _mlp().infer_shape(x=(2, 5))
    assert arg == [(2, 5), (4, 5), (4,), (3, 4), (3,)] and out == [(2, 3)] and aux == []
    bn = mx.sym.BatchNorm(mx.sym.var("d"), name="bn")
    assert bn.infer_shape(d=(2, 3))[2] == [(3,), (3,)]
    assert bn.infer_shape(bn_moving_mean=(3,), d=(2, 3))[0] == [(2, 3), (3,), (3,)]


def test_infer_shape_backward_direction_and_declared_shapes():
    x, y = mx.sym.var("x"), mx.sym.var("y", shape=(0, 4))
    assert (x * y).infer_shape(x=(5, 0)) == ([(5, 4), (5, 4)], [(5, 4)], [])
    w = mx.sym.var("w", shape=(7, 3))
    assert mx.sym.dot(mx.sym.var("a"), w).infer_shape(a=(2, 7))[1] == [(2, 3)]
    # a keyword shape replaces the declared one (MXNet's rule)
    assert mx.sym.var("v", shape=(2, 2)).infer_shape(v=(3, 3))[1] == [(3, 3)]


def test_infer_shape_incomplete_warns_and_returns_none():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with pytest.warns(UserWarning, match=r"Cannot decide shape for the following arguments "
                      r"\(0s in shape means unknown dimensions\). Consider providing them as "
                      r"input:\n\tx: \(\)\n\ty: \(\)"):
        assert (x + y).infer_shape() == (None, None, None)
    with pytest.warns(UserWarning, match=r"x: \(2, 0\)"):
        assert (x + y).infer_shape(x=(2, 0)) == (None, None, None)


def test_infer_shape_incomplete_lists_at_most_ten():
    syms = [mx.sym.var(f"a{i}") for i in range(13)]
    s = syms[0]
    for v in syms[1:]:
        s = s + v
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert s.infer_shape() == (None, None, None)
    msg = str(w[0].message)
    assert "a9: ()" in msg and "a10" not in msg and msg.endswith("\n\t...")


def test_infer_shape_partial_returns_what_is_known():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    assert (x + y).infer_shape_partial(x=(2, 0)) == ([(2, 0), (2, 0)], [(2, 0)], [])
    arg, out, aux = _mlp().infer_shape_partial()
    assert arg[0] == () and arg[1] == () and out == [()] and aux == []
    assert arg[2] == ()            # MXNet: nothing until the data shape is known
    data = mx.sym.var("data")
    prev = mx.sym.var("prev")
    fc1 = mx.sym.FullyConnected(data, num_hidden=128, name="fc1")
    fc2 = mx.sym.FullyConnected(prev, num_hidden=128, name="fc2")
    arg, out, _ = (fc1 + fc2).infer_shape_partial(data=(10, 64))
    # MXNet 1.9.1's answer: fc2's weight and bias stay unknown with its data
    assert arg == [(10, 64), (128, 64), (128,), (), (), ()] and out == [(10, 128)]
    arg, _, _ = (fc1 + fc2).infer_shape_partial(data=(10, 64), prev=(10, 128))
    assert arg[3:] == [(10, 128), (128, 128), (128,)]


@pytest.mark.parametrize("kwargs", [
    {}, {"x": (0, 0)}, {"x": (2, 0)}, {"fc_weight": (4, 0)}, {"fc2_bias": (3,)},
    {"x": (0, 5)}, {"fc2_weight": (3, 4)}, {"x": (2, 5), "fc_weight": (4, 0)},
])
def test_partial_inputs_never_crash(kwargs):
    net = mx.sym.SoftmaxOutput(_mlp(), name="sm")
    arg, out, aux = net.infer_shape_partial(**kwargs)
    assert len(arg) == 6 and len(out) == 1 and aux == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = net.infer_shape(**kwargs)
    assert res == (None, None, None) or all(0 not in s for s in res[0])
    tp = net.infer_type_partial()
    assert len(tp[0]) == 6
    if res == (None, None, None):
        with pytest.raises(ShapeError, match="InferShape pass cannot decide shapes"):
            net.simple_bind(mx.cpu(), **kwargs)
    else:
        exe = net.simple_bind(mx.cpu(), **kwargs)
        assert [a.shape for a in exe.arg_arrays] == res[0]


def test_infer_shape_inconsistent_names_node_input_and_both_shapes(capsys):
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with pytest.raises(ShapeError) as err:
        (x + y).infer_shape(x=(2, 3), y=(3, 3))
    # MXNet also prints the arguments on stdout before raising
    assert capsys.readouterr().out == "infer_shape error. Arguments:\n  x: (2, 3)\n  y: (3, 3)\n"
    msg = str(err.value)
    assert "infer_shape error. Arguments:\n  x: (2, 3)\n  y: (3, 3)" in msg
    assert "Error in operator _plus0 (elemwise_add)" in msg
    assert "Incompatible attr in node _plus0 at 1-th input 'rhs'" in msg
    assert "expected [2,3], got [3,3]" in msg and "variable 'y'" in msg
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    with pytest.raises(ShapeError, match=r"Error in operator fc \(FullyConnected\).*'weight'.*"
                       r"\[5,3\].*\[4,3\]"):
        fc.infer_shape(x=(2, 3), fc_weight=(5, 3))
    with pytest.raises(ShapeError, match=r"#0: \(2, 3\)"):
        (x + y).infer_shape((2, 3), (3, 3))


def test_infer_shape_argument_errors():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with pytest.raises(MXNetError, match=r"InferShapeKeyword argument name z not found.\n"
                       r"Candidate arguments:\n\t\[0\]x\n\t\[1\]y\n"):
        (x + y).infer_shape(x=(2, 3), z=(2, 3))
    with pytest.raises(ValueError, match="either by positional or kwargs way"):
        (x + y).infer_shape((2, 3), y=(2, 3))
    with pytest.raises(TypeError, match="Arguments need to be shapes"):
        (x + y).infer_shape(x=2)
    with pytest.raises(MXNetError, match="positional"):
        (x + y).infer_shape((1,), (1,), (1,))


def test_infer_type_forms_and_errors():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    assert (x + y).infer_type(x="float64") == ([np.float64, np.float64], [np.float64], [])
    assert (x + y).infer_type(np.float16, None)[1] == [np.float16]
    assert mx.sym.Cast(x, dtype="int32").infer_type(x="float32")[1] == [np.int32]
    with pytest.warns(UserWarning, match=r"Cannot decide type for the following arguments. "
                      r"Consider providing them as input:\n\tx: None\n\ty: None"):
        assert (x + y).infer_type() == (None, None, None)
    assert _mlp().infer_type_partial() == ([None] * 5, [None], [])
    with pytest.raises(DTypeError) as err:
        (x + y).infer_type(x="float64", y="float32")
    msg = str(err.value)
    assert "infer_type error. Arguments:\n  x: float64\n  y: float32" in msg
    assert "Incompatible attr in node _plus" in msg and "float64" in msg and "float32" in msg
    with pytest.raises(MXNetError, match="InferTypeKeyword argument name q not found"):
        (x + y).infer_type(q="float32")
    v = mx.sym.var("v", dtype="float16")
    assert (v * 2).infer_type()[1] == [np.float16]


def test_infer_storage_type_public():
    x = mx.sym.var("x", stype="csr")
    w = mx.sym.var("w")
    assert mx.sym.dot(x, w).infer_storage_type() == (["csr", "default"], ["default"], [])
    assert mx.sym.dot(x, w, transpose_a=True).infer_storage_type()[1] == ["row_sparse"]
    r = mx.sym.var("r")
    assert (r + r).infer_storage_type(r="row_sparse")[1] == ["row_sparse"]
    assert (r + r).infer_storage_type("csr")[1] == ["csr"]
    with pytest.raises(MXNetError):
        (r + r).infer_storage_type(r="dense")


def test_infer_on_loaded_sparse_fixture():
    s = mx.sym.load("tests/fixtures/mxnet/sparse_linear-symbol.json")
    assert s.infer_storage_type()[0] == ["csr", "row_sparse", "default", "default"]
    arg, out, _ = s.infer_shape(data=(4, 100))
    assert arg == [(4, 100), (100, 1), (1,), (4, 1)] and out == [(4, 1)]
