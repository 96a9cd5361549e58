"""Record MXNet 1.9.1's factorization machine after Module.fit (fm_fit_cases.py) into
tests/fixtures/mxnet/fm_fit.npz: run with the MXNet 1.9.1 interpreter,

    ~/mxref/bin/python tests/module/make_mxnet_fm_fit_fixtures.py

Keys: ``<mode>_predict`` (mod.predict(val) after fit), ``<mode>_mse`` (mod.score) and
``<mode>_fresh`` (a new inference Module given get_params()), for modes kv_fn and local."""
import os
import sys
import tempfile

import mxnet as mx
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fm_fit_cases import fit, fresh_predict  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "mxnet",
                   "fm_fit.npz")

rec = {}
for mode in ("kv_fn", "local"):
    with tempfile.TemporaryDirectory() as d:
        mod, val = fit(mx, d, mode)
        rec[mode + "_predict"] = mod.predict(val).asnumpy()
        rec[mode + "_mse"] = np.float64(dict(mod.score(val, "mse"))["mse"])
        rec[mode + "_fresh"] = fresh_predict(mx, mod, val)[0]
np.savez(OUT, **rec)
print("wrote", OUT, {k: v.shape for k, v in rec.items()})
