"""Write MXNet 1.9.1 optimizer-state files and the runs resumed from them, with the MXNet
1.9.1 interpreter:

    ~/mxref/bin/python tests/optimizer/make_mxnet_states_fixtures.py

Into tests/fixtures/mxnet/optstates/: ``trainer_{adam,sgd}.states`` (Trainer.save_states: a
pickle of the states and the optimizer) with ``.params``, ``module_{adam,sgd}-0002.states``
(Module.save_checkpoint: a pickle of the states) with the checkpoint, and ``resumed.npz``:
the weights after each of two steps resumed on MXNet (keys ``trainer_<opt>``,
``module_<opt>``)."""
import os
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mxnet_states_cases import (  # noqa: E402
    OPTIMIZERS,
    resume_module,
    resume_trainer,
    train_module,
    train_trainer,
)

OUT = os.path.join(HERE, "..", "fixtures", "mxnet", "optstates")
os.makedirs(OUT, exist_ok=True)
rec = {}
for opt in OPTIMIZERS:
    train_trainer(mx, opt, OUT)
    train_module(mx, opt, OUT)
    rec[f"trainer_{opt}"] = resume_trainer(mx, opt, OUT)
    rec[f"module_{opt}"] = resume_module(mx, opt, OUT)
np.savez(os.path.join(OUT, "resumed.npz"), **rec)
print(sorted(os.listdir(OUT)))
