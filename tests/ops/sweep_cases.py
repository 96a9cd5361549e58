"""Input builders for the registry-driven sweep (tests/ops/test_op_sweep.py).

Most ops are derived generically: every input gets shape (4, 6) (2-D so csr applies), the
op's default parameters, and the row's stypes. An op whose rows need other shapes,
parameters or input values gets an entry in ``OVERRIDES``: a function returning candidate
``Case`` objects; the sweep runs every candidate whose ``when`` guard matches the row.
An op with a required parameter and no entry here fails the sweep (so it stays honest).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

DNS, RSP, CSR = "default", "row_sparse", "csr"  # the package's storage-type names
S2 = (4, 6)


@dataclass
class Case:
    """Parameters, per-input shapes (None: completed by the op's shape inference), and
    optional fixed dense values for some inputs."""

    params: dict
    shapes: tuple
    values: dict = field(default_factory=dict)     # input index -> dense numpy value
    zeros: tuple = ()                              # inputs that start as zeros (states)
    full: tuple = ()                               # inputs with no zero value (divisors)
    positive: bool = False                         # draw values > 0 (logs, powers)
    ref: object = None                             # reference(attrs, dense inputs) override


def same(n, **params):
    return [Case(params, (S2,) * n)]


def _dot_cases(op, nin):
    out = []
    for ta, tb, fs in itertools.product((False, True), (False, True), (None, DNS, RSP, CSR)):
        sa = (6, 4) if ta else (4, 6)
        sb = (5, 6) if tb else (6, 5)
        p = {"transpose_a": ta, "transpose_b": tb}
        if fs:
            p["forward_stype"] = fs
        out.append(Case(p, (sa, sb)))
    return out


def _bcast_shapes():
    return [((4, 6), (1, 6)), ((4, 6), (4, 6)), ((1, 6), (4, 6)), ((4, 6), (4, 1)),
            ((4, 6), (6,))]


def _bcast_cases(op, nin):
    full = (1,) if op.name == "broadcast_div" else ()
    return [Case({}, s, full=full) for s in _bcast_shapes()]


def _bwd_bcast_cases(op, nin):
    return [Case({"fn": fn}, ((4, 6),) + s, positive=True) for fn, s in zip(
        ("add", "sub", "mul", "div", "power", "maximum", "minimum", "hypot"),
        itertools.cycle(_bcast_shapes()[:2]))]


def _retain_cases(op, nin):
    return [Case({}, (S2, (3,)), values={1: np.array([0, 2, 3], np.float32)})]


def _add_n_cases(op, nin):
    return [Case({"num_args": n}, (S2,) * n) for n in ((2, 3, 5) if nin is None else (nin,))]


def _cast_cases(op, nin):
    return [Case({"stype": s}, (S2,)) for s in (DNS, RSP, CSR)]


def _reduce_cases(op, nin):
    out = []
    for axis, keep in itertools.product(((1,), (0,), None), (True, False)):
        out.append(Case({"axis": axis, "keepdims": keep}, (S2,) * nin))
    return out


def _getnnz_ref(attrs, xs, raws):
    mask = stored_mask(raws[0])
    ax = attrs["axis"]
    return np.asarray(mask.sum() if ax is None else mask.sum(axis=ax % 2)).reshape(-1)


def _getnnz_cases(op, nin):
    return [Case({"axis": a}, (S2,), ref=_getnnz_ref) for a in (None, 0, 1)]


def _quad_cases(op, nin):
    return [Case({"a": 1.0, "b": 2.0, "c": c}, (S2,) * nin) for c in (0.0, 1.0)]


def _scalar_cases(op, nin):
    # x / 0 on stored values only differs from the dense 0 / 0 at structural zeros
    scalars = (2.0, -1.0) if op.name == "_div_scalar" else (2.0, 0.0, -1.0)
    return [Case({"scalar": s}, (S2,) * nin, positive=True) for s in scalars]


def _bwd_scalar_cases(op, nin):
    return [Case({"fn": fn, "scalar": 2.0}, (S2, S2), positive=True)
            for fn in ("rdiv", "pow", "rpow", "max", "min")]


def stored_mask(raw):
    """True where a raw value stores an entry (every position of a dense array)."""
    from sparsym import storage as st
    if isinstance(raw, np.ndarray):
        return np.ones(raw.shape, dtype=bool)
    mask = np.zeros(raw.shape, dtype=bool)
    if isinstance(raw, st.CSR):
        rows = np.repeat(np.arange(raw.shape[0]), np.diff(raw.indptr))
        mask[rows, raw.indices[:raw.nnz]] = True
    else:
        mask[raw.indices] = True
    return mask


def _scatter_ref(fn):
    """Scatter ops act on the lhs's stored values only: the reference masks by them."""
    def ref(attrs, xs, raws):
        with np.errstate(divide="ignore", invalid="ignore"):
            full = np.asarray(fn(attrs, xs))
        return np.where(stored_mask(raws[0]), full, 0).astype(xs[0].dtype)
    return ref


def _scatter_scalar_cases(op, nin):
    sign = 1.0 if "plus" in op.name else -1.0
    ref = _scatter_ref(lambda a, xs: xs[0] + sign * a["scalar"])
    return [Case({"scalar": 2.0}, (S2,), ref=ref)]


def _scatter_div_cases(op, nin):
    ref = _scatter_ref(lambda a, xs: xs[0] / xs[1])
    return [Case({}, (S2, S2), positive=True, ref=ref)]


def _opt(nstates, **params):
    def cases(op, nin):
        p = dict({"lr": 0.1}, **params)
        return [Case(dict(p, lazy_update=lz) if "lazy_update" in op.params.fields else p,
                      (S2,) * nin, zeros=tuple(range(2, nin)))
                for lz in ((True, False) if "lazy_update" in op.params.fields else (True,))]
    return cases


def _ftrl_cases(op, nin):
    # a zero weight: FTRL's dense update recomputes w from z (0 for untouched rows)
    return [Case({"lr": 0.1}, (S2,) * 4, zeros=(0, 2, 3))]


def _ftml_cases(op, nin):
    return [Case({"lr": 0.1, "t": 1}, (S2,) * 5, zeros=(2, 3, 4))]


def _idx_values(n, hi):
    return np.arange(n, dtype=np.float32) % hi


def _clip_cases(op, nin):
    return [Case({"a_min": lo, "a_max": hi}, (S2,)) for lo, hi in ((-0.5, 0.5), (0.1, 0.6))]


def _slice_cases(op, nin):
    return [Case({"begin": b, "end": e}, (S2,)) for b, e in (((1,), (3,)), ((0, 1), (4, 5)),
                                                             ((1, None), (None, 4)))]


def _take_cases(op, nin):
    return [Case({"axis": 0}, (S2, (3,)), values={1: np.array([3, 0, 2], np.float32)}),
            Case({"axis": 0, "mode": "wrap"}, (S2, (2,)), values={1: np.array([5, 1], np.float32)})]


def _concat_cases(op, nin):
    return [Case({"num_args": n, "dim": dim}, ((4, 6),) * n) for dim in (0, 1)
            for n in ((2, 3) if nin is None else (nin,))]


def _stack_cases(op, nin):
    return [Case({"num_args": n, "axis": ax}, ((4, 6),) * n) for ax in (0, 1)
            for n in ((2, 3) if nin is None else (nin,))]


def _sbconv_cases(op, nin):
    p = {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "bsize": (5, 5)}
    return [Case(p, ((2, 3, 11, 13), (2, 11, 13), None, None)),
            Case(dict(p, no_bias=True), ((2, 3, 11, 13), (2, 11, 13), None))]


def _bottleneck_cases(op, nin):
    return [Case({"num_filter": 4, "bsize": (5, 5)}, ((2, 16, 10, 12), (2, 1, 10, 12))
                 + (None,) * 15, positive=True)]


def _embedding_cases(op, nin):
    ids = np.array([[1, 3, 0, 5, 2, 4], [4, 4, 1, 0, 3, 2], [0, 5, 5, 1, 2, 3],
                    [2, 1, 0, 3, 5, 4]], np.float32)
    return [Case({"input_dim": 6, "output_dim": 6}, (S2, (6, 6)), values={0: ids})]


def _bwd_embedding_cases(op, nin):
    ids = np.array([[1, 3, 0, 5, 2, 4], [4, 4, 1, 0, 3, 2], [0, 5, 5, 1, 2, 3],
                    [2, 1, 0, 3, 5, 4]], np.float32)
    grads = (True, False) if "sparse_grad" in op.params.fields else (None,)
    return [Case(dict({"input_dim": 6, "output_dim": 5},
                      **({} if g is None else {"sparse_grad": g})), ((4, 6, 5), S2),
                 values={1: ids}) for g in grads]


def _bag_cases(op, nin):
    ids = np.array([[1, 3, 0, 5, 2, 4], [4, 4, 1, 0, 3, 2], [0, 5, 5, 1, 2, 3],
                    [2, 1, 0, 3, 5, 4]], np.float32)
    return [Case({"input_dim": 6, "output_dim": 5}, ((4, 6), (6, 5), (4, 6)), values={0: ids})]


def _bwd_bag_cases(op, nin):
    ids = np.array([[1, 3, 0, 5, 2, 4], [4, 4, 1, 0, 3, 2], [0, 5, 5, 1, 2, 3],
                    [2, 1, 0, 3, 5, 4]], np.float32)
    return [Case({"input_dim": 6, "output_dim": 5, "sparse_grad": g}, ((4, 5), (4, 6), (4, 6)),
                 values={1: ids}) for g in (True, False)]


def _fc_cases(op, nin):
    shapes = {2: (S2, (3, 6)), 3: (S2, (3, 6), (3,))}[nin]
    return [Case({"num_hidden": 3, "no_bias": nin == 2}, shapes)]


def _bwd_fc_cases(op, nin):
    return [Case({"num_hidden": 3}, ((4, 3), S2, (3, 6)))]


def _bwd_softmax_cases(op, nin):
    label = np.array([0, 2, 5, 1], np.float32)
    if nin == 3:
        return [Case({"out_grad": True}, (S2, (4,), S2), values={1: label}, positive=True)]
    return [Case({}, (S2, (4,)), values={1: label}, positive=True),
            Case({}, (S2, (4, 1)), values={1: label.reshape(4, 1)}, positive=True)]


def _custom_prop():
    """Register (once) a two-input custom op, x * y, for the Custom records' sweep."""
    import sparsym as mx
    if "sweep_mul" in mx.ops.control.custom.PROPS:
        return

    def dense(x):
        return x.tostype("default")

    class Mul(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], dense(in_data[0]) * dense(in_data[1]))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            g = dense(out_grad[0])
            self.assign(in_grad[0], req[0], g * dense(in_data[1]))
            self.assign(in_grad[1], req[1], g * dense(in_data[0]))

    @mx.operator.register("sweep_mul")
    class MulProp(mx.operator.CustomOpProp):
        """Takes any storage types; outputs and gradients are dense."""

        def list_arguments(self):
            return ["x", "y"]

        def infer_storage_type(self, in_stype):
            return in_stype, ["default"], []

        def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                        aux_stype):
            return ograd_stype, in_stype, out_stype, ["default"] * len(in_stype), aux_stype

        def create_operator(self, ctx, shapes, dtypes):
            return Mul()


