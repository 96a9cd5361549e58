"""Symbol front end: ``mx.sym.*`` (generated from the op registry) and ``mx.sym.sparse``."""
import types as _types

from .. import ops as _ops  # noqa: F401
from ..base import install_engine_internal_ops as _install_engine_internal_ops
from .op import populate as _populate
from .symbol import (  # noqa: F401
    Group,
    NotImplementedForSymbol,
    Symbol,
    Variable,
    load,
    load_json,
    var,
)

_populate(globals())
from . import sparse  # noqa: F401,E402  (mx.sym.sparse)
from .arith import hypot, maximum, minimum, pow, power  # noqa: F401,E402,A004
from . import contrib  # noqa: F401,E402  (mx.sym.contrib)
from . import linalg  # noqa: F401,E402  (mx.sym.linalg)
from . import image  # noqa: F401,E402  (mx.sym.image)
from .creation import arange, full, ones, random, zeros  # noqa: F401,E402
from .ufuncs import eye, histogram, linspace, split_v2  # noqa: F401,E402

# mx.sym._internal: every registered op under its own name (MXNet scripts call
# mx.sym._internal._square_sum and friends)
_internal = _types.ModuleType("sparsym.symbol._internal", "All operators by registered name.")
_populate(_internal.__dict__)
_install_engine_internal_ops(_internal.__dict__)
