"""``mx.rnn``: symbolic RNN cells, bucketing sentence iterator and RNN checkpoints."""
from .conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell  # noqa: F401
from .io import BucketSentenceIter, encode_sentences  # noqa: F401
from .modifier import ModifierCell, ResidualCell, ZoneoutCell  # noqa: F401
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint  # noqa: F401
from .rnn_cell import (  # noqa: F401
    BaseRNNCell,
    BidirectionalCell,
    DropoutCell,
    FusedRNNCell,
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNParams,
    SequentialRNNCell,
)
