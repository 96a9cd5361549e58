"""Contributed recurrent cells (mx.gluon.contrib.rnn)."""
from ...rnn.rnn_cell import LSTMPCell  # noqa: F401
from .conv_rnn_cell import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403