def _custom_cases(op, nin):
    _custom_prop()
    return [Case({"op_type": "sweep_mul"}, (S2, S2))]


def _bwd_custom_cases(op, nin):
    _custom_prop()
    return [Case({"op_type": "sweep_mul"}, (S2, S2, S2, S2))]


OVERRIDES = {
    "Custom": _custom_cases, "_backward_Custom": _bwd_custom_cases,
    "clip": _clip_cases, "slice": _slice_cases, "take": _take_cases,
    "Concat": _concat_cases, "Embedding": _embedding_cases,
    "_contrib_SparseEmbedding": _embedding_cases, "FullyConnected": _fc_cases,
    "_backward_Embedding": _bwd_embedding_cases,
    "_backward_SparseEmbedding": _bwd_embedding_cases,
    "_embedding_bag_sum": _bag_cases, "_backward_embedding_bag_sum": _bwd_bag_cases,
    "_backward_FullyConnected": _bwd_fc_cases, "_backward_SoftmaxOutput": _bwd_softmax_cases,
    "stack": _stack_cases, "_contrib_SparseBlockConvolution": _sbconv_cases,
    "_contrib_SparseBottleneck": _bottleneck_cases,
    "dot": _dot_cases,
    "batch_dot": lambda op, nin: [Case({"transpose_a": ta, "transpose_b": tb},
                                       ((2, 4, 3) if not ta else (2, 3, 4),
                                        (2, 3, 5) if not tb else (2, 5, 3)))
                                  for ta in (False, True) for tb in (False, True)],
    "_backward_broadcast_binary": _bwd_bcast_cases,
    "_sparse_retain": _retain_cases,
    "_backward_sparse_retain": _retain_cases,
    "add_n": _add_n_cases,
    "cast_storage": _cast_cases,
    "_square_sum": _reduce_cases,
    "_backward_square_sum": lambda op, nin: [Case(c.params, (((4, 1) if c.params["keepdims"]
                                                              and c.params["axis"] == (1,)
                                                              else _red_shape(c.params)), S2))
                                             for c in _reduce_cases(op, 1)],
    "_contrib_getnnz": _getnnz_cases,
    "_contrib_quadratic": _quad_cases,
    "_contrib_backward_quadratic": _quad_cases,
    "_backward_scalar": _bwd_scalar_cases,
    "_scatter_plus_scalar": _scatter_scalar_cases,
    "_scatter_minus_scalar": _scatter_scalar_cases,
    "_scatter_elemwise_div": _scatter_div_cases,
    "sgd_update": _opt(0), "sgd_mom_update": _opt(1, momentum=0.9), "adam_update": _opt(2),
    "_sparse_adagrad_update": _opt(1), "nag_mom_update": _opt(1, momentum=0.9),
    "rmsprop_update": _opt(1), "rmspropalex_update": _opt(3), "signsgd_update": _opt(0),
    "signum_update": _opt(1, momentum=0.9), "ftrl_update": _ftrl_cases,
    "ftml_update": _ftml_cases,
}
for _n in ("_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
           "_rdiv_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar",
           "_minimum_scalar", "_mod_scalar", "_rmod_scalar", "_equal_scalar",
           "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar",
           "_lesser_equal_scalar"):
    OVERRIDES[_n] = _scalar_cases
