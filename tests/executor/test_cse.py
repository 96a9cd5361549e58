"""MXNET_ELIMINATE_COMMON_EXPR=1: equal nodes are computed once (MXNet's savings counts)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.ops.core.registry import all_ops
from sparsym.test_utils import environment


def _internals(sym, cse, **shapes):
    with environment({"MXNET_ELIMINATE_COMMON_EXPR": "1" if cse else "0"}):
        exe = sym.simple_bind(mx.cpu(), **shapes)
    return exe, len(exe.get_optimized_symbol().get_internals())


@pytest.mark.parametrize("make, saved", [
    (lambda a, b: (a + 1) + (a + 2), 0),
    (lambda a, b: (a + b) + (a + b), 1),
    (lambda a, b: mx.sym.Group([a * (a + 1), a * (a + 1)]), 1),   # a copy keeps outputs apart
    (lambda a, b: mx.sym.Group([a * (a + 1) + b, a * (a + 1) + b]), 2),
    (lambda a, b: mx.sym.Dropout(a) + mx.sym.Dropout(a), 0),       # random: never merged
    (lambda a, b: mx.sym.random.uniform(shape=(2, 3)) + mx.sym.random.uniform(shape=(2, 3))
     + a, 0),
])
def test_savings_and_results_match_the_plain_graph(make, saved):
    sym = make(mx.sym.var("a"), mx.sym.var("b"))
    shapes = {n: (2, 3) for n in sym.list_arguments()}
    plain, n_plain = _internals(sym, False, **shapes)
    merged, n_merged = _internals(sym, True, **shapes)
    assert n_plain - n_merged == saved
    if "dropout" in sym.tojson().lower() or "random" in sym.tojson():
        return
    vals = {n: mx.nd.array(np.random.RandomState(0).uniform(size=(2, 3))) for n in shapes}
    outs_p = plain.forward(is_train=True, **vals)
    outs_m = merged.forward(is_train=True, **vals)
    heads = [mx.nd.ones((2, 3)) for _ in outs_p]
    plain.backward(heads)
    merged.backward(heads)
    for p, m in zip(outs_p + plain.grad_arrays, outs_m + merged.grad_arrays):
        np.testing.assert_allclose(m.asnumpy(), p.asnumpy(), rtol=1e-6)
    assert len({id(o._raw) for o in outs_m}) == len(outs_m)   # outputs never alias


def test_sampling_ops_are_marked_random():
    names = [k for k, op in all_ops().items()
             if any(w in k for w in ("random_", "sample_", "shuffle", "zipfian", "randint"))
             and "pdf" not in k]
    assert names and all(all_ops()[k].random for k in names)
