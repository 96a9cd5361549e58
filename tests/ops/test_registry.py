"""Dispatch rows and the shared backward rules, through the registry's records."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import DTypeError, ShapeError
from sparsym.ops.core import rules
from sparsym.ops.core.helpers import DNS, RSP
from sparsym.ops.core.registry import Dispatch, OpDef, resolve_dispatch


def _k(attrs, xs):
    return tuple(xs)


def test_variadic_row_checks_its_guard():
    guarded = Dispatch(("...",), (RSP,), _k, when=lambda attrs, stypes: attrs.get("ok"))
    assert guarded.matches({"ok": True}, (DNS, DNS, DNS))
    assert not guarded.matches({"ok": False}, (DNS, DNS, DNS))
    assert Dispatch(("...",), (DNS,), _k).matches({}, ())
    op = OpDef("_test_guarded", dispatch=(guarded, Dispatch(("...",), (DNS,), _k)))
    row, outs, mode = resolve_dispatch(op, {"ok": False}, (DNS, DNS))
    assert row.outs == (DNS,) and outs == (DNS,) and mode == "dense"


def test_kernel_capabilities_are_row_fields():
    row = Dispatch((DNS,), (DNS,), _k)
    assert not row.writes_out and not row.weight_inplace
    sgd = mx.ops.get_op("sgd_update")
    assert all(r.weight_inplace for r in sgd.dispatch)
    assert not any(r.writes_out for r in mx.ops.get_op("dot").dispatch)


def test_weight_inplace_row_updates_the_weight_where_it_lies():
    w = mx.nd.array(np.ones((3, 2), np.float32))
    raw = w._raw
    mx.nd.sgd_update(w, mx.nd.ones((3, 2)), lr=0.5, wd=0.0, out=w)
    assert w._raw is raw
    np.testing.assert_allclose(w.asnumpy(), 0.5)


def test_grads_like_inputs_sources_and_then():
    rule = rules.grads_like_inputs(1, sources=(0, 2), then=rules.bias_grad_shape("num_filter"))
    attrs = type("A", (), {"no_bias": False, "num_filter": 7})()
    ins = [(2, 7), (2, 3), (2,), (7, 3)]
    _, outs = rule(attrs, ins, [None, None, None])
    assert outs == [(2, 3), (7, 3), (7,)]
    trule = rules.grads_like_inputs_type(lambda a: 2, sources=(0, 5))
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    _, touts = trule(None, [f32, f32, f64, None], [None, None])
    assert touts == [f64, f64]


def test_a_conflict_reads_the_same_from_nd_and_sym():
    with pytest.raises(ShapeError) as from_nd:
        mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with pytest.raises(ShapeError) as from_sym:
        mx.sym.elemwise_add(a, b, name="add").infer_shape(a=(2, 3), b=(3, 2))
    # MXNet 1.9.1: "Incompatible attr in node <name> at 1-th input: expected [2,3], got [3,2]"
    text = "at 1-th input 'rhs': expected [2,3], got [3,2]"
    assert text in str(from_nd.value) and text in str(from_sym.value)
    with pytest.raises(DTypeError, match=r"expected float32, got float64"):
        mx.sym.elemwise_add(a, b).infer_type(a="float32", b="float64")
