"""Module.fit with row_sparse weights on a kvstore, then score/predict: the executors'
weights must hold every row a batch reads, whatever was pulled for the last batch.

Expected values come from MXNet 1.9.1 (tests/fixtures/mxnet/fm_fit.npz, written by
make_mxnet_fm_fit_fixtures.py running fm_fit_cases.py on the oracle)."""
from pathlib import Path

import numpy as np
import pytest
from fm_fit_cases import NF, batch_row_ids, fit, fresh_predict

import sparsym as mx

REC = np.load(Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "fm_fit.npz")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return {mode: fit(mx, str(tmp_path_factory.mktemp(mode)), mode)
            for mode in ("kv_fn", "kv", "local")}


@pytest.mark.parametrize("mode", ["kv_fn", "kv", "local"])
def test_fm_predict_and_score_equal_a_fresh_module(trained, mode):
    mod, val = trained[mode]
    pred = mod.predict(val).asnumpy()
    mse = dict(mod.score(val, "mse"))["mse"]
    fresh, fresh_mse = fresh_predict(mx, mod, val)
    assert np.abs(pred - fresh).max() < 1e-6
    assert abs(mse - fresh_mse) < 1e-6
    # every mode trains as MXNet 1.9.1 does with sparse_row_id_fn (or without a store)
    np.testing.assert_allclose(pred, REC["kv_fn_predict"], atol=1e-4)
    np.testing.assert_allclose(pred, REC["local_predict"], atol=1e-4)
    assert abs(mse - float(REC["kv_fn_mse"])) < 1e-5


def test_mxnet_record_is_consistent():
    # MXNet's own predict after fit equals its fresh Module (the behaviour matched here)
    np.testing.assert_allclose(REC["kv_fn_predict"], REC["kv_fn_fresh"], atol=1e-6)


def test_forward_of_an_unprepared_batch_reads_every_row(trained):
    mod, val = trained["kv_fn"]
    fresh, _ = fresh_predict(mx, mod, val)
    val.reset()
    first, second = next(val), next(val)
    # pull only the first batch's rows, then run the second batch: its rows must be there
    mod.prepare(first, sparse_row_id_fn=batch_row_ids)
    held = mod._exec_group.param_arrays[mod._exec_group.param_names.index("v")][0]
    assert len(held.indices) < NF
    mod.forward(second, is_train=False)
    out = mod.get_outputs()[0].asnumpy()
    np.testing.assert_allclose(out, fresh[16:32], atol=1e-6)
    # a prepared batch runs on the rows pulled for it
    mod.prepare(first, sparse_row_id_fn=batch_row_ids)
    mod.forward(first, is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), fresh[:16], atol=1e-6)


def test_square_sum_gradient_keeps_the_rows_of_a_row_sparse_ograd():
    # dot(csr, square_sum(v)) sends a row_sparse ograd: MXNet 1.9.1's v gradient holds
    # only the batch's feature rows (12 of 60 here), not every stored row of v
    x = mx.sym.Variable("data", stype="csr")
    v = mx.sym.Variable("v", shape=(NF, 3), stype="row_sparse")
    vs = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    loss = mx.sym.MakeLoss(mx.sym.sum(mx.sym.dot(x, vs)))
    rng = np.random.RandomState(0)
    xx = np.zeros((4, NF), np.float32)
    for i in range(4):
        xx[i, rng.choice(NF, 4, replace=False)] = 1
    exe = loss.simple_bind(mx.cpu(), data=(4, NF), stype_dict={"data": "csr", "v": "row_sparse"},
                           grad_req={"v": "write", "data": "null"})
    v0 = rng.randn(NF, 3).astype(np.float32)
    exe.copy_params_from({"v": mx.nd.array(v0).tostype("row_sparse")})
    exe.forward(is_train=True, data=mx.nd.array(xx).tostype("csr"))
    exe.backward()
    g = exe.grad_dict["v"]
    cols = np.unique(np.nonzero(xx)[1])
    assert g.stype == "row_sparse" and len(cols) == 12
    np.testing.assert_array_equal(g.indices.asnumpy(), cols)
    want = 2 * v0 * xx.sum(0)[:, None]
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6)

