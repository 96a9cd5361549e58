"""mx.sym.contrib.foreach / while_loop / cond: loop nodes carrying subgraphs, their
gradients through the body, JSON (sparsym's and MXNet 1.9.1's), and hybridized Gluon.

tests/fixtures/mxnet/control_flow.json holds three graphs MXNet 1.9.1 wrote with
``tojson()`` and its forward outputs on the inputs below:
foreach(lambda d, s: (d * c + s[0], [s[0] + d * 2]), a, [b]),
while_loop(lambda i, s: i < 4, lambda i, s: (s * c, [i + 1, s + c]), [a, b], 6) and
cond(a.sum() > 0, lambda: b * c, lambda: b - c).
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx
from sparsym.attribute import AttrScope

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "control_flow.json"
RNG = np.random.RandomState(7)


def _bind(sym, values, grads=True):
    args = {k: mx.nd.array(v, dtype=np.float64) for k, v in values.items()}
    g = {k: mx.nd.zeros(v.shape, dtype=np.float64) for k, v in values.items()} if grads else None
    return sym.bind(mx.cpu(), args, args_grad=g)


def test_foreach_forward_and_gradient_match_the_imperative_loop():
    def step(d, s):
        new = mx.sym.tanh(d * s[0] + w) if isinstance(d, mx.sym.Symbol) else \
            mx.nd.tanh(d * s[0] + wv)
        return new * 2, [new]
    w = mx.sym.var("w")
    out, st = mx.sym.contrib.foreach(step, mx.sym.var("x"), [mx.sym.var("h")])
    sym = mx.sym.Group([out, st[0]])
    vals = {"x": RNG.rand(4, 3), "h": RNG.rand(3), "w": RNG.rand(3)}
    exe = _bind(sym, vals)
    got = [o.asnumpy() for o in exe.forward(is_train=True)]
    heads = [RNG.rand(4, 3), RNG.rand(3)]
    exe.backward([mx.nd.array(h, dtype=np.float64) for h in heads])

    xv, hv, wv = (mx.nd.array(vals[k], dtype=np.float64) for k in ("x", "h", "w"))
    for a in (xv, hv, wv):
        a.attach_grad()
    with mx.autograd.record():
        o, s = mx.nd.contrib.foreach(step, xv, [hv])
        loss = (o * mx.nd.array(heads[0], dtype=np.float64)).sum() + \
            (s[0] * mx.nd.array(heads[1], dtype=np.float64)).sum()
    loss.backward()
    np.testing.assert_allclose(got[0], o.asnumpy(), rtol=1e-10)
    np.testing.assert_allclose(got[1], s[0].asnumpy(), rtol=1e-10)
    for name, arr in (("x", xv), ("h", hv), ("w", wv)):
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), arr.grad.asnumpy(),
                                   rtol=1e-8, err_msg=name)


def test_foreach_numeric_gradient():
    out, st = mx.sym.contrib.foreach(lambda d, s: (d * s[0], [s[0] * d + 1]),
                                     mx.sym.var("x"), [mx.sym.var("h")])
    sym = mx.sym.sum(out * out) + mx.sym.sum(st[0])
    mx.test_utils.check_numeric_gradient(sym, {"x": RNG.rand(3, 2), "h": RNG.rand(2)},
                                         numeric_eps=1e-6, rtol=1e-5, atol=1e-7,
                                         dtype=np.float64)


def test_foreach_partial_shape_and_uses_of_its_states():
    out, st = mx.sym.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]),
                                     mx.sym.var("data", shape=(0, 3, 5)), [mx.sym.var("s")])
    assert out.infer_shape_partial()[1] == [(0, 3, 5)]
    assert st[0].infer_shape(data=(2, 3, 5))[0] == [(2, 3, 5), (3, 5)]
    with pytest.raises(mx.symbol.control_flow.LoopBodyError, match="state arrays"):
        mx.sym.contrib.foreach(lambda d, s: (d, [d]), mx.sym.var("x"), [mx.sym.var("h")])


def test_while_loop_pads_with_zeros_and_differentiates_free_variables():
    c = mx.sym.var("c")
    outs, (i, s) = mx.sym.contrib.while_loop(
        lambda i, s: i < 3, lambda i, s: (s * c, [i + 1, s * c]),
        [mx.sym.var("i"), mx.sym.var("s")], max_iterations=5)
    sym = mx.sym.Group([outs, s])
    vals = {"i": np.array([0.0]), "s": np.array([1.0, 2.0]), "c": np.array([2.0, 0.5])}
    exe = _bind(sym, vals)
    got = [o.asnumpy() for o in exe.forward(is_train=True)]
    want = [np.array([1.0, 2.0]) * vals["c"] ** k for k in (1, 2, 3)]
    np.testing.assert_allclose(got[0], np.stack(want + [np.zeros(2)] * 2))
    np.testing.assert_allclose(got[1], want[-1])
    exe.backward([mx.nd.ones((5, 2), dtype=np.float64), mx.nd.ones(2, dtype=np.float64)])
    cv = vals["c"]  # d/dc of s*c + s*c^2 + 2 * s*c^3
    np.testing.assert_allclose(exe.grad_dict["c"].asnumpy(),
                               vals["s"] * (1 + 2 * cv + 6 * cv ** 2))
    np.testing.assert_allclose(exe.grad_dict["s"].asnumpy(), cv + cv ** 2 + 2 * cv ** 3)
    with pytest.raises(ValueError, match="max_iterations"):
        mx.sym.contrib.while_loop(lambda x: x, lambda x: (x, [x]), [mx.sym.var("x")])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_runs_one_branch_and_routes_its_gradient(sign):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.contrib.cond(mx.sym.sum(a) > 0, lambda: a * b, lambda: a - b)
    vals = {"a": sign * np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    exe = _bind(out, vals)
    got = exe.forward(is_train=True)[0].asnumpy()
    exe.backward(mx.nd.ones(2, dtype=np.float64))
    if sign > 0:
        np.testing.assert_allclose(got, vals["a"] * vals["b"])
        np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), vals["b"])
    else:
        np.testing.assert_allclose(got, vals["a"] - vals["b"])
        np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), [-1.0, -1.0])


def test_subgraph_names_are_counted_per_scope():
    AttrScope._subgraph_names = defaultdict(int)
    for _ in range(2):
        mx.sym.contrib.cond(mx.sym.var("p"), lambda: mx.sym.var("x") * 2,
                            lambda: mx.sym.var("x") * 3, name="br")
    assert dict(AttrScope._subgraph_names) == {"br_pred": 2, "br_then": 2, "br_else": 2}


def test_nested_foreach():
    def outer(d, s):
        inner, st = mx.sym.contrib.foreach(lambda e, t: (e * t[0], [t[0] + e]), d, s)
        return inner, st
    out, st = mx.sym.contrib.foreach(outer, mx.sym.var("x"), [mx.sym.var("h")])
    x, h = RNG.rand(2, 3, 4), RNG.rand(4)
    got = _bind(mx.sym.Group([out, st[0]]), {"x": x, "h": h}, grads=False).forward()
    want, state = np.zeros((2, 3, 4)), h.copy()
    for i in range(2):
        for j in range(3):
            want[i, j] = x[i, j] * state
            state = state + x[i, j]
    np.testing.assert_allclose(got[0].asnumpy(), want)
    np.testing.assert_allclose(got[1].asnumpy(), state)


def test_json_round_trip_keeps_the_subgraphs():
    out, st = mx.sym.contrib.foreach(lambda d, s: ([d * s[0], d], [s[0] + d]),
                                     mx.sym.var("x"), [mx.sym.var("h")])
    sym = mx.sym.Group(out + st)
    js = sym.tojson()
    back = mx.sym.load_json(js)
    assert back.tojson() == js
    vals = {"x": RNG.rand(3, 2), "h": RNG.rand(2)}
    a = [o.asnumpy() for o in _bind(sym, vals, False).forward()]
    b = [o.asnumpy() for o in _bind(back, vals, False).forward()]
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v)
    doc = json.loads(js)
    del doc["nodes"][-1]["subgraphs"]
    with pytest.raises(mx.MXNetError, match="subgraphs"):
        mx.sym.load_json(json.dumps(doc))


def test_loads_mxnet_control_flow_json():
    fx = json.loads(FIXTURE.read_text())
    vals = {"a": np.array([[1.0, 2], [3, 4], [5, 6]]), "b": np.array([0.5, -1]),
            "c": np.array([2.0, 3])}
    for k, (doc, want) in enumerate(zip(fx["symbols"], fx["outputs"])):
        sym = mx.sym.load_json(doc)
        v = dict(vals, a=np.array([0.0])) if k == 1 else vals
        got = _bind(sym, {n: v[n] for n in sym.list_arguments()}, False).forward()
        for g, w in zip(got, want):
            # (MXNet leaves the padding rows of while_loop uninitialised: tiny values)
            np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6, atol=1e-30)


class _Recurrent(mx.gluon.HybridBlock):
    """h_t = tanh(W x_t + h_{t-1}); returns the stacked h_t and the last state."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = mx.gluon.nn.Dense(3, flatten=False, in_units=2)

    def hybrid_forward(self, F, x, h):
        return F.contrib.foreach(lambda d, s: (F.tanh(self.dense(d) + s[0]),
                                               [F.tanh(self.dense(d) + s[0])]), x, [h])


def test_hybridized_block_with_foreach_matches_imperative():
    x, h = mx.nd.array(RNG.rand(4, 5, 2)), mx.nd.array(RNG.rand(5, 3))
    results = []
    for hybridize in (False, True):
        net = _Recurrent()
        net.initialize(mx.init.Constant(0.3))
        if hybridize:
            net.hybridize()
        with mx.autograd.record():
            out, st = net(x, h)
            loss = (out * out).sum() + st[0].sum()
        loss.backward()
        results.append((out.asnumpy(), st[0].asnumpy(),
                        net.dense.weight.grad().asnumpy(), type(st)))
    for u, v in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    assert results[0][3] is results[1][3] is list
