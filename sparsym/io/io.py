"""DataDesc, DataBatch, DataIter and NDArrayIter (dense and CSR; CSR batches stay CSR)."""
from __future__ import annotations

import logging
from collections import namedtuple

import numpy as np

from ..base import MXNetError, ParamError, ShapeError
from ..ndarray.ndarray import wrap
from .utils import _getdata_by_idx, _init_data, _slice_rows, _take_rows

__all__ = ["DataDesc", "DataBatch", "DataIter", "MXDataIter", "NDArrayIter"]


def check_batch_size(batch_size, where):
    """A positive integer batch size (MXNet fails later, on slicing or a -1 shape)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size <= 0:
        raise ParamError(f"{where}: batch_size must be a positive integer, got {batch_size!r}")


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input.

    Examples
    --------
    >>> import sparsym as mx
    >>> name, shape = mx.io.DataDesc('data', (32, 10))
    >>> (name, shape)
    ('data', (32, 10))
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The index of 'N' in ``layout`` (0 when layout is None)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDesc list from (name, shape) and optional (name, type) pairs."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """A batch: lists of data and label arrays, padding count, index, bucket key."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise MXNetError("Data must be list of NDArrays")
        if label is not None and not isinstance(label, (list, tuple)):
            raise MXNetError("Label must be list of NDArrays")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base iterator: ``next()`` returns DataBatch until StopIteration."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        pass

    def __next__(self):
        return self.next()

    def next(self):
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def iter_next(self):
        pass

    def getdata(self):
        pass

    def getlabel(self):
        pass

    def getindex(self):
        return None

    def getpad(self):
        pass


class MXDataIter(DataIter):
    """Base of the file iterators MXNet implements in C++ (CSVIter, LibSVMIter, MNISTIter).

    As in MXNet, ``getdata()`` and ``getlabel()`` return one array each (not a list) and
    ``next()`` wraps them in a DataBatch. Subclasses implement ``iter_next``, ``getdata``,
    ``getlabel``, ``getpad``, ``getindex``, ``provide_data`` and ``provide_label``.

    Parameters
    ----------
    handle : None
        MXNet's handle of a C++ iterator; there is no C++ iterator here, so only None.
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    """

    def __init__(self, handle=None, data_name="data", label_name="softmax_label",
                 batch_size=0, **_):
        if handle is not None:
            raise NotImplementedError("MXDataIter: wrapping a C++ iterator handle is not "
                                      "supported (use CSVIter, LibSVMIter, MNISTIter...)")
        super().__init__(batch_size)
        self.data_name, self.label_name = data_name, label_name
        self._debug_skip_load = False
        self._debug_batch = None

    def debug_skip_load(self):
        """Return the current (or next) batch forever, to time a network without IO."""
        self._debug_skip_load = True
        logging.getLogger("sparsym").info(
            "Set debug_skip_load to be true, will simply return first batch")

    def next(self):
        if self._debug_skip_load and self._debug_batch is not None:
            return self._debug_batch
        if not self.iter_next():
            raise StopIteration
        batch = DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                          index=self.getindex(), provide_data=self.provide_data,
                          provide_label=self.provide_label)
        if self._debug_skip_load:
            self._debug_batch = batch
        return batch


class NDArrayIter(DataIter):
    """Iterate over arrays (numpy, NDArray, CSRNDArray, scipy csr) in batches.

    Parameters
    ----------
    data : array, list of arrays or dict name -> array
    label : same, optional
    batch_size : int
    shuffle : bool
        Shuffle once at construction and at every reset.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        MXNet 1.9 semantics. Unlike MXNet (which only allows 'discard' with CSR data and
        then returns dense batches), every mode works with CSR data and batches stay CSR.
    data_name, label_name : str
    layout : str

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> it = mx.io.NDArrayIter(np.arange(10).reshape(10, 1), batch_size=4)
    >>> [(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it][-1]
    ([8.0, 9.0, 0.0, 1.0], 2)
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ParamError(f"last_batch_handle must be 'pad', 'discard' or 'roll_over', got "
                             f"{last_batch_handle!r}")
        check_batch_size(batch_size, "NDArrayIter")
        self.data = _init_data(data, False, data_name)
        self.label = _init_data(label, True, label_name)
        self.num_data = self.data[0][1].shape[0]
        for k, v in self.data + self.label:
            if v.shape[0] < self.num_data:
                raise ShapeError(f"NDArrayIter: every array needs as many rows as the first "
                                 f"data array; {k} has {v.shape[0]}, expected {self.num_data}")
        # MXNet reads only the first num_data rows of a longer array (its padded last batch
        # then runs past them: those rows are dropped here instead)
        n = self.num_data
        self.data, self.label = ([(k, _slice_rows(v, 0, n) if v.shape[0] > n else v)
                                  for k, v in arrays] for arrays in (self.data, self.label))
        if self.num_data < batch_size and last_batch_handle == "discard":
            raise MXNetError("batch_size needs to be smaller than data size.")
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.layout = layout
        self.idx = np.arange(self.num_data)
        self._orig = (self.data, self.label)
        if shuffle:
            self._shuffle()
        self.cursor = -self.batch_size
        self._pending = 0

    def _shuffle(self):
        from ..random import rng
        rng().shuffle(self.idx)
        d, lab = self._orig
        self.data = _getdata_by_idx(d, self.idx)
        self.label = _getdata_by_idx(lab, self.idx)

    @property
    def provide_data(self):
        # MXNet reports the dtype as the numpy scalar type (prints <class 'numpy.float32'>)
        return [DataDesc(k, (self.batch_size,) + tuple(v.shape[1:]), np.dtype(v.dtype).type,
                         self.layout) for k, v in self.data]

    @property
    def provide_label(self):
        # MXNet reports the dtype as the numpy scalar type (prints <class 'numpy.float32'>)
        return [DataDesc(k, (self.batch_size,) + tuple(v.shape[1:]), np.dtype(v.dtype).type,
                         self.layout) for k, v in self.label]

    def hard_reset(self):
        """Start again at row 0, dropping any roll-over rows."""
        if self.shuffle:
            self._shuffle()
        self.cursor = -self.batch_size
        self._pending = 0

    def reset(self):
        if self.shuffle:
            self._shuffle()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # rows left over from the last epoch open the next one
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        if self.last_batch_handle == "pad":
            return self.cursor < self.num_data
        return self.cursor + self.batch_size <= self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=None)

    def _batch(self, arrays):
        c, bs, n = self.cursor, self.batch_size, self.num_data
        if 0 <= c and c + bs <= n:
            return [wrap(_slice_rows(v, c, c + bs)) for _, v in arrays]
        rows = np.arange(c, c + bs) % n  # wraps around (pad / roll_over), even past n rows
        return [wrap(_take_rows(v, rows)) for _, v in arrays]

    def getdata(self):
        return self._batch(self.data)

    def getlabel(self):
        return self._batch(self.label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and self.cursor < 0:
            return -self.cursor
        return 0

    def getindex(self):
        return None
