"""Gluon: MXNet 1.x's imperative front end (Blocks, Parameters, Trainer, layers, data)."""
from . import parameter  # noqa: F401
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict  # noqa
from . import block  # noqa: F401
from .block import Block, HybridBlock  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from . import nn  # noqa: F401
from . import utils  # noqa: F401
from . import loss  # noqa: F401
from . import data  # noqa: F401
from . import rnn  # noqa: F401
from . import contrib  # noqa: F401
from .trainer import Trainer  # noqa: F401
from . import model_zoo  # noqa: F401
from ..ndarray.ndarray import NDArray as _NDArray
from ..symbol import Symbol as _Symbol

# what a Block takes as its inputs (MXNet's gluon.tensor_types)
tensor_types = (_Symbol, _NDArray)
