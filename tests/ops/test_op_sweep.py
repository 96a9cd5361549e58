"""Registry-driven sweep: every dispatch row of every registered op.

For each row, inputs of the row's storage types are built (canonical and non-canonical:
empty rows, nnz == 0, every row present), the row's kernel runs, and

- the output storage types equal the row's declared ones;
- the densified outputs equal the op's dense kernel on densified inputs (mutated states
  of the optimizer ops too);
- the dense row itself equals MXNet 1.9.1's values on the same inputs, recorded in
  tests/fixtures/mxnet/sweep_ops.npz by tests/ops/make_mxnet_sweep_fixtures.py (an
  independent reference: a dense row is never compared with itself). A forward op without
  a record says why in ``NO_MXNET_REFERENCE``.

A row the sweep cannot exercise (no input builder, or no candidate matching its guard)
fails the test. Builders live in tests/ops/sweep_cases.py.
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from sweep_cases import OVERRIDES, cases_for, skip_reason

import sparsym as mx
from sparsym import storage as st
from sparsym.ops.core import rules
from sparsym.ops.core.helpers import CSR, DNS, RSP
from sparsym.ops.core.registry import all_ops

VARIANTS = ("random", "empty", "full")
# Rows the sweep shows to be wrong, owned elsewhere; strict xfail: a fix makes them XPASS,
# which fails until the entry is removed.
KNOWN_BUGS: dict = {}
# Ops MXNet defines on csr inputs only, with no dense form to compare a row with; their
# values against MXNet 1.9.1 are tested op by op.
NO_DENSE_ROW = dict.fromkeys(
    ("_contrib_dgl_csr_neighbor_uniform_sample", "_contrib_dgl_csr_neighbor_non_uniform_sample",
     "_contrib_dgl_subgraph", "_contrib_dgl_graph_compact"),
    "csr graphs only (MXNet has no dense form): tests/ops/test_contrib_dgl.py")


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
    choices = [(DNS, RSP, CSR) if s == "*" else (s,) for s in ins]
    if sum(len(c) > 1 for c in choices) <= 2:
        return list(itertools.product(*choices))
    # wider rows: every free input default, one sparse input at a time, all the same
    base = tuple(c[0] for c in choices)
    out = [base]
    for i, c in enumerate(choices):
        out += [base[:i] + (x,) + base[i + 1:] for x in c[1:]]
    for x in (RSP, CSR):
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
    if stype == DNS:
        return x.copy()
    if stype == CSR:
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
            x = _dense_value(shape, "full" if stype == DNS and variant == "empty" else variant,
                             rng, case.positive)
        r = _raw(x, stype)
        if r is None:
            return None
        if stype == RSP and variant == "full" and len(r.indices) != shape[0]:
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
        if all(s in (DNS, "*", "...") for s in row.ins):
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
    if name in NO_DENSE_ROW:
        pytest.skip(NO_DENSE_ROW[name])
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
                if CSR in stypes and any(len(s) != 2 for s, t in zip(case.shapes, stypes)
                                       if t == CSR):
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


def _check_one(op, row, ref_row, attrs, case, stypes, raws, what):
    dense_in = [st.todense(r).copy() for r in raws]
    mine_in = _copy_raws(raws)
    with np.errstate(all="ignore"):
        outs = row.kernel(attrs, mine_in)
    n_out = op.n_outputs(attrs)
    want = (row.out_stypes(stypes, n_out) if row.infer_stypes is None
            else row.infer_stypes(attrs, stypes))
    got = tuple(st.stype_of(o) for o in outs)[:n_out]
    assert got == tuple(want)[:len(got)], f"{what}: output stypes {got}, row says {want}"
    if case.ref is not None:
        refs = case.ref(attrs, dense_in, raws)
        refs = refs if isinstance(refs, tuple) else (refs,)
    else:
        with np.errstate(all="ignore"):
            refs = ref_row.kernel(attrs, dense_in)
    for i, (o, r) in enumerate(zip(outs, refs)):
        _close(st.todense(o), st.todense(r), f"{what}: output {i}")
    for i in op.mutates:  # states updated in place must agree too
        if i >= len(mine_in):  # variadic ops list the states of up to 64 weights
            break
        _close(st.todense(mine_in[i]), dense_in[i], f"{what}: mutated input {i}")


def test_every_op_has_rows():
    assert ROWS
    for op in _unique_ops():
        assert op.dispatch, f"{op.name} has no dispatch rows"


# ----------------------------------------------------------------------------- MXNet's values
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "sweep_ops.npz"
_REC = np.load(FIXTURE)
_META = json.loads(str(_REC["meta"]))
RECORDED = sorted({m["name"] for m in _META.values()})
# random draws: their moments are tested op by op (tests/ops/test_random_dist.py & co)
RANDOM = ("_random_", "_sample_", "_shuffle")
# forward ops the fixture cannot cover, and what tests their values instead
_MULTI_SGD_WHY = ("MXNet infers no output shape (needs out=); values probed on MXNet: "
                  "tests/optimizer/test_multi_sgd.py")
NO_MXNET_REFERENCE = {
    **dict.fromkeys(("_image_to_tensor", "_image_normalize", "_image_crop", "_image_resize",
                     "_cvimresize", "_cvcopyMakeBorder", "_image_flip_left_right",
                     "_image_flip_top_bottom",
                     "_image_random_brightness", "_image_random_contrast",
                     "_image_random_saturation", "_image_random_hue", "_image_adjust_lighting"),
                    "image ops: MXNet 1.9.1's values on images (every interpolation, uint8 "
                    "and float32) in tests/image/test_image_ops.py"),
    **dict.fromkeys(("_image_random_flip_left_right", "_image_random_flip_top_bottom",
                     "_image_random_color_jitter", "_image_random_lighting"),
                    "random image ops: tests/image/test_image_ops.py"),
    "multi_sgd_update": _MULTI_SGD_WHY,
    "multi_sgd_mom_update": _MULTI_SGD_WHY,
    "multi_mp_sgd_update": _MULTI_SGD_WHY,
    "multi_mp_sgd_mom_update": _MULTI_SGD_WHY,
    "preloaded_multi_sgd_update": _MULTI_SGD_WHY,
    "preloaded_multi_sgd_mom_update": _MULTI_SGD_WHY,
    "preloaded_multi_mp_sgd_update": _MULTI_SGD_WHY,
    "preloaded_multi_mp_sgd_mom_update": _MULTI_SGD_WHY,
    **dict.fromkeys(("_contrib_edge_id", "_contrib_dgl_adjacency"),
                    "csr graphs only (no dense row): MXNet 1.9.1's values in "
                    "tests/ops/test_contrib_dgl.py"),
    **NO_DENSE_ROW,
    "_contrib_hawkesll": "special inputs (ragged int32 marks): MXNet 1.9.1's values and "
                         "gradients in tests/ops/test_contrib_hawkes.py",
    "_embedding_bag_sum": "built by the fusion pass only (Embedding weighted by values and "
                          "summed over axis 1; MXNet has no such op): bit for bit against "
                          "the unfused graph in tests/executor/test_fuse_embedding_bag.py "
                          "and tests/kernels/test_embedding_bag.py",
    "_fused_conv_bn": "built by the fusion pass only (Convolution + BatchNorm [+ add]): "
                      "checked against the unfused graph in "
                      "tests/executor/test_fold_conv_bn.py",
    "Pad": "no sweep record yet (special inputs): "
           "tests/ops/test_layout_ops.py",
    "_ravel_multi_index": "no sweep record yet (special inputs): "
                          "tests/ops/test_layout_ops.py",
    "_split_v2": "no sweep record yet (special inputs): "
                 "tests/ops/test_layout_ops.py",
    "_split_v2_backward": "no sweep record yet (special inputs): "
                          "tests/ops/test_layout_ops.py",
    "_unravel_index": "no sweep record yet (special inputs): "
                      "tests/ops/test_layout_ops.py",
    "_contrib_SyncBatchNorm": "BatchNorm(axis=1) on one device: checked against BatchNorm "
                              "in tests/gluon/test_gluon_blocks.py",
    "depth_to_space": "no sweep record yet (special inputs): "
                      "tests/ops/test_layout_ops.py",
    "space_to_depth": "no sweep record yet (special inputs): "
                      "tests/ops/test_layout_ops.py",
    "_contrib_AdaptiveAvgPooling2D": "no sweep record yet (special inputs): "
                                     "tests/ops/test_patch_ops.py",
    "col2im": "no sweep record yet (special inputs): "
              "tests/ops/test_patch_ops.py",
    "im2col": "no sweep record yet (special inputs): "
              "tests/ops/test_patch_ops.py",
    "_contrib_allclose": "no sweep record yet (special inputs): "
                         "tests/ops/test_sequence_amp_ops.py",
    "_copyto": "no sweep record yet (special inputs): "
               "tests/ops/test_sequence_amp_ops.py",
    "amp_cast": "no sweep record yet (special inputs): "
                "tests/ops/test_sequence_amp_ops.py",
    "amp_multicast": "no sweep record yet (special inputs): "
                     "tests/ops/test_sequence_amp_ops.py",
    "_contrib_boolean_mask": "no sweep record yet (special inputs): "
                             "tests/ops/test_indexing_nd.py",
    "_contrib_index_copy": "no sweep record yet (special inputs): "
                           "tests/ops/test_indexing_nd.py",
    "_onehot_encode": "no sweep record yet (special inputs): "
                      "tests/ops/test_indexing_nd.py",
    "_scatter_set_nd": "no sweep record yet (special inputs): "
                       "tests/ops/test_indexing_nd.py",
    "_slice_assign": "no sweep record yet (special inputs): "
                     "tests/ops/test_indexing_nd.py",
    "_slice_assign_scalar": "no sweep record yet (special inputs): "
                            "tests/ops/test_indexing_nd.py",
    "batch_take": "no sweep record yet (special inputs): "
                  "tests/ops/test_indexing_nd.py",
    "fill_element_0index": "no sweep record yet (special inputs): "
                           "tests/ops/test_indexing_nd.py",
    "gather_nd": "no sweep record yet (special inputs): "
                 "tests/ops/test_indexing_nd.py",
    "scatter_nd": "no sweep record yet (special inputs): "
                  "tests/ops/test_indexing_nd.py",
    "_eye": "no sweep record yet (special inputs): "
            "tests/ops/test_creation_extra.py",
    "_linspace": "no sweep record yet (special inputs): "
                 "tests/ops/test_creation_extra.py",
    "_zeros_without_dtype": "no sweep record yet (special inputs): "
                            "tests/ops/test_creation_extra.py",
    "_histogram": "no sweep record yet (special inputs): "
                  "tests/ops/test_stats_ops.py",
    "moments": "no sweep record yet (special inputs): "
               "tests/ops/test_stats_ops.py",
    "broadcast_to": "no sweep record yet (special inputs): "
                    "tests/ops/test_broadcast_shape.py",
    "IdentityAttachKLSparseReg": "identity forward; its KL-penalty gradient: "
                                 "tests/ops/test_nn_normalization.py",
    "_CustomFunction": "runs a user's autograd.Function: tests/autograd/test_autograd.py",
    "Custom": "runs a user's CustomOp: tests/operator/test_custom_op.py",
    "_linalg_syevd": "eigenvectors are defined up to sign: tests/ops/test_linalg.py",
    "_linalg_trmm": "MXNet rejects the sweep's mixed-dtype case: tests/ops/test_linalg.py",
    "_linalg_trsm": "MXNet rejects the sweep's mixed-dtype case: tests/ops/test_linalg.py",
    "_contrib_SparseBlockConvolution": "sparsym's SBNet op: tests/contrib against dense conv",
    "_contrib_SparseBottleneck": "sparsym's SBNet op: tests/contrib against the dense block",
    "_contrib_reduce_mask": "sparsym's SBNet op: tests/contrib/test_sbnet_ops.py",
    "_contrib_sparse_gather": "sparsym's SBNet op: tests/contrib/test_sbnet_ops.py",
    "_contrib_sparse_scatter": "sparsym's SBNet op: tests/contrib/test_sbnet_ops.py",
    "_contrib_sparse_scatter_var": "sparsym's SBNet op: tests/contrib/test_sbnet_ops.py",
    "Dropout": "random masks in training; the identity at inference (tests/ops/test_nn_*)",
    **dict.fromkeys(("_multi_adamw_update", "_multi_mp_adamw_update", "_multi_lamb_update",
                     "_multi_mp_lamb_update"),
                    "MXNet infers no output shape (needs out=): NumPy references in "
                    "sweep_cases_nn, MXNet's values in tests/ops/test_optimizer_fused.py"),
    "_contrib_group_adagrad_update": "MXNet's one CPU row takes a row_sparse gradient: NumPy "
                                     "reference in sweep_cases_nn, MXNet's values in "
                                     "tests/ops/test_optimizer_fused.py",
    **dict.fromkeys(("_contrib_fft", "_contrib_ifft", "_contrib_count_sketch"),
                    "GPU-only in MXNet 1.9.1: NumPy references in sweep_cases_nn"),
    "_set_value": "fills out= (no inputs): NumPy reference in sweep_cases_nn",
    "_rnn_param_flat": "sparsym's own (a Gluon RNN layer's flat parameters; MXNet has no "
                       "such op): tests/gluon/test_rnn_param_flat.py",
    # landed without sweep cases yet (their own tests check values against NumPy): give
    # them cases in sweep_cases.py, rerun make_mxnet_sweep_fixtures.py, drop them here
    **dict.fromkeys(("SequenceLast", "SequenceMask", "SequenceReverse", "_adamw_update",
                     "_mp_adamw_update", "_rnn_param_concat", "lamb_update_phase1",
                     "lamb_update_phase2", "mp_lamb_update_phase1", "mp_lamb_update_phase2",
                     "mp_nag_mom_update", "mp_sgd_mom_update", "mp_sgd_update", "multi_lars",
                     "reset_arrays"), "no sweep cases yet (issue 15's sweep landed after them)"),
    **dict.fromkeys(("_contrib_box_nms", "_contrib_box_iou", "_contrib_bipartite_matching",
                     "_contrib_box_encode", "_contrib_box_decode", "_contrib_MultiBoxPrior",
                     "_contrib_MultiBoxTarget", "_contrib_MultiBoxDetection"),
                    "detection ops on special inputs (boxes, labels): values printed by MXNet "
                    "1.9.1 in tests/ops/test_contrib_detection.py"),
    **dict.fromkeys(("_foreach", "_while_loop", "_cond"),
                    "run a subgraph built by mx.sym.contrib: tests/symbol/test_control_flow.py "
                    "(against the imperative loop and MXNet's values)"),
    **dict.fromkeys(("_contrib_Proposal", "_contrib_MultiProposal"),
                    "RPN maps of their own shapes: MXNet 1.9.1's values in "
                    "tests/ops/test_contrib_proposal.py"),
    **dict.fromkeys(("_contrib_ROIAlign", "_contrib_RROIAlign"),
                    "rois of their own shape: MXNet 1.9.1's values in "
                    "tests/ops/test_contrib_roi.py"),
    **dict.fromkeys(("_contrib_DeformableConvolution", "_contrib_ModulatedDeformableConvolution"),
                    "offsets/masks of their own shapes: MXNet 1.9.1's values in "
                    "tests/ops/test_contrib_deformable.py"),
    "BatchNorm_v1": "MXNet's nd.BatchNorm_v1 takes no moving statistics (aux states outside "
                    "its imperative signature): MXNet 1.9.1's values through an executor in "
                    "tests/ops/test_nn_v1_ops.py",
    "_contrib_getnnz": "counts stored entries (all, for a dense input): the sweep's own "
                       "reference (sweep_cases._getnnz_ref) on csr rows",
}


def _params(meta_params):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in meta_params.items()}


def check_against_mxnet(op, keys):
    """Run ``op``'s dense row on each recorded case and compare with MXNet's outputs."""
    for key in keys:
        m = _META[key]
        attrs = op.params.parse(op.name, _params(m["params"]))
        ins = [_REC[f"{key}/in{i}"].copy() for i in range(m["n_in"])]
        if op.needs_is_train:
            attrs = type(attrs)(attrs, __is_train__=False)
        if op.needs_out_shapes:
            done = _infer(op, attrs, [x.shape for x in ins])
            attrs = type(attrs)(attrs, __out_shapes__=done[1])
        dense_in = ("default",) * len(ins)
        row = next((r for r in op.dispatch if r.matches(attrs, dense_in)), _dense_row(op))
        with np.errstate(all="ignore"):
            outs = row.kernel(attrs, ins)
        n = 0
        while f"{key}/out{n}" in _REC.files:
            n += 1
        assert n and len(outs) >= n, f"{key}: {len(outs)} outputs, MXNet gave {n}"
        for i in range(n):
            _close(st.todense(outs[i]), _REC[f"{key}/out{i}"],
                   f"{key} {m['params']}: output {i} vs MXNet 1.9.1")
        for i in m["mutates"]:
            _close(st.todense(ins[i]), _REC[f"{key}/mut{i}"],
                   f"{key} {m['params']}: updated input {i} vs MXNet 1.9.1")


# dense rows that disagree with MXNet, owned elsewhere; strict: a fix fails until removed
KNOWN_MXNET_MISMATCHES = {
}


@pytest.mark.parametrize("name", RECORDED)
def test_dense_row_matches_mxnet(name):
    keys = [k for k, m in _META.items() if m["name"] == name]
    if name in KNOWN_MXNET_MISMATCHES:
        try:
            check_against_mxnet(mx.ops.get_op(name), keys)
        except AssertionError:
            pytest.xfail(KNOWN_MXNET_MISMATCHES[name])
        pytest.fail(f"{name} now matches MXNet: remove it from KNOWN_MXNET_MISMATCHES")
    check_against_mxnet(mx.ops.get_op(name), keys)


def test_every_forward_op_has_an_independent_reference():
    forward = {op.name for op in _unique_ops()
               if not op.name.startswith(("_backward", "_contrib_backward"))
               and (op.name.startswith("_random_pdf_") or not op.name.startswith(RANDOM))}
    missing = sorted(forward - set(RECORDED) - set(NO_MXNET_REFERENCE))
    assert not missing, (f"no MXNet record for {missing}: add sweep cases "
                         "(tests/ops/sweep_cases.py) and rerun make_mxnet_sweep_fixtures.py")
    assert not set(NO_MXNET_REFERENCE) & set(RECORDED)


def _scratch_op(monkeypatch, name, **rows):
    """A copy of ``name``'s record with some rows replaced, in a scratch registry."""
    import dataclasses

    from sparsym.ops.core import registry
    op = mx.ops.get_op(name)
    dispatch = list(op.dispatch)
    for i, kernel in rows.items():
        dispatch[int(i[1:])] = dataclasses.replace(dispatch[int(i[1:])], kernel=kernel)
    bad = dataclasses.replace(op, dispatch=tuple(dispatch))
    monkeypatch.setattr(registry, "_OPS", {**registry._OPS, name: bad})
    return mx.ops.get_op(name)


def test_the_sweep_fails_on_a_wrong_value(monkeypatch):
    add = mx.ops.get_op("elemwise_add")
    sparse = next(i for i, r in enumerate(add.dispatch) if r.ins == (CSR, CSR))

    def off_by_a_little(attrs, xs):
        return (xs[0] + xs[1] + np.float32(1e-2),)

    def drops_rhs(attrs, xs):
        return (xs[0].copy(),)
    # a wrong dense kernel: MXNet's recorded values catch it (its own sparse rows would not)
    bad = _scratch_op(monkeypatch, "elemwise_add", r0=off_by_a_little)
    assert bad is not add and bad.dispatch[0].kernel is off_by_a_little
    keys = [k for k, m in _META.items() if m["name"] == "elemwise_add"]
    with pytest.raises(AssertionError, match="vs MXNet"):
        check_against_mxnet(bad, keys)
    # a wrong sparse kernel: the densified comparison with the dense row catches it
    bad = _scratch_op(monkeypatch, "elemwise_add", **{f"r{sparse}": drops_rhs})
    with pytest.raises(AssertionError, match="Mismatched"):
        _sweep_row("elemwise_add", sparse, bad, bad.dispatch[sparse])
    check_against_mxnet(add, keys)   # the registered op is untouched
