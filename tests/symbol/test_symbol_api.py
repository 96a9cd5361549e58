"""Symbol API: listing, attributes, naming, graph access, composition, copies, operators.

Expected values were probed on MXNet 1.9.1.
"""
import copy
import json
import pickle

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError, ParamError
from sparsym.symbol import NotImplementedForSymbol  # noqa: F401  (re-exported name)


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _fc(x, n, name):
    return mx.sym.FullyConnected(x, num_hidden=n, name=name)


# ---------------------------------------------------------------------- listing
def test_listing_and_len_and_iteration():
    x = mx.sym.var("x")
    fc = _fc(x, 4, "fc")
    net = mx.sym.SoftmaxOutput(_fc(fc, 3, "fc2"), name="sm")
    assert net.list_arguments() == ["x", "fc_weight", "fc_bias", "fc2_weight", "fc2_bias",
                                    "sm_label"]
    assert net.list_outputs() == ["sm_output"]
    assert net.list_auxiliary_states() == []
    bn = mx.sym.BatchNorm(x, name="bn")
    assert bn.list_inputs() == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    sc = mx.sym.SliceChannel(x, num_outputs=3, name="sc")
    assert len(sc) == 3 and sc.name == "sc"
    assert sc.list_outputs() == ["sc_output0", "sc_output1", "sc_output2"]
    assert [s.list_outputs()[0] for s in sc] == sc.list_outputs()


def test_names_follow_mxnet_hints():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    got = [(x + y).name, (x + 1).name, (x * y).name, (1 - x).name, (x / 2).name, (2 / x).name,
           (x ** 2).name, (-x).name, (x == y).name, (x > 1).name, abs(x).name, (2 ** x).name,
           (2 % x).name, (x % y).name, (x ** y).name]
    assert got == ["_plus0", "_plusscalar0", "_mul0", "_rminusscalar0", "_divscalar0",
                   "_rdivscalar0", "_powerscalar0", "_mulscalar0", "_equal0", "_greater_scalar0",
                   "abs0", "_rpower_scalar0", "_rmodscalar0", "_mod0", "_power0"]
    assert mx.sym.elemwise_add(x, y).name == "elemwise_add0"
    assert mx.sym.sparse.dot(x, y).name == "dot0"
    assert mx.sym.FullyConnected(x, num_hidden=2).name == "fullyconnected0"


def test_name_manager_prefix_and_scope_reset():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with mx.name.Prefix("p_"):
        assert mx.sym.var("v").name == "v"  # variables keep their names
        assert mx.sym.FullyConnected(x, num_hidden=2).name == "p_fullyconnected0"
        assert mx.sym.FullyConnected(x, num_hidden=2, name="named").name == "p_named"
        assert (x + y).name == "p__plus0"
        net = mx.sym.FullyConnected(x, num_hidden=2, name="fc1")
        assert net.list_arguments() == ["x", "p_fc1_weight", "p_fc1_bias"]
    with mx.name.NameManager():
        assert (x + y).name == "_plus0"
    assert (x + y).name == "_plus0"   # the outer manager's counter (fixture) is untouched
    assert (x + y).name == "_plus1"
    with pytest.warns(DeprecationWarning):
        assert isinstance(mx.name.NameManager.current, mx.name.NameManager)


# ---------------------------------------------------------------------- attributes
def test_variable_attributes_exact_mxnet_strings():
    v = mx.sym.var("v", shape=(2, 3), dtype="float64", lr_mult=2, wd_mult=0.5,
                   init=mx.init.One(), stype="csr", __foo__="bar")
    assert v.list_attr() == {
        "__storage_type__": "2", "__init__": '["one", {}]', "__foo__": "bar",
        "__dtype__": "1", "__wd_mult__": "0.5", "wd_mult": "0.5", "__lr_mult__": "2",
        "lr_mult": "2", "__shape__": "(2, 3)"}
    assert mx.sym.var("v", shape=3).list_attr() == {"__shape__": "3"}
    assert mx.sym.var("v", init="zeros").list_attr() == {"__init__": "zeros"}
    assert mx.sym.var("v", dtype=np.float16).list_attr() == {"__dtype__": "2"}
    assert mx.sym.var("v", stype="row_sparse").list_attr() == {"__storage_type__": "1"}
    assert mx.sym.var("v", stype="default").list_attr() == {"__storage_type__": "0"}
    assert mx.sym.var("v", attr={"a": "b"}).list_attr() == {"a": "b"}
    with pytest.raises(ValueError, match="Set Attr only accepts string values"):
        mx.sym.var("v", attr={"a": 1})
    with pytest.raises(ValueError, match="Attribute name=foo is not supported"):
        mx.sym.var("v", foo=1)
    with pytest.raises(TypeError, match="Expect a string for variable `name`"):
        mx.sym.var(3)


