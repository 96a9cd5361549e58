"""Key-value stores: 'local'/'device' here, 'dist_*' on Ray (sparsym.kvstore.dist)."""
from .local import KVStore, create  # noqa: F401
