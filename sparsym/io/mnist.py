"""MNISTIter: batches from MNIST's idx-ubyte files (plain or gzip-compressed)."""
from __future__ import annotations

import gzip
import logging
import os

import numpy as np

from ..base import FormatError, MXNetError, ParamError
from ..ndarray.ndarray import wrap
from ..ops.core.params import Field, Params
from .io import DataDesc, MXDataIter

__all__ = ["MNISTIter"]

_PARAMS = Params(
    image=Field("str", "./train-images-idx3-ubyte", doc="Dataset Param: Mnist image path."),
    label=Field("str", "./train-labels-idx1-ubyte", doc="Dataset Param: Mnist label path."),
    batch_size=Field("int", 128, doc="Batch Param: Batch Size."),
    shuffle=Field("bool", True, doc="Augmentation Param: Whether to shuffle data."),
    flat=Field("bool", False, doc="Augmentation Param: Whether to flat the data into 1D."),
    seed=Field("int", 0, doc="Augmentation Param: Random Seed."),
    silent=Field("bool", False, doc="Auxiliary Param: Whether to print out data info."),
    num_parts=Field("int", 1, doc="partition the data into multiple parts"),
    part_index=Field("int", 0, doc="the index of the part will read"),
    prefetch_buffer=Field("int", 4, doc="Maximum number of batches to prefetch (ignored)."),
    ctx=Field("str", "gpu", choices=("cpu", "gpu"), doc="ignored: batches live on the CPU"),
    dtype=Field("dtype_or_none", None, doc="Output data type: only float32 (or None)."),
)
_IDX_MAGIC = {3: 2051, 1: 2049}  # idx3 (images), idx1 (labels): big-endian u32 headers


def _read_idx(path, ndim, what):
    """The uint8 array of an idx-ubyte file (gzip detected from its first bytes)."""
    if not os.path.isfile(path):
        raise MXNetError(f'MNISTIter: cannot open {what} file "{path}": No such file')
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        raw = f.read()
    head = 4 * (1 + ndim)
    if len(raw) < head:
        raise FormatError(f"MNISTIter: {what} file {path!r} is truncated ({len(raw)} bytes, "
                          f"the idx header alone has {head})")
    dims = np.frombuffer(raw, ">u4", count=1 + ndim)
    if int(dims[0]) != _IDX_MAGIC[ndim]:
        raise FormatError(f"MNISTIter: {what} file {path!r} is not an idx{ndim}-ubyte file "
                          f"(magic {int(dims[0])}, expected {_IDX_MAGIC[ndim]})")
    shape = tuple(int(d) for d in dims[1:])
    size = int(np.prod(shape))
    if len(raw) - head < size:
        raise FormatError(f"MNISTIter: {what} file {path!r} is truncated: header says "
                          f"{shape}, {len(raw) - head} bytes of data follow")
    return np.frombuffer(raw, np.uint8, count=size, offset=head).reshape(shape)


