"""Operator records. Importing this package registers every operator family."""
from . import registry  # noqa: F401
from . import elemwise, dot, loss  # noqa: F401
from . import sparse_ops  # noqa: F401
from .registry import get_op, all_ops, register, Dispatch, OpDef  # noqa: F401
