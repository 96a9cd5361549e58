"""``mx.error``: MXNet's structured error classes and their registration."""
from __future__ import annotations

from .base import MXNetError, register_error

__all__ = ["MXNetError", "InternalError", "register", "register_error"]

#: register an error class by name (MXNet's ``mx.error.register``)
register = register_error


@register_error
class InternalError(MXNetError):
    """An internal error of the engine (its message gets MXNet's hint to report it).

    Examples
    --------
    >>> import sparsym as mx
    >>> "MXNet hint" in str(mx.error.InternalError("bad state"))
    True
    """

    def __init__(self, msg):
        if "MXNet hint:" not in msg:
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue in "
                    "https://github.com/apache/incubator-mxnet/issues/new/choose to report it.")
        super().__init__(msg)
