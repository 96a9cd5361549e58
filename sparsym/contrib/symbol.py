"""``mx.contrib.symbol``: the contributed operators' Symbol front ends, the same module as
``mx.sym.contrib`` (importing either gives one module object)."""
import sys as _sys

from ..symbol import contrib as _contrib

_sys.modules[__name__] = _contrib
