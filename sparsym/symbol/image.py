"""``mx.sym.image``: symbolic front ends of the ``_image_*`` operators (prefix dropped)."""
from ..ops.core.registry import all_ops as _all_ops
from .op import make_function as _make_function

_PREFIX = "_image_"


def _populate(namespace):
    for key, op in _all_ops().items():
        if key.startswith(_PREFIX):
            pub = key[len(_PREFIX):]
            namespace[pub] = _make_function(key, op, hint=pub.lower())


_populate(globals())
