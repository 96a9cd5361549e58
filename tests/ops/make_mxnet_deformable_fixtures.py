"""Record MXNet 1.9.1's deformable convolutions (forward; DCN v1's gradients too: MXNet's CPU
build has no DCN v2 backward) into tests/fixtures/mxnet/deformable_conv.npz:

    ~/mxref/bin/python tests/ops/make_mxnet_deformable_fixtures.py
"""
import json
import os

import mxnet as mx
import numpy as np

CASES = [  # (modulated, n, c, h, w, filters, groups, deformable groups, kernel, stride, pad,
           #  dilate, no_bias)
    (True, 2, 4, 5, 6, 4, 1, 1, (3, 3), (1, 1), (1, 1), (1, 1), False),
    (True, 1, 4, 6, 5, 6, 2, 2, (3, 3), (1, 1), (2, 2), (2, 2), True),
    (False, 2, 4, 7, 6, 4, 1, 2, (3, 2), (2, 1), (1, 0), (1, 1), False),
]
rng = np.random.RandomState(0)
out, meta = {}, []
for i, (mod, n, c, h, w, f, g, dg, k, s, p, d, nob) in enumerate(CASES):
    kk = k[0] * k[1]
    ho = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    wo = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    vals = [rng.rand(n, c, h, w), rng.rand(n, 2 * dg * kk, ho, wo) * 1.6 - 0.8]
    if mod:
        vals.append(rng.rand(n, dg * kk, ho, wo))
    vals.append(rng.randn(f, c // g, *k) * 0.5)
    if not nob:
        vals.append(rng.randn(f))
    params = dict(kernel=k, stride=s, pad=p, dilate=d, num_filter=f, num_group=g,
                  num_deformable_group=dg, no_bias=nob)
    arrs = [mx.nd.array(v, dtype="float64") for v in vals]
    for a in arrs:
        a.attach_grad()
    fn = mx.nd.contrib.ModulatedDeformableConvolution if mod else \
        mx.nd.contrib.DeformableConvolution
    with mx.autograd.record():
        y = fn(*arrs, **params)
    og = rng.randn(*y.shape)
    for j, v in enumerate(vals):
        out[f"{i}/in{j}"] = v
    out[f"{i}/out"] = y.asnumpy()
    if not mod:
        y.backward(mx.nd.array(og, dtype="float64"))
        out[f"{i}/ograd"] = og
        for j, a in enumerate(arrs):
            out[f"{i}/grad{j}"] = a.grad.asnumpy()
    meta.append({"modulated": mod, "n_in": len(vals), "params": params})
out["meta"] = np.array(json.dumps(meta))
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                 "mxnet", "deformable_conv.npz"), **out)
