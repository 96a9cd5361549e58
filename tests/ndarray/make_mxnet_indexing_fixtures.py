"""Record MXNet 1.9.1's indexing results of indexing_cases.py into mxnet_indexing.json:

    ~/mxref/bin/python tests/ndarray/make_mxnet_indexing_fixtures.py
"""
import json
import os
import sys

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from indexing_cases import run  # noqa: E402

with open(os.path.join(HERE, "mxnet_indexing.json"), "w") as f:
    json.dump(run(mx), f, indent=0, sort_keys=True)