def test_op_attributes_list_only_given_params():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    assert fc.list_attr() == {"num_hidden": "4"}
    assert fc.attr_dict() == {"fc_weight": {"num_hidden": "4"}, "fc_bias": {"num_hidden": "4"},
                              "fc": {"num_hidden": "4"}}
    assert fc.attr("num_hidden") == "4" and fc.attr("no_bias") is None
    nb = mx.sym.FullyConnected(x, num_hidden=2, no_bias=True, name="f")
    assert nb.attr_dict() == {"f_weight": {"no_bias": "True", "num_hidden": "2"},
                              "f": {"no_bias": "True", "num_hidden": "2"}}
    assert mx.sym.Reshape(x, shape=[2, 3], name="r").attr_dict() == {"r": {"shape": "[2, 3]"}}
    assert mx.sym.add_n(x, x, name="s").attr_dict() == {"s": {"num_args": "2"}}
    dunder = mx.sym.FullyConnected(x, num_hidden=2, __mood__="angry", name="f")
    assert dunder.attr_dict()["f"] == {"num_hidden": "2", "__mood__": "angry"}
    hidden = mx.sym.FullyConnected(x, num_hidden=2, attr={"lr_mult": "2"}, name="f")
    assert hidden.attr_dict()["f"] == {"num_hidden": "2", "__lr_mult__": "2", "lr_mult": "2"}
    assert hidden.attr("lr_mult") == "2" and hidden.attr("__lr_mult__") == "2"
    # MXNet: a plain key that is not a parameter reaches the operator's parser
    with pytest.raises(ParamError, match="mood"):
        mx.sym.FullyConnected(x, num_hidden=2, attr={"mood": "angry"})


def test_attr_scope_ctx_group_and_user_keys():
    with mx.AttrScope(ctx_group="dev1", lr_mult="0.1"):
        a = mx.sym.var("a")
        f2 = mx.sym.FullyConnected(a, num_hidden=3, name="f2")
    both = {"__lr_mult__": "0.1", "lr_mult": "0.1", "__ctx_group__": "dev1",
            "ctx_group": "dev1"}
    assert f2.attr_dict() == {"a": both, "f2_weight": {"num_hidden": "3", **both},
                              "f2_bias": {"num_hidden": "3", **both},
                              "f2": {"num_hidden": "3", **both}}
    doc = json.loads(f2.tojson())
    assert doc["nodes"][0]["attrs"] == {"__ctx_group__": "dev1", "__lr_mult__": "0.1"}
    with mx.AttrScope(group="4", data="great"):
        assert mx.sym.var("d2").list_attr() == {"data": "great", "group": "4"}
        with pytest.raises(ParamError):
            mx.sym.FullyConnected(a, num_hidden=2)
    with pytest.raises(ValueError, match="Attributes need to be string"):
        mx.AttrScope(ctx_group=1)
    with mx.AttrScope(ctx_group="outer"):
        with mx.AttrScope(mood="x"):
            assert mx.sym.var("n").list_attr()["ctx_group"] == "outer"
    assert mx.attribute.AttrScope is mx.AttrScope


def test_set_attr_reparses_params_and_converts_hidden_keys():
    x = mx.sym.var("x")
    x._set_attr(foo="bar", ctx_group="g")
    assert x.list_attr() == {"foo": "bar", "__ctx_group__": "g", "ctx_group": "g"}
    assert json.loads(x.tojson())["nodes"][0]["attrs"] == {"foo": "bar", "__ctx_group__": "g"}
    with pytest.raises(ValueError, match="Set Attr only accepts string values"):
        x._set_attr(foo=1)
    fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=4, name="fc")
    net = fc * 2
    assert net.infer_shape(d=(2, 3))[1] == [(2, 4)]
    fc._set_attr(num_hidden="6")   # the graph containing fc sees the change
    assert net.infer_shape(d=(2, 3))[1] == [(2, 6)]
    with pytest.raises(DeprecationWarning):
        x.list_attr(recursive=True)


