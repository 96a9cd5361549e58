"""Registry-driven sweep: every dispatch row of every registered op.

For each row, inputs of the row's storage types are built (canonical and non-canonical:
empty rows, nnz == 0, every row present), the row's kernel runs, and

- the output storage types equal the row's declared ones;
- the densified outputs equal the op's dense kernel on densified inputs (mutated states
  of the optimizer ops too).

A row the sweep cannot exercise (no input builder, or no candidate matching its guard)
fails the test. Builders live in tests/ops/sweep_cases.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from sweep_cases import OVERRIDES, cases_for, skip_reason

import sparsym as mx
from sparsym import storage as st
from sparsym.ops import rules
from sparsym.ops.registry import all_ops

D, R, C = "default", "row_sparse", "csr"
VARIANTS = ("random", "empty", "full")
# Rows the sweep shows to be wrong, owned elsewhere; strict xfail: a fix makes them XPASS,
# which fails until the entry is removed.
KNOWN_BUGS: dict = {}


def _unique_ops():
    seen, out = set(), []
    for _, op in sorted(all_ops().items()):
        if id(op) not in seen:
            seen.add(id(op))
            out.append(op)
    return out


ROWS = [(op.name, i) for op in _unique_ops() for i in range(len(op.dispatch))]


def _expand(ins, nin):
    """Concrete stype tuples for a row's pattern ('*' any, trailing '...' repeats)."""
    if ins and ins[-1] == "...":
        fixed = list(ins[:-1])
        last = fixed[-1] if fixed else "*"
        ins = tuple(fixed + [last] * (nin - len(fixed)))
    choices = [(D, R, C) if s == "*" else (s,) for s in ins]
    if sum(len(c) > 1 for c in choices) <= 2:
        return list(itertools.product(*choices))
    # wider rows: every free input default, one sparse input at a time, all the same
    base = tuple(c[0] for c in choices)
    out = [base]
    for i, c in enumerate(choices):
        out += [base[:i] + (x,) + base[i + 1:] for x in c[1:]]
    for x in (R, C):
        out.append(tuple(x if len(c) > 1 else c[0] for c in choices))
    return list(dict.fromkeys(out))


def _dense_value(shape, variant, rng, positive, dtype=np.float32):
    x = rng.uniform(0.25, 1.0, size=shape) if positive else rng.uniform(-1.0, 1.0, size=shape)
    x = np.where(np.abs(x) < 0.2, 0.5, x)
    if variant == "random":
        keep = rng.random(shape) < 0.5
        x = x * keep
        if len(shape) >= 1 and shape[0] > 1:
            x[0] = 0  # an empty row
    elif variant == "empty":
        x = np.zeros(shape)
    return x.astype(dtype)


def _raw(x, stype):
    if stype == D:
        return x.copy()
    if stype == C:
        return st.dense_to_csr(x) if x.ndim == 2 else None
    return st.dense_to_rsp(x)


def _build(op, case, stypes, variant, seed):
    rng = np.random.default_rng(seed)
    raws = []
    for i, (shape, stype) in enumerate(zip(case.shapes, stypes)):
        if i in case.values:
            x = np.asarray(case.values[i])
        elif i in case.zeros:
            x = np.zeros(shape, np.float32)
        elif i in case.full:
            x = _dense_value(shape, "full", rng, True)
        else:
            x = _dense_value(shape, "full" if stype == D and variant == "empty" else variant,
                             rng, case.positive)
        r = _raw(x, stype)
        if r is None:
            return None
        if stype == R and variant == "full" and len(r.indices) != shape[0]:
            r = st.RSP(x.copy(), np.arange(shape[0], dtype=np.int64), shape)
        raws.append(r)
    return raws


def _infer(op, attrs, shapes):
    """(completed input shapes, output shapes), or None when the shapes do not fit the op."""
    try:
        ins, outs = op.infer_shape(attrs, [None if s is None else tuple(s) for s in shapes],
                                   [None] * op.n_outputs(attrs))
    except (rules.Conflict, mx.MXNetError, ValueError, TypeError, IndexError, KeyError):
        return None
    if not all(rules.known(o) for o in list(ins) + list(outs)):
        return None
    return tuple(tuple(i) for i in ins), tuple(tuple(o) for o in outs)


