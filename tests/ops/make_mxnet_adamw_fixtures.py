"""Record MXNet 1.9.1's AdamW updates of adamw_rescale_cases.py into mxnet_adamw_rescale.json:

    ~/mxref/bin/python tests/ops/make_mxnet_adamw_fixtures.py

Keys ``<variant>_<rescale>``: the weight (float32), mean and var after the update."""
import json
import os
import sys

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from adamw_rescale_cases import RESCALES, VARIANTS, run  # noqa: E402

rec = {f"{v}_{r}": [a.tolist() for a in run(mx, v, r)] for v in VARIANTS for r in RESCALES}
with open(os.path.join(HERE, "mxnet_adamw_rescale.json"), "w") as f:
    json.dump(rec, f)
