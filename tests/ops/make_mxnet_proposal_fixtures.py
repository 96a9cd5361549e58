"""Record MXNet 1.9.1's Proposal / MultiProposal into tests/fixtures/mxnet/proposal.npz:

    ~/mxref/bin/python tests/ops/make_mxnet_proposal_fixtures.py
"""
import json
import os

import mxnet as mx
import numpy as np

CASES = [dict(),
         dict(rpn_pre_nms_top_n=100, rpn_post_nms_top_n=30, threshold=0.5, rpn_min_size=8),
         dict(iou_loss=True, rpn_post_nms_top_n=40),
         dict(rpn_post_nms_top_n=500, threshold=0.3)]   # fewer survivors: outputs repeat
rng = np.random.RandomState(0)
cls = rng.rand(2, 18, 6, 7)
bbox = rng.randn(2, 36, 6, 7) * 0.3
info = np.array([[90, 100, 0.8], [64, 112, 1.0]])   # the 2nd image is shorter than the map
out = {"cls": cls, "bbox": bbox, "info": info}
for i, params in enumerate(CASES):
    params = dict(params, scales=(8, 16, 32), ratios=(0.5, 1, 2), output_score=True)
    CASES[i] = params
    r, s = mx.nd.contrib.MultiProposal(mx.nd.array(cls), mx.nd.array(bbox), mx.nd.array(info),
                                       **params)
    r1, s1 = mx.nd.contrib.Proposal(mx.nd.array(cls[1:]), mx.nd.array(bbox[1:]),
                                    mx.nd.array(info[1:]), **params)
    out[f"{i}/rois"], out[f"{i}/scores"] = r.asnumpy(), s.asnumpy()
    out[f"{i}/rois1"], out[f"{i}/scores1"] = r1.asnumpy(), s1.asnumpy()
out["meta"] = np.array(json.dumps(CASES))
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                 "mxnet", "proposal.npz"), **out)
