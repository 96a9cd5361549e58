"""NDArray front end: ``mx.nd.*`` (generated from the op registry) and ``mx.nd.sparse``."""
import types as _types

from .. import ops as _ops  # noqa: F401  (registers every operator)
from ..base import install_engine_internal_ops as _install_engine_internal_ops
from . import indexing, pickling, sparse  # noqa: F401  (they hand NDArray its methods)
from .ndarray import (NDArray, array, arange, concatenate, empty, full, moveaxis,  # noqa: F401
                      ones, waitall, zeros)
from .op import populate as _populate
from .sparse import CSRNDArray, RowSparseNDArray  # noqa: F401
from .utils import load, load_frombuffer, save  # noqa: F401
from .interop import from_dlpack, from_numpy, to_dlpack_for_read, to_dlpack_for_write  # noqa: F401

_populate(globals())
_populate(sparse.__dict__, sparse=True)
sparse.__dict__.update({"csr_matrix": sparse.csr_matrix, "row_sparse_array":
                        sparse.row_sparse_array, "zeros": sparse.zeros, "empty": sparse.empty,
                        "array": sparse.array})
from .ufuncs import (add, divide, equal, greater, greater_equal, hypot,  # noqa: F401,E402
                     lesser, lesser_equal, logical_and, logical_or, logical_xor, maximum,
                     minimum, modulo, multiply, not_equal, onehot_encode, power, subtract,
                     true_divide)
from . import random  # noqa: F401,E402  (mx.nd.random)
from . import contrib  # noqa: F401,E402  (mx.nd.contrib)
from . import linalg  # noqa: F401,E402  (mx.nd.linalg)
from . import image  # noqa: F401,E402  (mx.nd.image)
from .ufuncs import eye, histogram, linspace, split_v2  # noqa: F401,E402

# mx.nd._internal: every registered op under its own name, as in MXNet
_internal = _types.ModuleType("sparsym.ndarray._internal", "All operators by registered name.")
_populate(_internal.__dict__)
_install_engine_internal_ops(_internal.__dict__)
