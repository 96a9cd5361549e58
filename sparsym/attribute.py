"""``mx.attribute``: :class:`AttrScope`, the scope whose attributes every symbol created
inside it receives (MXNet's module of the same name; the class lives in symbol/naming.py)."""
from .symbol.naming import AttrScope

__all__ = ["AttrScope"]