class MNISTIter(MXDataIter):
    """Iterating on the MNIST dataset (MXNet's ``mx.io.MNISTIter``).

    Images are scaled to [0, 1) by 1/256 as in MXNet and batched as ``(batch, 1, rows,
    cols)`` float32 (``(batch, rows * cols)`` with ``flat``); labels are float32
    ``(batch,)``. The last incomplete batch of an epoch is dropped. With ``shuffle`` the
    order is drawn once from ``seed`` and kept across ``reset()``, as in MXNet (the
    permutation itself differs from MXNet's). Unknown keyword arguments are ignored, as
    MXNet's C++ iterators do.

    Parameters
    ----------
    image : str, default './train-images-idx3-ubyte'
        Image file (idx3-ubyte, optionally gzip-compressed).
    label : str, default './train-labels-idx1-ubyte'
        Label file (idx1-ubyte, optionally gzip-compressed).
    batch_size : int, default 128
    shuffle : bool, default True
    flat : bool, default False
        Flatten each image to a vector.
    seed : int, default 0
        Seed of the shuffle.
    silent : bool, default False
        When False, log the number of images and the batch shape.
    num_parts, part_index : int, default 1, 0
        Read only part ``part_index`` of ``num_parts`` contiguous parts.
    prefetch_buffer, ctx : ignored (MXNet compatibility).
    dtype : None or 'float32'
    data_name, label_name : str, default 'data', 'softmax_label'

    Examples
    --------
    >>> import os, struct, tempfile, numpy as np, sparsym as mx
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, 'img'), 'wb') as f:
    ...     _ = f.write(struct.pack('>IIII', 2051, 4, 2, 2) + bytes(range(16)))
    >>> with open(os.path.join(d, 'lab'), 'wb') as f:
    ...     _ = f.write(struct.pack('>II', 2049, 4) + bytes([3, 1, 4, 1]))
    >>> it = mx.io.MNISTIter(image=os.path.join(d, 'img'), label=os.path.join(d, 'lab'),
    ...                      batch_size=2, shuffle=False, silent=True)
    >>> it.provide_data
    [DataDesc[data,(2, 1, 2, 2),<class 'numpy.float32'>,NCHW]]
    >>> [b.label[0].asnumpy().tolist() for b in it]
    [[3.0, 1.0], [4.0, 1.0]]
    """

    def __init__(self, data_name="data", label_name="softmax_label", **kwargs):
        p = _PARAMS.parse("MNISTIter", {k: v for k, v in kwargs.items() if k in _PARAMS.fields})
        if p.batch_size < 1:
            raise ParamError(f"MNISTIter: value {p.batch_size} for Parameter batch_size should "
                             "be greater equal to 1")
        if not 0 <= p.part_index < p.num_parts:
            raise ParamError(f"MNISTIter: part_index must be in [0, num_parts), got "
                             f"part_index={p.part_index}, num_parts={p.num_parts}")
        if p.dtype not in (None, "float32"):
            raise NotImplementedError(f"MNISTIter: dtype={p.dtype!r} is not supported (MXNet "
                                      "fails on it too); batches are float32")
        images = _read_idx(p.image, 3, "image")
        labels = _read_idx(p.label, 1, "label")
        if images.shape[0] != labels.shape[0]:
            raise FormatError(f"MNISTIter: {p.image!r} has {images.shape[0]} images but "
                              f"{p.label!r} has {labels.shape[0]} labels")
        n = images.shape[0]
        start, end = p.part_index * n // p.num_parts, (p.part_index + 1) * n // p.num_parts
        self._images, self._labels = images[start:end], labels[start:end]
        self._order = np.arange(end - start)
        if p.shuffle:
            np.random.RandomState(p.seed).shuffle(self._order)
        self._offset = start
        self.flat = p.flat
        rows, cols = images.shape[1:]
        self._item_shape = (rows * cols,) if p.flat else (1, rows, cols)
        if len(self._order) < p.batch_size:
            raise MXNetError(f"MNISTIter: batch_size {p.batch_size} is larger than the number "
                             f"of images read ({len(self._order)})")
        if not p.silent:
            logging.getLogger("sparsym").info(
                "MNISTIter: load %d images, shuffle=%d, shape=%s", len(self._order),
                int(p.shuffle), (p.batch_size,) + self._item_shape)
        super().__init__(batch_size=p.batch_size, data_name=data_name, label_name=label_name)
        self._loc = 0
        self._batch = None

    @property
    def provide_data(self):
        return [DataDesc(self.data_name, (self.batch_size,) + self._item_shape, np.float32)]

    @property
    def provide_label(self):
        return [DataDesc(self.label_name, (self.batch_size,), np.float32)]

    def reset(self):
        self._loc = 0
        self._batch = None

    def iter_next(self):
        if self._loc + self.batch_size > len(self._order):
            self._batch = None
            return False
        self._batch = self._order[self._loc:self._loc + self.batch_size]
        self._loc += self.batch_size
        return True

    def _current(self):
        if self._batch is None:
            raise MXNetError("MNISTIter: no current batch (call next() or iter_next() first)")
        return self._batch

    def getdata(self):
        rows = self._images[self._current()]
        x = rows.reshape((len(rows),) + self._item_shape).astype(np.float32)
        x *= np.float32(1.0 / 256.0)
        return wrap(x)

    def getlabel(self):
        return wrap(self._labels[self._current()].astype(np.float32))

    def getindex(self):
        return (self._current() + self._offset).astype(np.uint64)

    def getpad(self):
        return 0