# ---------------------------------------------------------------------- graph access
def test_getitem_children_internals_and_group():
    x, y, z = mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("z")
    c = x + y
    d = z + c
    assert d.get_children().list_outputs() == ["z", "_plus0_output"]
    assert x.get_children() is None
    assert mx.sym.Group([d, x * y]).get_children().list_outputs() == [
        "z", "_plus0_output", "x", "y"]
    internals = d.get_internals()
    assert internals.list_outputs() == ["z", "x", "y", "_plus0_output", "_plus1_output"]
    assert internals["x"].name == "x" and internals[3].name == "_plus0"
    assert internals[-1].name == "_plus1"
    assert internals[1:3].list_outputs() == ["x", "y"]
    with pytest.raises(IndexError):
        internals[99]
    with pytest.raises(ValueError, match='Cannot find output that matches name "q"'):
        internals["q"]
    with pytest.raises(TypeError, match="integer index"):
        internals[1.0]
    fc1 = internals["_plus0_output"]
    assert fc1.list_arguments() == ["x", "y"]
    g = mx.sym.Group([x, y + z])
    assert g.name is None and repr(g) == "<Symbol group [x, _plus2]>" and repr(x) == "<Symbol x>"
    with pytest.raises(TypeError, match="Expected a list of symbols"):
        mx.sym.Group([])
    with pytest.raises(TypeError, match="Expected a list of symbols"):
        mx.sym.Group([1])
    sc = mx.sym.SliceChannel(x, num_outputs=2, name="sc")
    assert sc["sc_output1"].name == "sc"


def test_internals_hide_hidden_outputs():
    x = mx.sym.var("x")
    bn = mx.sym.BatchNorm(x, name="bn")
    outs = bn.get_internals().list_outputs()
    assert outs == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output"]


# ---------------------------------------------------------------------- composition
def test_call_composes_by_keyword_on_a_copy():
    data = mx.sym.var("data")
    net1 = mx.sym.FullyConnected(data, num_hidden=10, name="fc1")
    net2 = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, name="fc2")
    comp = net2(data=net1, name="composed")
    assert comp.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight",
                                     "fc2_bias"]
    assert comp.name == "composed"
    assert net2.list_arguments() == ["data", "fc2_weight", "fc2_bias"] and net2.name == "fc2"
    assert comp.infer_shape(data=(2, 7))[1] == [(2, 5)]
    x, y, z, a = (mx.sym.var(n) for n in "xyza")
    assert (x + y + z)(y=a, x=a).list_arguments() == ["a", "z"]
    assert (x + y)(x=z * z, name="q").name == "q"
    out = (x * 2 + y)(x=mx.sym.var("w") + 1)
    v = out.eval(w=mx.nd.array([1.0, 2.0]), y=mx.nd.array([0.5, 0.5]))[0].asnumpy()
    np.testing.assert_allclose(v, [4.5, 6.5])


def test_compose_errors_match_mxnet():
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, name="fc2")
    other = mx.sym.var("o")
    with pytest.raises(TypeError, match="either as positional or keyword"):
        net(other, data=other)
    with pytest.raises(TypeError, match="Compose expect `Symbol` as arguments"):
        net(data=3)
    with pytest.raises(MXNetError, match=r"Symbol.ComposeKeyword argument name foo not found"):
        net(foo=other)
    with pytest.raises(MXNetError, match=r"Candidate arguments:\n\t\[0\]data\n\t\[1\]fc2_weight"):
        net(foo=other)
    with pytest.raises(MXNetError, match="Keyword Argument data is a tuple"):
        net(data=mx.sym.Group([other, other]))
    with pytest.raises(MXNetError, match="General composition only support kwargs"):
        net(other)


def test_copy_deepcopy_and_pickle_are_independent():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    d = mx.sym.var("z") + (x + y)
    for dup in (copy.copy(d), copy.deepcopy(d), pickle.loads(pickle.dumps(d))):
        assert dup.tojson() == d.tojson()
        assert dup.list_arguments() == ["z", "x", "y"]
        dup._set_attr(mood="calm")
        assert d.attr("mood") is None
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    back = pickle.loads(pickle.dumps(fc))
    assert back.attr_dict() == fc.attr_dict()
    assert back.infer_shape(x=(2, 5))[0] == [(2, 5), (3, 5), (3,)]


def test_eval_and_missing_argument():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    out = (x + y).eval(x=mx.nd.ones(2), y=mx.nd.ones(2))
    assert isinstance(out, list) and out[0].asnumpy().tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="key `y` is missing in `args`"):
        (x + y).eval(x=mx.nd.ones(2))


