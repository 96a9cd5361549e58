"""``mx.rnn``: symbolic RNN cells, bucketing sentence iterator and RNN checkpoints."""
from .conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell  # noqa: F401
from .io import BucketSentenceIter, encode_sentences  # noqa: F401
from .modifier import ModifierCell, ResidualCell, ZoneoutCell  # noqa: F401
from .rnn import (do_rnn_checkpoint, load_rnn_checkpoint, rnn_unroll,  # noqa: F401
                  save_rnn_checkpoint)
# names MXNet's mx.rnn namespace carries along (its modules import them)
from .. import initializer as init  # noqa: F401,E402
from .. import ndarray, symbol  # noqa: F401,E402
from ..io import DataBatch, DataDesc, DataIter  # noqa: F401,E402
from ..checkpoint import load_checkpoint, save_checkpoint  # noqa: F401,E402
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