for _n in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
           "broadcast_power", "broadcast_maximum", "broadcast_minimum", "broadcast_hypot",
           "broadcast_mod", "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
           "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
           "broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor"):
    OVERRIDES[_n] = _bcast_cases


def _red_shape(p):
    axis, keep = p["axis"], p["keepdims"]
    axes = (0, 1) if axis is None else axis
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(S2))
    rest = tuple(d for i, d in enumerate(S2) if i not in axes)
    return rest or (1,)


def dense_only(op):
    """Every row takes and gives default storage only (the row is its own reference)."""
    return all(all(x == DNS for x in r.ins if x != "...") and r.ins[:1] != ("...",)
               and all(o == DNS for o in r.outs) for r in op.dispatch)


def skip_reason(op):
    """Why the sweep may skip an op it has no builder for, or None (then it must fail).

    Only dense-only ops: their rows are their own dense reference, and their values are
    tested op by op (tests/ops/test_nn_*). An op with a sparse row (backward ops included)
    needs a builder.
    """
    if dense_only(op):
        return "dense-only op: its rows are their own dense reference"
    return None


def cases_for(op, nin):
    """Candidate cases for ``op`` with ``nin`` inputs, or None when it needs a builder."""
    if op.name in OVERRIDES:
        return OVERRIDES[op.name](op, nin)
    if any(f.required for f in op.params.fields.values()):
        return None
    return same(nin)


