"""``mx.contrib.ndarray``: the contributed operators' NDArray front ends, the same module as
``mx.nd.contrib`` (importing either gives one module object)."""
import sys as _sys

from ..ndarray import contrib as _contrib

_sys.modules[__name__] = _contrib
