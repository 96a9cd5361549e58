"""``mx.nd.image``: imperative front ends of the ``_image_*`` operators (prefix dropped):
to_tensor, normalize, crop, resize, flips and the colour jitters (sparsym/ops/image/image.py)."""
from ..ops.core.registry import all_ops as _all_ops
from .op import make_function as _make_function

_PREFIX = "_image_"


def _populate(namespace):
    for key, op in _all_ops().items():
        if key.startswith(_PREFIX):
            namespace[key[len(_PREFIX):]] = _make_function(key, op)


_populate(globals())
