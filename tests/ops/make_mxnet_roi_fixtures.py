"""Record MXNet 1.9.1's ROIAlign (outputs and data gradients) and RROIAlign (outputs) into
tests/fixtures/mxnet/roi_align.npz:

    ~/mxref/bin/python tests/ops/make_mxnet_roi_fixtures.py
"""
import json
import os

import mxnet as mx
import numpy as np

CASES = [dict(pooled_size=(2, 3), spatial_scale=1.0),
         dict(pooled_size=(3, 2), spatial_scale=0.5, sample_ratio=2),
         dict(pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True),
         dict(pooled_size=(2, 3), spatial_scale=0.5, aligned=True)]
RCASES = [dict(pooled_size=(2, 3), spatial_scale=1.0),
          dict(pooled_size=(3, 2), spatial_scale=0.5, sampling_ratio=2)]
rng = np.random.RandomState(0)
data = rng.rand(3, 12, 10, 9)
# ordinary ROIs, one past the borders, one thinner than a pixel
rois = np.array([[0, 1.1, 1.1, 6.2, 6.2], [2, 6.1, 2.1, 8.2, 11.2], [1, 3.1, 1.1, 5.2, 10.2],
                 [1, -3, -2, 30, 40], [0, 5, 5, 5.2, 5.1]])
out = {"data": data, "rois": rois}
for i, params in enumerate(CASES):
    d = mx.nd.array(data, dtype="float64")
    d.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.ROIAlign(d, mx.nd.array(rois, dtype="float64"), **params)
    og = rng.randn(*y.shape)
    y.backward(mx.nd.array(og, dtype="float64"))
    out[f"{i}/out"], out[f"{i}/ograd"], out[f"{i}/grad"] = y.asnumpy(), og, d.grad.asnumpy()
# rotated boxes [batch, cx, cy, w, h, degrees]
rrois = np.array([[0, 4, 4, 5, 3, 30], [2, 6.1, 2.1, 8.2, 11.2, -45], [1, 3.1, 1.1, 5.2, 10.2, 90],
                  [1, 0, 0, 30, 40, 10], [0, 5, 5, 0.2, 0.1, 0]])
out["rrois"] = rrois
for i, params in enumerate(RCASES):
    out[f"r{i}/out"] = mx.nd.contrib.RROIAlign(mx.nd.array(data, dtype="float64"),
                                               mx.nd.array(rrois, dtype="float64"),
                                               **params).asnumpy()
out["meta"] = np.array(json.dumps(CASES))
out["rmeta"] = np.array(json.dumps(RCASES))
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                 "mxnet", "roi_align.npz"), **out)
