"""Block.summary prints MXNet 1.9.1's table (expected text probed on MXNet)."""
import pytest

import sparsym as mx
from sparsym import gluon
from sparsym.gluon import nn

EXPECTED = """\
--------------------------------------------------------------------------------
        Layer (type)                                Output Shape         Param #
================================================================================
               Input                                      (8, 3)               0
         Embedding-1                                  (8, 3, 30)            1200
              LSTM-2                                  (8, 3, 30)            7440
             Dense-3                                  (8, 3, 40)            1240
================================================================================
Parameters in forward computation graph, duplicate included
   Total params: 9880
   Trainable params: 9880
   Non-trainable params: 0
Shared params in forward computation graph: 1200
Unique parameters in model: 8680
--------------------------------------------------------------------------------
"""


def test_summary_counts_shared_parameters_once(capsys):
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Embedding(40, 30))
        net.add(gluon.rnn.LSTM(30))
        net.add(nn.Dense(40, flatten=False, params=net[0].params))
    net.initialize()
    net.summary(mx.nd.ones((8, 3)))
    assert capsys.readouterr().out == EXPECTED


def test_summary_of_states_and_hybridized_blocks(capsys):
    lstm = gluon.rnn.LSTM(30)
    lstm.initialize()
    lstm.summary(mx.nd.ones((8, 3, 5)), lstm.begin_state(3))
    out = capsys.readouterr().out
    assert "Input         (8, 3, 5), [(1, 3, 30), (1, 3, 30)]               0" in out
    assert "LSTM-1        (8, 3, 30), [(1, 3, 30), (1, 3, 30)]            4440" in out
    net = nn.HybridSequential()
    net.add(nn.Dense(3))
    net.initialize()
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized"):
        net.summary(mx.nd.ones((2, 2)))
