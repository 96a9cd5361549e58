"""_contrib_ROIAlign against MXNet 1.9.1's outputs and data gradients, _contrib_RROIAlign
against its outputs (tests/fixtures/mxnet/roi_align.npz, made by make_mxnet_roi_fixtures.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx

REC = np.load(Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "roi_align.npz")
CASES = json.loads(str(REC["meta"]))
RCASES = json.loads(str(REC["rmeta"]))


@pytest.mark.parametrize("i", range(len(CASES)))
def test_roi_align_matches_mxnet(i):
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in CASES[i].items()}
    data = mx.nd.array(REC["data"], dtype=np.float64)
    rois = mx.nd.array(REC["rois"], dtype=np.float64)
    data.attach_grad()
    rois.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.ROIAlign(data, rois, **params)
    y.backward(mx.nd.array(REC[f"{i}/ograd"], dtype=np.float64))
    np.testing.assert_allclose(y.asnumpy(), REC[f"{i}/out"], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(data.grad.asnumpy(), REC[f"{i}/grad"], rtol=1e-6, atol=1e-9)
    assert not rois.grad.asnumpy().any()  # no gradient for the ROI coordinates (MXNet)


def test_roi_align_shapes_and_errors():
    sym = mx.sym.contrib.ROIAlign(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(2, 2),
                                  spatial_scale=1.0, position_sensitive=True)
    assert sym.infer_shape(d=(2, 8, 5, 5), r=(3, 5))[1] == [(3, 2, 2, 2)]
    with pytest.raises(mx.MXNetError, match="divisible"):
        sym.infer_shape(d=(2, 6, 5, 5), r=(3, 5))
    with pytest.raises(mx.MXNetError, match="pooled_size"):
        mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((1, 5)),
                               pooled_size=(0, 2), spatial_scale=1.0)


@pytest.mark.parametrize("i", range(len(RCASES)))
def test_rroi_align_matches_mxnet(i):
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in RCASES[i].items()}
    y = mx.nd.contrib.RROIAlign(mx.nd.array(REC["data"], dtype=np.float64),
                                mx.nd.array(REC["rrois"], dtype=np.float64), **params)
    np.testing.assert_allclose(y.asnumpy(), REC[f"r{i}/out"], rtol=1e-6, atol=1e-9)


def test_rroi_align_has_no_gradient():
    sym = mx.sym.contrib.RROIAlign(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(2, 2),
                                   spatial_scale=1.0)
    assert sym.infer_shape(d=(1, 3, 6, 6), r=(4, 6))[1] == [(4, 3, 2, 2)]
    with pytest.raises(mx.MXNetError, match="non-differentiable"):
        sym.simple_bind(mx.cpu(), d=(1, 3, 6, 6), r=(4, 6))
