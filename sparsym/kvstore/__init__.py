"""Key-value stores: 'local'/'device' here, 'dist_*' on Ray (sparsym.kvstore.dist)."""
from .base import KVStoreBase, create  # noqa: F401
from .local import KVStore  # noqa: F401
from .kvstore_server import KVStoreServer  # noqa: F401
from . import base, kvstore, kvstore_server  # noqa: F401
from . import dist  # noqa: F401  (installs the dist_* stores in base)
