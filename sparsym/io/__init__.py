"""Data iterators (mx.io)."""
from .io import DataBatch, DataDesc, DataIter, NDArrayIter  # noqa: F401
from .text_iters import CSVIter, LibSVMIter  # noqa: F401
from .wrappers import PrefetchingIter, ResizeIter  # noqa: F401
