"""``mx.name``: :class:`NameManager` and :class:`Prefix`, which name unnamed symbols
(MXNet's module of the same name; the classes live in symbol/naming.py)."""
from .symbol.naming import NameManager, Prefix

__all__ = ["NameManager", "Prefix"]
