"""MXNet's ``mxnet.kvstore.kvstore`` module: the built-in KVStore class and ``create``."""
from .base import create  # noqa: F401
from .local import KVStore  # noqa: F401

__all__ = ["KVStore", "create"]
