"""``mx.contrib.amp``: automatic mixed precision (MXNet 1.9.1's API).

``from mxnet.contrib.amp import amp`` and ``mx.contrib.amp.init()`` work as in MXNet: see
:mod:`sparsym.contrib.amp.amp` for what runs on sparsym's CPU kernels.
"""
from .amp import *  # noqa: F401,F403
from . import amp, lists  # noqa: F401
from .loss_scaler import LossScaler  # noqa: F401