# ---------------------------------------------------------------------- operators
@pytest.mark.parametrize("expr, ref", [
    (lambda a, b: a + b, lambda a, b: a + b), (lambda a, b: a - b, lambda a, b: a - b),
    (lambda a, b: a * b, lambda a, b: a * b), (lambda a, b: a / b, lambda a, b: a / b),
    (lambda a, b: a ** b, lambda a, b: a ** b), (lambda a, b: a % b, lambda a, b: a % b),
    (lambda a, b: a + 2, lambda a, b: a + 2), (lambda a, b: 2 - a, lambda a, b: 2 - a),
    (lambda a, b: 3 * a, lambda a, b: 3 * a), (lambda a, b: a / 4, lambda a, b: a / 4),
    (lambda a, b: 2 / a, lambda a, b: 2 / a), (lambda a, b: a ** 2, lambda a, b: a ** 2),
    (lambda a, b: 2 ** a, lambda a, b: 2 ** a), (lambda a, b: -a, lambda a, b: -a),
    (lambda a, b: abs(a - b), lambda a, b: abs(a - b)), (lambda a, b: a % 2, lambda a, b: a % 2),
    (lambda a, b: a == b, lambda a, b: a == b), (lambda a, b: a != b, lambda a, b: a != b),
    (lambda a, b: a > b, lambda a, b: a > b), (lambda a, b: a >= 1.5, lambda a, b: a >= 1.5),
    (lambda a, b: a < b, lambda a, b: a < b), (lambda a, b: a <= 2, lambda a, b: a <= 2),
])
def test_arithmetic_and_comparison_match_numpy(expr, ref):
    av = np.array([[1.0, 2.0, 3.0]], np.float32)
    bv = np.array([[2.0, 2.0, 1.0]], np.float32)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = expr(a, b)
    args = {n: mx.nd.array(v) for n, v in (("a", av), ("b", bv)) if n in s.list_arguments()}
    got = s.eval(**args)[0].asnumpy()
    np.testing.assert_allclose(got, ref(av, bv).astype(np.float32), rtol=1e-6)


def test_operator_errors_and_ndarray_only_methods():
    x = mx.sym.var("x")
    with pytest.raises(TypeError, match="not supported"):
        x + "a"
    with pytest.raises(NotImplementedForSymbol, match=r'__iadd__ \(namely operator "\+="\)'):
        x.__iadd__(1)
    with pytest.raises(NotImplementedForSymbol):
        bool(x)
    for name in ("asnumpy", "copy", "wait_to_read", "as_in_context"):
        with pytest.raises(NotImplementedForSymbol, match=f"Function {name} is not implemented"):
            getattr(x, name)()
    assert isinstance(NotImplementedForSymbol("f"), MXNetError)
    assert hash(x) == hash(x) and {x: 1}[x] == 1


def test_fluent_methods_build_the_same_nodes():
    x = mx.sym.var("x")
    r = json.loads(x.reshape((2, 3)).tojson())["nodes"][1]
    assert (r["op"], r["name"], r["attrs"]) == ("Reshape", "reshape0", {"shape": "(2, 3)"})
    s = json.loads(x.sum(axis=1).tojson())["nodes"][1]
    assert (s["op"], s["attrs"]) == ("sum", {"axis": "1"})
    assert x.sum(1).list_attr() == {"axis": "1"}
    assert x.clip(0, 1).list_attr() == {"a_min": "0", "a_max": "1"}
    c = json.loads(x.astype("float16").tojson())["nodes"][1]
    assert (c["op"], c["attrs"]) == ("Cast", {"dtype": "float16"})
    v = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    got = x.reshape((3, 2)).abs().sum(axis=0).eval(x=mx.nd.array(v))[0].asnumpy()
    np.testing.assert_allclose(got, np.abs(v.reshape(3, 2)).sum(0))
    t = x.tostype("row_sparse")
    assert t.infer_storage_type()[1] == ["row_sparse"]


def test_symbol_debug_str_layout():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    text = (x * 2 + y).debug_str()
    assert text == ("Symbol Outputs:\n\toutput[0]=_plus0(0)\nVariable:x\n--------------------\n"
                    "Op:_mul_scalar, Name=_mulscalar0\nInputs:\n\targ[0]=x(0) version=0\nAttrs:\n"
                    "\tscalar=2\nVariable:y\n--------------------\nOp:elemwise_add, Name=_plus0\n"
                    "Inputs:\n\targ[0]=_mulscalar0(0)\n\targ[1]=y(0) version=0\n")


def test_optimize_for_known_backends_returns_an_unchanged_copy():
    import pytest

    import sparsym as mx
    a = mx.sym.var("a")
    s = mx.sym.relu(a) + 1
    for backend in ("MKLDNN", "MKLDNN_QUANTIZE"):
        t = s.optimize_for(backend, args={"a": mx.nd.ones((2,))})
        assert t is not s and t.tojson() == s.tojson()
        assert s.get_backend_symbol(backend).tojson() == s.tojson()
    with pytest.raises(mx.base.MXNetError, match="cannot be found"):
        s.optimize_for("nope")
    with pytest.raises(mx.base.MXNetError, match="SubgraphBackendRegistry"):
        s.get_backend_symbol("nope")
