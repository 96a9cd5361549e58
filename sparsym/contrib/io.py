"""``mx.contrib.io``: a Gluon DataLoader as a Module DataIter."""
from __future__ import annotations

from .. import ndarray as nd
from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Batches of a ``gluon.data.DataLoader`` as a :class:`~sparsym.io.DataIter`, so Module
    code can train on a Gluon data pipeline.

    The loader must yield ``(data, label)`` pairs. A short last batch is padded to the
    batch size (``getpad`` says by how much), as Module expects.

    Parameters
    ----------
    loader : gluon.data.DataLoader
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
        The dtype data and labels are cast to.
    """

    def __init__(self, loader, data_name="data", label_name="softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        first = next(iter(loader), None)
        if not isinstance(first, (list, tuple)) or len(first) != 2:
            got = ("no batch" if first is None else f"{len(first)} arrays"
                   if isinstance(first, (list, tuple)) else type(first).__name__)
            raise ValueError(f"DataLoaderIter: the loader must yield (data, label) batches, "
                             f"got {got}")
        data, label = first
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        self._current_batch = next(self._iter, None)
        return self._current_batch is not None

    def _padded(self, arr):
        arr = arr.astype(self.dtype)
        if arr.shape[0] == self.batch_size:
            return [arr]
        out = nd.zeros((self.batch_size,) + tuple(arr.shape[1:]), dtype=self.dtype)
        out[:arr.shape[0]] = arr
        return [out]

    def getdata(self):
        return self._padded(self._current_batch[0])

    def getlabel(self):
        return self._padded(self._current_batch[1])

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
