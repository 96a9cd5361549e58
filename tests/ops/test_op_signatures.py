"""Each registered operator declares its parameters (and inputs) in MXNet 1.9.1's order, so
positional calls bind as in MXNet. The order is recorded from the oracle by
tests/fixtures/make_mxnet_api.py into tests/fixtures/mxnet/op_signatures.json."""
import json
from pathlib import Path

import pytest

import sparsym  # noqa: F401  (registers the operators)
from sparsym.ops.core.registry import all_ops
from sparsym.ops.core.signature import declared_inputs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "op_signatures.json"
MX = json.loads(FIXTURE.read_text())
# MXNet's backward ops take no front-end parameters: not user API
OPS = sorted(k for k in all_ops() if k in MX and "_backward" not in k)
# MXNet 1.9.1 documents _linspace with _arange's parameter list (its registration copies the
# arange docs) but parses these, in this order (probed: ``step`` is rejected)
PARSED = {"_linspace": ["start", "stop", "num", "endpoint", "ctx", "dtype"]}


def test_fixture_covers_most_registered_ops():
    assert len(OPS) > 250


@pytest.mark.parametrize("name", OPS)
def test_parameter_order_matches_mxnet(name):
    op = all_ops()[name]
    mx_params = PARSED.get(name) or [n for n, kind in MX[name] if kind == "param"]
    ours = list(op.params.fields)
    if any(kind == "var_input" for _, kind in MX[name]):
        return  # MXNet's ``f(*data, **kwargs)``: parameters are keyword-only
    # MXNet's parameters first, in its order; parameters of our own only after them
    assert ours[:len(mx_params)] == mx_params, (ours, mx_params)
    mx_inputs = [n for n, kind in MX[name] if kind == "input"]
    if not callable(op.inputs):
        # an auxiliary state MXNet's front end does not list (IdentityAttachKLSparseReg's
        # moving_avg) is created by the front end like any missing input
        assert [n for n in op.inputs if n in mx_inputs or n not in op.aux] == mx_inputs
    else:
        got = list(declared_inputs(op))
        assert got == mx_inputs[:len(got)]


def test_parameterless_ops_ignore_extra_attributes():
    # MXNet: an op without a parameter struct keeps and ignores any keyword (test_loss calls
    # broadcast_maximum(..., axis=1)); an op with parameters still rejects unknown names
    from sparsym import nd, sym
    from sparsym.base import ParamError
    out = nd.broadcast_maximum(nd.array([0.0]), nd.array([[1.0], [-1.0]]), axis=1)
    assert out.asnumpy().tolist() == [[1.0], [0.0]]
    s = sym.broadcast_add(sym.var("a"), sym.var("b"), axis=1)
    assert s.list_arguments() == ["a", "b"]
    with pytest.raises(ParamError, match="unknown parameter 'foo'"):
        nd.sum(nd.ones((2,)), foo=1)
