"""Test-only operators for the memory pool: ``out``-capable kernels (with in-place pairs) and
a pure kernel that returns a view of its input. They are registered only while the tests that
use them run (registry-driven sweeps elsewhere must not see them)."""
import numpy as np
import pytest

from sparsym.ops.core import registry, rules
from sparsym.ops.core.grad import bw
from sparsym.ops.core.helpers import DNS
from sparsym.ops.core.registry import Dispatch, OpDef, has_op, register, ufunc_kernel


def _tanh_kernel(attrs, xs, out=None):
    if out is None:
        return (np.tanh(xs[0]),)
    return (np.tanh(xs[0], out=out[0]),)


def _tanh_bwd(attrs, xs, out=None):
    og, y = xs
    if out is None:
        return (og * (1 - y * y),)
    o = out[0]
    np.multiply(y, y, out=o)
    np.subtract(1, o, out=o)
    np.multiply(og, o, out=o)
    return (o,)


def register_pool_ops():
    """_ptest_add(lhs, rhs), _ptest_tanh(data), _ptest_view(data): add and tanh write into
    pooled buffers (in place when allowed); view returns ``data.reshape(...)`` (an alias)."""
    if has_op("_ptest_add"):
        return
    register(OpDef("_ptest_add", inputs=("lhs", "rhs"),
                   dispatch=(Dispatch((DNS, DNS), (DNS,), ufunc_kernel(np.add), writes_out=True),),
                   inplace=((0, 0), (1, 0)),
                   gradient=lambda node, og: [og[0], og[0]]))
    register(OpDef("_ptest_tanh_bwd", inputs=("ograd", "out"),
                   dispatch=(Dispatch((DNS, DNS), (DNS,), _tanh_bwd, writes_out=True),),
                   inplace=((0, 0),)))
    register(OpDef("_ptest_tanh",
                   dispatch=(Dispatch((DNS,), (DNS,), _tanh_kernel, writes_out=True),),
                   inplace=((0, 0),),
                   gradient=lambda node, og: [bw("_ptest_tanh_bwd", [og[0], (node, 0)], node,
                                                 "backward")]))
    register(OpDef("_ptest_view", dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (
        xs[0].reshape(xs[0].shape),)),),
        infer_shape=rules.same_shape, gradient=lambda node, og: [og[0]]))


POOL_OPS = ("_ptest_add", "_ptest_tanh_bwd", "_ptest_tanh", "_ptest_view")


@pytest.fixture(scope="module")
def pool_ops():
    """Register the pool test operators for one test module, then remove them."""
    register_pool_ops()
    yield
    for name in POOL_OPS:
        registry._OPS.pop(name, None)