def forward_cases(op, extra=None):
    """(nin, case, attrs) of every case of ``op`` whose parameters parse, over the arities
    of its dense row (a variadic row: those its builder has, else 2 and 3). ``extra`` maps
    op names to builders used before OVERRIDES (benchmarks/ops_vs_mxnet.py's own cases)."""
    table = {**OVERRIDES, **(extra or {})}
    row = next((r for r in op.dispatch if all(s in (DNS, "*", "...") for s in r.ins)), None)
    if row is None:
        return
    if op.name in (extra or {}) or "..." in row.ins and op.name in table:
        nins = sorted({len(c.shapes) for c in table[op.name](op, None)})
    elif "..." not in row.ins:
        nins = [len(row.ins)]
    else:
        nins = [2, 3]
    for nin in nins:
        for case in (table[op.name](op, nin) if op.name in table else cases_for(op, nin)) or ():
            if len(case.shapes) != nin:
                continue
            try:
                attrs = op.params.parse(op.name, dict(case.params))
            except Exception:  # noqa: BLE001  (a case for another arity)
                continue
            yield nin, case, attrs


# backward ops with sparse rows: (ograd, data) or (out, label) pairs of one shape
for _n in ("_backward_abs", "_backward_sign", "_backward_square", "_backward_relu",
           "_backward_ceil", "_backward_floor", "_backward_round", "_backward_rint",
           "_backward_fix", "_backward_trunc", "_backward_LinearRegressionOutput",
           "_backward_LogisticRegressionOutput", "_backward_MAERegressionOutput"):
    OVERRIDES[_n] = lambda op, nin: same(nin)
