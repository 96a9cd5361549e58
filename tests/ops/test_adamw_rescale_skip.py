"""AdamW updates with rescale_grad given as an NDArray: 0, inf and nan skip the update
(weight, mean and var unchanged: AMP's loss scaler skips a step so), other values update;
every variant against MXNet 1.9.1's values (mxnet_adamw_rescale.json, written by
make_mxnet_adamw_fixtures.py from adamw_rescale_cases.py)."""
import json
import os

import numpy as np
import pytest
from adamw_rescale_cases import RESCALES, VARIANTS, inputs, run

import sparsym as mx

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "mxnet_adamw_rescale.json")) as _f:
    REC = json.load(_f)


@pytest.mark.parametrize("rescale", RESCALES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_adamw_rescale_grad_ndarray_matches_mxnet(variant, rescale):
    got = run(mx, variant, rescale)
    want = [np.array(a, np.float32) for a in REC[f"{variant}_{rescale}"]]
    tol = 1e-3 if "mp" in variant else 1e-6  # float16 weights
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=tol)
    w0, _, m0, v0 = inputs()
    skipped = rescale == 0 or not np.isfinite(rescale)
    assert (np.abs(got[0] - w0).max() < tol) == skipped
    if skipped:
        np.testing.assert_array_equal(got[1], m0)
        np.testing.assert_array_equal(got[2], v0)