def _dense_row(op):
    for row in op.dispatch:
        if all(s in (D, "*", "...") for s in row.ins):
            return row
    return None


def _copy_raws(raws):
    return [r.copy() for r in raws]


def _close(a, b, what):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs dense {b.shape}"
    np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name,idx", ROWS, ids=[f"{n}[{i}]" for n, i in ROWS])
def test_row_matches_dense_kernel(name, idx):
    op = mx.ops.get_op(name)
    row = op.dispatch[idx]
    if name not in OVERRIDES and skip_reason(op):
        pytest.skip(skip_reason(op))
    if name in KNOWN_BUGS:
        failure = None
        try:
            _sweep_row(name, idx, op, row)
        except (AssertionError, mx.MXNetError, TypeError, ValueError) as err:
            failure = f"{type(err).__name__}: {str(err)[:200]}"
        if failure is None:
            pytest.fail(f"{name} row {idx} now passes: remove it from KNOWN_BUGS")
        pytest.xfail(f"{KNOWN_BUGS[name]} ({failure})")
    _sweep_row(name, idx, op, row)


def _sweep_row(name, idx, op, row):
    ref_row = _dense_row(op)
    assert ref_row is not None, f"{name}: no dense reference row"
    fixed = len([s for s in row.ins if s != "..."])
    if "..." not in row.ins:
        nins = [fixed]
    elif name in OVERRIDES:
        nins = sorted({len(c.shapes) for c in OVERRIDES[name](op, None)})
    else:
        nins = [2, 3, 5]
    ran = 0
    problems = []
    for nin in nins:
        cases = cases_for(op, nin)
        assert cases is not None, (f"{name} has required parameters and no sweep builder in "
                                   "tests/ops/sweep_cases.py")
        for case in cases:
            if len(case.shapes) != nin:
                continue
            attrs = op.params.parse(name, dict(case.params))
            done = _infer(op, attrs, case.shapes)
            if done is None:
                continue
            case.shapes, out_shapes = done
            if op.needs_is_train:
                attrs = type(attrs)(attrs, __is_train__=False)
            if op.needs_out_shapes:
                attrs = type(attrs)(attrs, __out_shapes__=out_shapes)
            for stypes in _expand(row.ins, nin):
                if C in stypes and any(len(s) != 2 for s, t in zip(case.shapes, stypes)
                                       if t == C):
                    continue
                if not row.matches(attrs, stypes):
                    continue
                if any(r.matches(attrs, stypes) for r in op.dispatch[:idx]):
                    continue  # an earlier row wins these inputs
                for k, variant in enumerate(VARIANTS):
                    raws = _build(op, case, stypes, variant, seed=idx * 7 + k)
                    if raws is None:
                        continue
                    _check_one(op, row, ref_row, attrs, case, stypes, raws,
                               f"{name} row {idx} {stypes} {case.params} {variant}")
                    ran += 1
    assert ran, f"{name} row {idx} {row.ins}->{row.outs}: no sweep case matches its guard"
    assert not problems


def _check_one(op, row, ref_row, attrs, case, stypes, raws, what):
    dense_in = [st.todense(r).copy() for r in raws]
    mine_in = _copy_raws(raws)
    with np.errstate(all="ignore"):
        outs = row.kernel(attrs, mine_in)
    n_out = op.n_outputs(attrs)
    want = row.out_stypes(stypes, n_out)
    got = tuple(st.stype_of(o) for o in outs)[:n_out]
    assert got == tuple(want)[:len(got)], f"{what}: output stypes {got}, row says {want}"
    if case.ref is not None:
        refs = (case.ref(attrs, dense_in, raws),)
    else:
        with np.errstate(all="ignore"):
            refs = ref_row.kernel(attrs, dense_in)
    for i, (o, r) in enumerate(zip(outs, refs)):
        _close(st.todense(o), st.todense(r), f"{what}: output {i}")
    for i in op.mutates:  # states updated in place must agree too
        _close(st.todense(mine_in[i]), dense_in[i], f"{what}: mutated input {i}")


def test_every_op_has_rows():
    assert ROWS
    for op in _unique_ops():
        assert op.dispatch, f"{op.name} has no dispatch rows"