OVERRIDES["_contrib_backward_gradientmultiplier"] = lambda op, nin: same(nin, scalar=0.5)
# unary and binary elementwise gradients: sparse operands are computed directly (dense out);
# domains (log of a negative, ...) give the same NaNs on both sides
for _n in ("sqrt", "cbrt", "tanh", "sin", "sinh", "tan", "arcsin", "arcsinh", "arctan",
           "arctanh", "expm1", "log1p", "degrees", "radians", "sigmoid", "exp", "log", "log2",
           "log10", "cos", "cosh", "arccos", "arccosh", "rsqrt", "rcbrt", "reciprocal",
           "softsign", "erf", "gamma", "gammaln", "mul", "div", "power", "maximum", "minimum",
           "hypot"):
    OVERRIDES["_backward_" + _n] = lambda op, nin: same(nin)


def _bwd_reduce_cases(op, nin):
    """(ograd, data, out) of a reduction over S2."""
    return [Case(c.params, (_red_shape(c.params), S2, _red_shape(c.params)))
            for c in _reduce_cases(op, 1)]


for _n in ("sum", "mean", "max", "min", "prod", "nansum", "nanprod"):
    OVERRIDES["_backward_" + _n] = _bwd_reduce_cases
# shape-only backward ops: the data operand (any storage) only supplies its shape
OVERRIDES["_backward_Flatten"] = lambda op, nin: same(nin)
OVERRIDES["_backward_transpose"] = lambda op, nin: [Case({}, ((6, 4), S2)),
                                                    Case({"axes": (1, 0)}, ((6, 4), S2))]
OVERRIDES["_backward_Reshape"] = lambda op, nin: [Case({"shape": (6, 4)}, ((6, 4), S2))]
OVERRIDES["_backward_expand_dims"] = lambda op, nin: [Case({"axis": 1}, ((4, 1, 6), S2))]
OVERRIDES["_backward_clip"] = lambda op, nin: [Case({"a_min": -0.3, "a_max": 0.4}, (S2, S2))]
OVERRIDES["_backward_slice"] = lambda op, nin: [Case({"begin": (1, 2), "end": (3, 5)},
                                                     ((2, 3), S2))]
OVERRIDES["_backward_where"] = lambda op, nin: same(nin)
OVERRIDES["_backward_SwapAxis"] = lambda op, nin: [Case({"dim1": 0, "dim2": 1}, ((6, 4), S2))]
OVERRIDES["_backward_norm"] = lambda op, nin: [
    Case({"axis": ax, "keepdims": k}, (_red_shape({"axis": ax, "keepdims": k}), S2,
                                       _red_shape({"axis": ax, "keepdims": k})))
    for ax in ((1,), None) for k in (True, False)]
OVERRIDES["_backward_repeat"] = lambda op, nin: [Case({"repeats": 2, "axis": 1}, ((4, 12), S2)),
                                                 Case({"repeats": 2}, ((48,), S2))]
OVERRIDES["_backward_reverse"] = lambda op, nin: [Case({"axis": (1,)}, (S2, S2))]
OVERRIDES["_backward_slice_axis"] = lambda op, nin: [
    Case({"axis": 1, "begin": 1, "end": 4}, ((4, 3), S2))]
