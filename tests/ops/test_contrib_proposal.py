"""_contrib_Proposal / _contrib_MultiProposal against MXNet 1.9.1's outputs
(tests/fixtures/mxnet/proposal.npz, made by make_mxnet_proposal_fixtures.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx

REC = np.load(Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "proposal.npz")
CASES = json.loads(str(REC["meta"]))


def _params(p):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in p.items()}


@pytest.mark.parametrize("i", range(len(CASES)))
def test_proposals_match_mxnet(i):
    p = _params(CASES[i])
    cls, bbox, info = (mx.nd.array(REC[k]) for k in ("cls", "bbox", "info"))
    rois, scores = mx.nd.contrib.MultiProposal(cls, bbox, info, **p)
    np.testing.assert_allclose(rois.asnumpy(), REC[f"{i}/rois"], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(scores.asnumpy(), REC[f"{i}/scores"], rtol=1e-6)
    rois1, scores1 = mx.nd.contrib.Proposal(cls[1:], bbox[1:], info[1:], **p)
    np.testing.assert_allclose(rois1.asnumpy(), REC[f"{i}/rois1"], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(scores1.asnumpy(), REC[f"{i}/scores1"], rtol=1e-6)


def test_proposal_symbol_outputs_and_zero_gradient():
    names = ("cls_prob", "bbox_pred", "im_info")
    sym = mx.sym.contrib.MultiProposal(*[mx.sym.var(n) for n in names], scales=(8, 16, 32),
                                       rpn_post_nms_top_n=20)
    assert len(sym.list_outputs()) == 1  # the scores show only with output_score
    assert sym.infer_shape(cls_prob=(2, 18, 6, 7))[1] == [(40, 5)]
    exe = sym.bind(mx.cpu(), {k: mx.nd.array(REC[v]) for k, v in zip(names, ("cls", "bbox",
                                                                               "info"))},
                   args_grad={k: mx.nd.ones(REC[v].shape) for k, v in zip(
                       names, ("cls", "bbox", "info"))})
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((40, 5)))
    assert all(not g.asnumpy().any() for g in exe.grad_arrays)
    with pytest.raises(mx.MXNetError, match="batch size 1"):
        mx.sym.contrib.Proposal(*[mx.sym.var(n) for n in names], scales=(8, 16, 32)).infer_shape(
            cls_prob=(2, 18, 6, 7))
