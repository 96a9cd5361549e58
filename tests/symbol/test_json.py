"""Symbol JSON in MXNet 1.9.1's format: fixture files written by MXNet load here, and ours
load in MXNet (checked live with ~/mxref/bin/python when it is installed)."""
import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError, ParamError

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")
MXREF = os.path.expanduser("~/mxref/bin/python")


def _fix(name):
    return os.path.join(FIX, name)


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def test_mlp_fixture_loads_and_matches_mxnet_predictions():
    sym = mx.sym.load(_fix("mlp_ckpt-symbol.json"))
    assert sym.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "softmax_label"]
    assert sym.list_outputs() == ["softmax_output"]
    params = mx.nd.load(_fix("mlp_ckpt-0001.params"))
    ref = np.load(_fix("mlp_ckpt_predict.npz"))
    args = {k[4:]: v for k, v in params.items()}
    args["data"] = mx.nd.array(ref["data"])
    args["softmax_label"] = mx.nd.zeros((4,))
    out = sym.bind(mx.cpu(), args).forward()[0].asnumpy()
    np.testing.assert_allclose(out, ref["softmax_output"], rtol=1e-5, atol=1e-6)


def test_sparse_fixture_keeps_stype_ids_and_init():
    sym = mx.sym.load(_fix("sparse_linear-symbol.json"))
    attrs = sym.attr_dict()
    assert attrs["data"] == {"__storage_type__": "2"}
    assert attrs["weight"]["__storage_type__"] == "1"
    assert attrs["weight"]["__init__"] == '["normal", {"sigma": 0.01}]'
    exe = sym.simple_bind(mx.cpu(), data=(4, 100))
    assert exe.arg_dict["data"].stype == "csr" and exe.arg_dict["weight"].stype == "row_sparse"
    again = mx.sym.load_json(sym.tojson())
    assert again.tojson() == sym.tojson()


def test_ctx_group_fixture_places_arrays_by_group():
    sym = mx.sym.load(_fix("ctx_group-symbol.json"))
    attrs = sym.attr_dict()
    assert attrs["fc1_weight"] == {"__ctx_group__": "dev1", "ctx_group": "dev1",
                                   "__lr_mult__": "2.0", "lr_mult": "2.0",
                                   "__wd_mult__": "0.5", "wd_mult": "0.5"}
    assert attrs["fc2"]["ctx_group"] == "dev2"
    exe = sym.simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)},
                          data=(2, 5))
    assert exe.arg_dict["fc1_weight"].context == mx.cpu(1)
    assert exe.grad_dict["fc1_weight"].context == mx.cpu(1)
    assert exe.arg_dict["fc2_bias"].context == mx.cpu(2)
    assert exe.arg_dict["data"].context == mx.cpu(0)
    assert exe.outputs[0].context == mx.cpu(2)


def test_round_trip_preserves_everything():
    x = mx.sym.var("x", stype="csr")
    w = mx.sym.var("w", stype="row_sparse", shape=(100, 1), lr_mult=2.0, init=mx.init.One())
    with mx.AttrScope(ctx_group="dev1"):
        fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=8, name="fc1", no_bias=True)
        act = mx.sym.Activation(fc, act_type="relu", name="relu1")
    g = mx.sym.Group([
        mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(x, w),
                                                           mx.sym.var("b", shape=(1,))),
                                      name="lro"),
        mx.sym.SoftmaxOutput(act, name="sm"), mx.sym.SliceChannel(act, num_outputs=2)[1]])
    doc = json.loads(g.tojson())
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}
    assert doc["arg_nodes"] == [i for i, n in enumerate(doc["nodes"]) if n["op"] == "null"]
    back = mx.sym.load_json(g.tojson())
    assert back.tojson() == g.tojson()
    assert back.list_outputs() == g.list_outputs()
    assert back.attr_dict() == g.attr_dict()
    assert back.infer_shape(x=(4, 100), d=(4, 5)) == g.infer_shape(x=(4, 100), d=(4, 5))


def test_save_load_file(tmp_path):
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    f = tmp_path / "net-symbol.json"
    net.save(str(f))
    assert mx.sym.load(str(f)).tojson() == net.tojson()


def test_legacy_attr_and_param_keys_load():
    doc = {"nodes": [
        {"op": "null", "name": "data", "attr": {"ctx_group": "g1"}, "inputs": []},
        {"op": "null", "name": "fc_weight", "inputs": []},
        {"op": "null", "name": "fc_bias", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "param": {"num_hidden": "3"},
         "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1}],
        "arg_nodes": [0, 1, 2], "heads": [[3, 0]]}
    sym = mx.sym.load_json(json.dumps(doc))
    assert sym.attr_dict()["data"] == {"__ctx_group__": "g1", "ctx_group": "g1"}
    assert sym.infer_shape(data=(2, 4))[1] == [(2, 3)]


@pytest.mark.parametrize("doc, err, match", [
    ("not json", FormatError, "not an MXNet symbol JSON"),
    ('{"nodes": []}', FormatError, "not an MXNet symbol JSON"),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": []}', FormatError,
     "no heads"),
    ('{"nodes": [{"op": "NoSuchOp", "name": "n", "inputs": []}], "heads": [[0, 0, 0]]}',
     FormatError, "NoSuchOp"),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "negative", "name": "n", '
     '"inputs": [[5, 0, 0]]}], "heads": [[1, 0, 0]]}', FormatError, "not an earlier node"),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[0, 3, 0]]}',
     FormatError, "has 1 outputs"),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "FullyConnected", '
     '"name": "fc", "attrs": {"num_hidden": "abc"}, "inputs": [[0, 0, 0], [0, 0, 0], '
     '[0, 0, 0]]}], "heads": [[1, 0, 0]]}', ParamError, "node 'fc'"),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "elemwise_add", '
     '"name": "a", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]}', FormatError, "1 inputs"),
    # MXNet: "Expect '[' but get '5'" (these were bare TypeErrors)
    ('{"nodes": 5, "heads": [[0, 0, 0]], "arg_nodes": [0]}', FormatError,
     "'nodes' must be a list, got int"),
    ('{"nodes": [], "heads": "x"}', FormatError, "'heads' must be a list, got str"),
])
def test_malformed_json_raises_typed_errors(doc, err, match):
    with pytest.raises(err, match=match):
        mx.sym.load_json(doc)


