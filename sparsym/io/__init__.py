"""Data iterators (mx.io)."""
from .io import DataBatch, DataDesc, DataIter, NDArrayIter  # noqa: F401
