"""``mx.sym.linalg``: symbolic front ends of the ``_linalg_*`` operators (prefix dropped),
generated from the op registry; node names default to the public name (``gemm20``)."""
from ..ops.core.registry import all_ops as _all_ops
from .op import make_function as _make_function

_PREFIX = "_linalg_"

for _key, _op in _all_ops().items():
    if _key.startswith(_PREFIX):
        globals()[_key[len(_PREFIX):]] = _make_function(_key, _op,
                                                        hint=_key[len(_PREFIX):].lower())
del _key, _op