OVERRIDES["_backward_squeeze"] = lambda op, nin: [Case({}, (S2, S2))]
OVERRIDES["_backward_tile"] = lambda op, nin: [Case({"reps": (2, 1)}, ((8, 6), S2))]
OVERRIDES["_backward_take"] = lambda op, nin: [
    Case({"axis": 0}, ((3, 6), (3,), S2), values={1: np.array([0.0, 2.0, 2.0])})]
OVERRIDES["_backward_Concat"] = lambda op, nin: [
    Case({"num_args": 2, "dim": 1}, ((4, 12), S2, S2)),
    Case({"num_args": 3, "dim": 0}, ((12, 6), S2, S2, S2))]
OVERRIDES["_backward_SliceChannel"] = lambda op, nin: [
    Case({"num_outputs": 2, "axis": 1}, ((4, 3), (4, 3))),
    Case({"num_outputs": 2, "axis": 0}, ((2, 6), (2, 6)))]


# dense-only operators with required parameters or inputs of their own shapes: cases so that
# their dense rows meet MXNet's recorded values (tests/fixtures/mxnet/sweep_ops.npz)
_IMG = (2, 3, 6, 6)
OVERRIDES.update({
    "Activation": lambda op, nin: [Case({"act_type": t}, (S2,))
                                   for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign")],
    "BatchNorm": lambda op, nin: [Case({"fix_gamma": fg}, (S2, (6,), (6,), (6,), (6,)), full=(4,))
                                  for fg in (True, False)],
    "_contrib_SyncBatchNorm": lambda op, nin: [
        Case({"fix_gamma": fg, "key": "bn"}, (S2, (6,), (6,), (6,), (6,)), full=(4,))
        for fg in (True, False)],
    "Cast": lambda op, nin: [Case({"dtype": t}, (S2,)) for t in ("float64", "int32")],
    "Convolution": lambda op, nin: [
        Case({"kernel": (3, 3), "num_filter": 2, "pad": (1, 1), "no_bias": nin == 2},
             (_IMG,) + (None,) * (nin - 1))],
    "Deconvolution": lambda op, nin: [
        Case({"kernel": (3, 3), "num_filter": 2, "stride": (2, 2), "no_bias": nin == 2},
             (_IMG,) + (None,) * (nin - 1))],
    "Pooling": lambda op, nin: [Case({"kernel": (2, 2), "pool_type": t, "stride": (2, 2)},
                                     (_IMG,)) for t in ("max", "avg", "sum")],
    "Reshape": lambda op, nin: [Case({"shape": s}, (S2,)) for s in ((6, 4), (-1,), (0, 2, -1))],
    "SliceChannel": lambda op, nin: [Case({"num_outputs": 2, "axis": ax}, (S2,)) for ax in (0, 1)],
    "_arange": lambda op, nin: [Case({"start": 1.0, "stop": 7.0, "step": 1.5}, ())],
    "_full": lambda op, nin: [Case({"shape": (2, 3), "value": 1.5}, ())],
    "_ones": lambda op, nin: [Case({"shape": (2, 3)}, ())],
    "_zeros": lambda op, nin: [Case({"shape": (2, 3)}, ())],
    "expand_dims": lambda op, nin: [Case({"axis": ax}, (S2,)) for ax in (0, 2, -1)],
    "reverse": lambda op, nin: [Case({"axis": ax}, (S2,)) for ax in (0, 1)],
    "one_hot": lambda op, nin: [Case({"depth": 5}, ((4,),),
                                     values={0: np.array([0, 3, 1, 4], np.float32)})],
    "pick": lambda op, nin: [Case({"axis": 1}, (S2, (4,)),
                                  values={1: np.array([0, 5, 2, 1], np.float32)})],
    "repeat": lambda op, nin: [Case({"repeats": 2, "axis": 1}, (S2,)),
                               Case({"repeats": 3}, (S2,))],
    "slice_axis": lambda op, nin: [Case({"axis": 1, "begin": 1, "end": 4}, (S2,)),
                                   Case({"axis": 0, "begin": -3, "end": None}, (S2,))],
    "tile": lambda op, nin: [Case({"reps": r}, (S2,)) for r in ((2, 1), (3,), (1, 2, 2))],
    "RNN": lambda op, nin: [Case({"state_size": 3, "num_layers": 1, "mode": m},
                                 ((2, 2, 4),) + (None,) * (nin - 1))
                            for m in (("lstm",) if nin == 4 else ("rnn_tanh", "gru"))],
})

# the families added for issue 17 keep their builders (with NumPy references) apart
import sweep_cases_spatial  # noqa: E402,F401  (adds its ops to sweep_cases_nn's tables)
from sweep_cases_nn import FORWARD as _NN_FORWARD  # noqa: E402

OVERRIDES.update(_NN_FORWARD)
# ordering: the positions input of _backward_topk holds valid indices along the last axis
OVERRIDES["_backward_topk"] = lambda op, nin: [
    Case({"axis": -1}, ((4, 2), (4, 2), S2), values={1: np.array([[5, 0], [1, 2], [3, 4],
                                                                  [0, 1]], np.float32)})]
# indexing_nd: gather_nd's gradient takes (ograd, indices (M, Y...), data)
OVERRIDES["_backward_gather_nd_like"] = lambda op, nin: [
    Case({}, ((3, 6), (1, 3), S2), values={1: np.array([[3, 0, 3]], np.float32)})]
# layout_ops: (ograd, data) pairs of the shape-only backward ops
OVERRIDES["_backward_diag"] = lambda op, nin: [Case({}, ((4,), S2)),
                                               Case({"k": -1}, ((3,), S2))]
OVERRIDES["_backward_depth_to_space"] = lambda op, nin: [
    Case({"block_size": 2}, ((1, 1, 4, 6), (1, 4, 2, 3)))]
OVERRIDES["_backward_space_to_depth"] = lambda op, nin: [
    Case({"block_size": 2}, ((1, 4, 2, 3), (1, 1, 4, 6)))]
OVERRIDES["_backward_Pad"] = lambda op, nin: [
    Case({"mode": m, "pad_width": (0, 0, 0, 0, 1, 1, 1, 0)}, ((1, 1, 6, 7), (1, 1, 4, 6)))
    for m in ("constant", "edge", "reflect")]
# amp_ops: the variadic bookkeeping ops read any storage (a flag or sums of squares out)
for _n in ("multi_sum_sq", "multi_all_finite"):
    OVERRIDES[_n] = lambda op, nin: [Case({"num_arrays": n}, (S2,) * n)
                                     for n in ((2, 3) if nin is None else (nin,))]
# patch_ops: (ograd, data) of the im2col and adaptive pooling gradients
OVERRIDES["_backward_im2col"] = lambda op, nin: [
    Case({"kernel": (2, 2)}, ((1, 4, 15), (1, 1, 4, 6)))]
OVERRIDES["_backward_contrib_AdaptiveAvgPooling2D"] = lambda op, nin: [
    Case({"output_size": (2, 3)}, ((1, 1, 2, 3), (1, 1, 4, 6)))]
# contrib_multibox: MultiBoxPrior reads only the feature map's shape (any storage)
OVERRIDES["_contrib_MultiBoxPrior"] = lambda op, nin: [
    Case({"sizes": (0.5, 0.25), "ratios": (1.0, 2.0)}, ((1, 2, 3, 4),))]


# image ops (ops/image/image.py): HWC images, values vs MXNet in tests/image/test_image_ops.py
_HWC, _CHW = (5, 6, 3), (3, 5, 6)
OVERRIDES.update({
    "_image_to_tensor": lambda op, nin: [Case({}, (_HWC,)), Case({}, ((2,) + _HWC,))],
    "_image_normalize": lambda op, nin: [
        Case({"mean": (0.1, 0.2, 0.3), "std": (0.5, 0.6, 0.7)}, (_CHW,)),
        Case({"mean": (0.1,), "std": (2.0,)}, ((2,) + _CHW,))],
    "_backward_image_normalize": lambda op, nin: [
        Case({"mean": (0.1, 0.2, 0.3), "std": (0.5, 0.6, 0.7)}, (_CHW,))],
    "_image_crop": lambda op, nin: [Case({"x": 1, "y": 2, "width": 4, "height": 3}, (_HWC,))],
    "_backward_image_crop": lambda op, nin: [
        Case({"x": 1, "y": 2, "width": 4, "height": 3}, ((3, 4, 3), _HWC))],
    "_image_resize": lambda op, nin: [Case({"size": (4, 7), "interp": i}, (_HWC,))
                                      for i in range(5)],
    "_cvimresize": lambda op, nin: [Case({"w": 4, "h": 7}, (_HWC,))],
    "_cvcopyMakeBorder": lambda op, nin: [Case({"top": 1, "bot": 2, "left": 0, "right": 1,
                                                "type": t}, (_HWC,)) for t in range(5)],
    "_image_adjust_lighting": lambda op, nin: [Case({"alpha": (0.1, 0.2, 0.3)}, (_HWC,))],
    "_image_random_color_jitter": lambda op, nin: [
        Case({"brightness": 0.0, "contrast": 0.0, "saturation": 0.0, "hue": 0.0}, (_HWC,))],
})
for _n in ("_image_flip_left_right", "_image_flip_top_bottom", "_backward_image_flip_left_right",
           "_backward_image_flip_top_bottom"):
    OVERRIDES[_n] = lambda op, nin: [Case({}, (_HWC,))]
# random ops, run twice by the sweep: no draw that changes the value
OVERRIDES["_image_random_lighting"] = lambda op, nin: [Case({"alpha_std": 0.0}, (_HWC,))]
for _n in ("_image_random_flip_left_right", "_image_random_flip_top_bottom"):
    OVERRIDES[_n] = lambda op, nin: [Case({}, ((1, 1, 3),))]
for _n in ("brightness", "contrast", "saturation", "hue"):
    OVERRIDES["_image_random_" + _n] = lambda op, nin: [
        Case({"min_factor": 1.5, "max_factor": 1.5}, (_HWC,))]


def _loop_node(kind):
    """(node, its input shapes, its output shapes) of a small control-flow graph built by
    the symbolic front end (the node's parameters carry its subgraphs)."""
    import sparsym as mx
    a, b = mx.sym.var("a"), mx.sym.var("b")
    if kind == "foreach":
        out, st = mx.sym.contrib.foreach(lambda d, s: (d * s[0] + s[0], [s[0] * 2]), a, [b])
        shapes = {"a": (3, 4), "b": (4,)}
    elif kind == "while_loop":
        out, st = mx.sym.contrib.while_loop(lambda x, y: x.sum() == x.sum(),
                                            lambda x, y: (x * y, [x + y, y * 2]), [a, b],
                                            max_iterations=3)
        shapes = {"a": (4,), "b": (4,)}
    else:
        out = mx.sym.contrib.cond(a.sum() > 0, lambda: b * a, lambda: b - a)
        shapes = {"a": (4,), "b": (4,)}
    node = out._outputs[0][0]
    ins = mx.sym.Group([mx.sym.Symbol([e]) for e in node.inputs]).infer_shape(**shapes)[1]
    outs = mx.sym.Symbol([(node, i) for i in range(node.nout)]).infer_shape(**shapes)[1]
    return node, tuple(ins), tuple(outs)


def _loop_cases(kind, backward):
    def cases(op, nin):
        node, ins, outs = _loop_node(kind)
        return [Case(dict(node.params), (outs + ins) if backward else ins)]
    return cases


for _k in ("foreach", "while_loop", "cond"):
    OVERRIDES["_" + _k] = _loop_cases(_k, False)
    OVERRIDES["_backward_" + _k] = _loop_cases(_k, True)


def _bwd_dot_cases(op, nin):
    """(ograd, lhs, rhs) of dot over every transpose pair and forward_stype."""
    return [Case(c.params, ((4, 5),) + c.shapes) for c in _dot_cases(op, nin)]


OVERRIDES["_backward_dot_lhs"] = OVERRIDES["_backward_dot_rhs"] = _bwd_dot_cases
OVERRIDES["_contrib_edge_id"] = lambda op, nin: [Case({}, (S2, (5,), (5,)), values={
    1: np.array([0, 1, 2, 3, 3], np.float32), 2: np.array([0, 5, 2, 1, 4], np.float32)})]
