"""Datasets: indexable collections of samples."""
from __future__ import annotations

import os

from ... import recordio
from ...ndarray.ndarray import NDArray
from . import sampler as _sampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Base class: ``__getitem__`` and ``__len__``, plus lazy views over them."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true."""
        return _SampledDataset(self, _sampler.FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Shard ``index`` of ``num_shards`` contiguous, near-equal parts."""
        assert index < num_shards, f"Shard index of out bound: {index} out of {num_shards}"
        assert num_shards > 0, "Number of shards must be greater than 0"
        assert index >= 0, "Index must be non-negative"
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        return _SampledDataset(self, _sampler.SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all when None or larger than the dataset)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, _sampler.SequentialSampler(count))

    def sample(self, sampler):
        """The samples in ``sampler``'s order."""
        if not isinstance(sampler, _sampler.Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected "
                            "gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Samples mapped through ``fn`` (tuples are unpacked into its arguments)."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([i for i in trans])

    def transform_first(self, fn, lazy=True):
        """Map only the first element of each sample through ``fn``."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A Dataset over any indexable object (a list, an array...)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """Apply ``fn`` to the first element (a picklable closure, for worker processes)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Zip arrays of equal length into a Dataset of tuples (one array: its items).

    Parameters
    ----------
    *args : NDArray (dense or csr), numpy arrays or lists
    """

    def __init__(self, *args):
        assert len(args) > 0, "Needs at least 1 arrays"
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            assert len(data) == self._length, (
                f"All arrays must have the same length; array[0] has length {self._length} "
                f"while array[{i + 1}] has {len(data)}.")
            if isinstance(data, NDArray) and data.stype == "default" and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The raw records (bytes) of a RecordIO file, read through its index.

    Parameters
    ----------
    filename : str
        The .rec file; its index is the same name ending in .idx (``MXIndexedRecordIO``).
        A missing, truncated or foreign file raises ``FormatError``/``MXNetError`` naming it.

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsym as mx
    >>> d = tempfile.mkdtemp()
    >>> w = mx.recordio.MXIndexedRecordIO(os.path.join(d, "a.idx"), os.path.join(d, "a.rec"), "w")
    >>> for i in range(3):
    ...     w.write_idx(i, b"record %d" % i)
    >>> w.close()
    >>> ds = mx.gluon.data.RecordFileDataset(os.path.join(d, "a.rec"))
    >>> len(ds), ds[1]
    (3, b'record 1')
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
