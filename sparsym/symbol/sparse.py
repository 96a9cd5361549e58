"""``mx.sym.sparse``: symbol front ends of the sparse operators (``_sparse_*`` without the
prefix, e.g. ``mx.sym.sparse.dot``, ``retain``, ``cast_storage``), generated from the op
registry like ``mx.sym``."""
from .op import populate as _populate
from .symbol import Variable, var  # noqa: F401

_populate(globals(), sparse=True)
