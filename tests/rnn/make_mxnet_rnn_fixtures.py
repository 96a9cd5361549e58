"""Record mxnet_rnn.json with MXNet 1.9.1:

    ~/mxref/bin/python tests/rnn/make_mxnet_rnn_fixtures.py
"""
import json
import os
import sys

import mxnet as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rnn_cases import cell_cases, fused_cases, rnn_op_cases  # noqa: E402

out = {"cells": cell_cases(mx), "fused": fused_cases(mx), "rnn_op": rnn_op_cases(mx),
       "mxnet": mx.__version__}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_rnn.json"), "w") as f:
    json.dump(out, f)
