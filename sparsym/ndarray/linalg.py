"""``mx.nd.linalg``: imperative front ends of the ``_linalg_*`` operators (prefix dropped),
generated from the op registry: gemm, gemm2, potrf, potri, trsm, trmm, syrk, gelqf, syevd,
inverse, det, slogdet, sumlogdiag, extractdiag, makediag, extracttrian, maketrian."""
from ..ops.core.registry import all_ops as _all_ops
from .op import make_function as _make_function

_PREFIX = "_linalg_"

for _key, _op in _all_ops().items():
    if _key.startswith(_PREFIX):
        globals()[_key[len(_PREFIX):]] = _make_function(_key, _op)
del _key, _op
