"""Record mxnet_nn_loss.json with MXNet 1.9.1:

    ~/mxref/bin/python tests/ops/make_mxnet_loss_fixtures.py
"""
import json
import os
import sys

import mxnet as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nn_loss_cases import other_cases, softmax_cases  # noqa: E402

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_nn_loss.json"),
          "w") as f:
    json.dump({"softmax": softmax_cases(mx), "other": other_cases(mx),
               "mxnet": mx.__version__}, f)
