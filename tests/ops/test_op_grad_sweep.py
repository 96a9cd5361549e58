"""Numeric gradient sweep (float64 central differences) for the ops listed in
tests/ops/sweep_cases_nn.py's GRADIENT table; each op's symbol is built by its generated
``mx.sym`` front end from the registry."""
from __future__ import annotations

import numpy as np
import pytest
import sweep_cases  # noqa: F401  (first: it merges sweep_cases_nn's references)
from sweep_cases_nn import GRADIENT, SYMMETRIC

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient

CASES = [(name, i) for name in sorted(GRADIENT) for i in range(len(GRADIENT[name]))]


@pytest.mark.parametrize("name,i", CASES, ids=[f"{n}[{i}]" for n, i in CASES])
def test_numeric_gradient(name, i):
    params, values, nodes = GRADIENT[name][i]
    op = mx.ops.get_op(name)
    names = op.input_names(op.params.parse(name, dict(params)))
    args = [mx.sym.var(n) for n in names]
    if name in SYMMETRIC:  # reads one triangle; MXNet's gradient is the symmetric one
        args = [(a + mx.sym.swapaxes(a, dim1=-1, dim2=-2)) * 0.5 for a in args]
    sym = getattr(mx.sym, name)(*args, **params)
    n_out = len(sym.list_outputs())
    if n_out > 1:  # one scalar from all outputs, nonlinear so that each output's gradient counts
        parts = [mx.sym.sum(sym[k] * sym[k] * (0.5 + k) + sym[k]) for k in range(n_out)]
        sym = parts[0]
        for part in parts[1:]:
            sym = sym + part
    loc = {n: np.asarray(values[n], np.float64) for n in names if n in values}
    aux = {n: mx.nd.array(values[n], dtype=np.float64) for n in op.aux if n in values} or None
    check_numeric_gradient(sym, {n: v for n, v in loc.items() if n not in op.aux},
                           aux_states=aux, grad_nodes=nodes, numeric_eps=1e-5, rtol=1e-5,
                           atol=1e-7, dtype=np.float64)


def test_gradient_table_names_registered_ops():
    for name in GRADIENT:
        assert mx.ops.get_op(name).gradient is not None, name