def _mxref(code):
    res = subprocess.run([MXREF, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=240, cwd="/tmp")
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


needs_mxnet = pytest.mark.skipif(not os.path.exists(MXREF), reason="~/mxref (MXNet 1.9.1) absent")


@needs_mxnet
def test_our_json_loads_in_mxnet_and_computes_the_same(tmp_path):
    x = mx.sym.var("x", stype="csr")
    w = mx.sym.var("w", stype="row_sparse", shape=(6, 2), lr_mult=2.0, init=mx.init.One())
    with mx.AttrScope(ctx_group="dev1"):
        fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=4, name="fc1")
        act = mx.sym.Activation(fc, act_type="tanh", name="act")
    net = mx.sym.Group([mx.sym.sparse.dot(x, w, name="sdot"),
                        mx.sym.SoftmaxOutput(act * 2 + 1, name="sm")])
    f = tmp_path / "ours-symbol.json"
    net.save(str(f))
    rng = np.random.RandomState(0)
    vals = {"d": rng.rand(3, 5), "fc1_weight": rng.rand(4, 5), "fc1_bias": rng.rand(4)}
    np.savez(tmp_path / "vals.npz", **vals)
    theirs = _mxref(f"""
        import json, numpy as np, mxnet as mx
        s = mx.sym.load({str(f)!r})
        v = np.load({str(tmp_path / 'vals.npz')!r})
        sm = s[1]
        args = {{k: mx.nd.array(v[k]) for k in v.files}}
        args['sm_label'] = mx.nd.zeros(3)
        out = sm.bind(mx.cpu(), args).forward()[0].asnumpy().tolist()
        print(json.dumps({{"args": s.list_arguments(), "outs": s.list_outputs(),
                          "attr": s.attr_dict(), "shape": s.infer_shape(x=(3, 6), d=(3, 5))[1],
                          "out": out}}))
    """)
    assert theirs["args"] == net.list_arguments()
    assert theirs["outs"] == net.list_outputs()
    assert theirs["attr"] == net.attr_dict()
    assert [tuple(s) for s in theirs["shape"]] == net.infer_shape(x=(3, 6), d=(3, 5))[1]
    args = {k: mx.nd.array(v) for k, v in vals.items()}
    args["sm_label"] = mx.nd.zeros(3)
    ours = net[1].bind(mx.cpu(), args).forward()[0].asnumpy()
    np.testing.assert_allclose(ours, np.array(theirs["out"]), rtol=1e-5)


@needs_mxnet
def test_mxnet_json_loads_here(tmp_path):
    f = tmp_path / "theirs-symbol.json"
    theirs = _mxref(f"""
        import json, mxnet as mx
        data = mx.sym.var('data', stype='csr')
        w = mx.sym.var('w', stype='row_sparse', shape=(10, 3), wd_mult=0.5)
        with mx.AttrScope(ctx_group='g', lr_mult='0.1'):
            h = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3, name='fc')
            h = mx.sym.BatchNorm(h, name='bn', fix_gamma=False)
        parts = mx.sym.SliceChannel(h, num_outputs=3, axis=1, name='sc')
        out = mx.sym.Group([mx.sym.sparse.dot(data, w) + 1, parts[2] * parts[0], h - 2,
                            mx.sym.sum(h, axis=1, keepdims=True),
                            mx.sym.Reshape(h, shape=(-1,)), mx.sym.relu(h) / 3])
        out.save({str(f)!r})
        print(json.dumps({{"args": out.list_arguments(), "aux": out.list_auxiliary_states(),
                          "outs": out.list_outputs(), "attr": out.attr_dict(),
                          "shape": out.infer_shape(data=(2, 10), x=(2, 4))[1]}}))
    """)
    sym = mx.sym.load(str(f))
    assert sym.list_arguments() == theirs["args"]
    assert sym.list_auxiliary_states() == theirs["aux"]
    assert sym.list_outputs() == theirs["outs"]
    assert sym.attr_dict() == theirs["attr"]
    assert sym.infer_shape(data=(2, 10), x=(2, 4))[1] == [tuple(s) for s in theirs["shape"]]
    assert sym.infer_storage_type()[0][:2] == ["csr", "row_sparse"]


def test_deeply_nested_json_is_a_format_error():
    from sparsym.base import FormatError
    for doc in ("[" * 200_000 + "]" * 200_000,
                '{"nodes": ' + "[" * 200_000 + "]" * 200_000 + ', "heads": []}'):
        with pytest.raises(FormatError, match="nested too deeply"):
            mx.sym.load_json(doc)
