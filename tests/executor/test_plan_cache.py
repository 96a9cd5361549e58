"""The plan cache: a hit runs no pass; the key is structure + shapes + dtypes + stypes +
grad_req; generated operator names do not matter but messages use the right ones."""
import numpy as np
import pytest

import sparsym as mx
import sparsym.executor.plan as plan_mod
from sparsym.executor import plan_cache_stats


@pytest.fixture(autouse=True)
def _fresh_cache():
    mx.executor.clear_cache()
    yield
    mx.executor.clear_cache()


def _net():
    x = mx.sym.var("x")
    h = mx.sym.FullyConnected(x, num_hidden=4)
    h = mx.sym.Activation(h, act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3), name="sm")


def _forbid_passes(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("a pass ran on a cache hit")
    for name in ("gradient", "infer_shape", "infer_type", "infer_storage", "plan_memory",
                 "schedule", "build_plan"):
        monkeypatch.setattr(plan_mod, name, boom)


def test_hit_skips_every_pass(monkeypatch):
    with mx.name.NameManager():
        net = _net()
    first = net.simple_bind(mx.cpu(), x=(4, 5))

    def arrays():
        return {n: mx.nd.zeros(a.shape) for n, a in first.arg_dict.items()}
    bound1 = net.bind(mx.cpu(), arrays(), args_grad=arrays())
    plan_cache_stats["misses"] = 1
    assert plan_cache_stats["misses"] == 1 and plan_cache_stats["hits"] == 0
    _forbid_passes(monkeypatch)
    again = net.simple_bind(mx.cpu(), x=(4, 5))
    with mx.name.NameManager():
        rebuilt = _net().simple_bind(mx.cpu(), x=(4, 5))   # new nodes, same names
    assert again.plan is first.plan and rebuilt.plan is first.plan
    assert plan_cache_stats["hits"] == 2
    rebuilt.arg_dict["x"][:] = np.ones((4, 5))
    rebuilt.forward(is_train=True)
    rebuilt.backward()
    bound2 = net.bind(mx.cpu(), arrays(), args_grad=arrays())
    assert bound2.plan is bound1.plan


@pytest.mark.parametrize("change", [
    dict(x=(2, 5)),
    dict(x=(4, 5), grad_req="null"),
    dict(x=(4, 5), grad_req={"x": "write"}),
    dict(x=(4, 5), type_dict={"x": "float64"}),
    dict(x=(4, 5), stype_dict={"x": "csr"}),
])
def test_key_covers_shapes_grad_req_dtypes_and_stypes(change):
    net = _net()
    base = net.simple_bind(mx.cpu(), x=(4, 5))
    other = net.simple_bind(mx.cpu(), **change)
    assert other.plan is not base.plan and plan_cache_stats["misses"] == 2


def test_structure_changes_miss():
    x = mx.sym.var("x")
    a = (x * 2).simple_bind(mx.cpu(), x=(3,))
    assert (x * 3).simple_bind(mx.cpu(), x=(3,)).plan is not a.plan     # params differ
    assert (mx.sym.var("y") * 2).simple_bind(mx.cpu(), y=(3,)).plan is not a.plan  # names
    assert (x + 2).simple_bind(mx.cpu(), x=(3,)).plan is not a.plan      # op differs
    v = mx.sym.var("v", shape=(3,))
    b = (v * 2).simple_bind(mx.cpu())
    v2 = mx.sym.var("v", shape=(4,))
    assert (v2 * 2).simple_bind(mx.cpu()).plan is not b.plan            # declared shapes


def test_set_attr_invalidates_cached_graphs():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    net = fc * 2
    e1 = net.simple_bind(mx.cpu(), x=(2, 3))
    fc._set_attr(num_hidden="5")
    e2 = net.simple_bind(mx.cpu(), x=(2, 3))
    assert e2.plan is not e1.plan and e2.outputs[0].shape == (2, 5)


def test_messages_use_the_binding_symbols_names():
    with mx.name.NameManager():
        x = mx.sym.var("x")
        first = mx.sym.Activation(x * 2, act_type="relu")
    with mx.name.NameManager():
        for _ in range(3):
            mx.sym.Activation(x, act_type="relu")   # shift the generated names
        second = mx.sym.Activation(x * 2, act_type="relu")
    assert first.name != second.name
    e1 = first.simple_bind(mx.cpu(), x=(2,))
    e2 = second.simple_bind(mx.cpu(), x=(2,))
    assert e2.plan is e1.plan
    seen = []
    e2.set_monitor_callback(lambda name, arr: seen.append(name))
    e2.forward(is_train=True)
    e2.backward(mx.nd.ones(2))
    assert f"{second.name}_output" in seen
    assert all(not n.startswith(first.name + "_") for n in seen)
    assert f"Name={second.name}\n" in e2.debug_str()
    assert list(e2.output_dict) == [f"{second.name}_output"] == second.list_outputs()
    assert list(e1.output_dict) == [f"{first.name}_output"]
    assert second.name in [r.node for r in e2.storage_report().rows]


def test_cache_is_bounded():
    x = mx.sym.var("x")
    s = x * 2
    for n in range(plan_mod._CACHE_SIZE + 5):
        s.simple_bind(mx.cpu(), grad_req="null", x=(n + 1,))
    assert len(plan_mod._CACHE) == plan_mod._CACHE_SIZE
