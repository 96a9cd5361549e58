"""File iterators: LibSVMIter (CSR batches) and CSVIter (dense batches), streaming from disk.

Both follow MXNet 1.9's batch loader: with ``round_batch=True`` the last batch of an epoch
is completed with rows from the start of the file (``pad`` counts them) and the next epoch
continues after those rows; with ``round_batch=False`` (which MXNet's LibSVMIter refuses)
the last batch is completed with zero rows. Files are read in chunks, so files larger than
memory stream; ``num_parts``/``part_index`` read a byte range of the file, split at line
boundaries like MXNet's InputSplit.
"""
from __future__ import annotations

import os
import queue
import threading

import numpy as np

from .. import storage as st
from ..base import FormatError, MXNetError, ShapeError
from ..kernels import csr as kcsr
from ..kernels.csv import parse_csv_chunk
from ..kernels.libsvm import LibSVMReader, _line_start_at_or_after, warm_numba
from ..ndarray.ndarray import wrap
from .io import DataBatch, DataDesc, MXDataIter, check_batch_size

__all__ = ["LibSVMIter", "CSVIter"]

_CHUNK = 4 << 20


def _prefetch_put(q, stop, item):
    while not stop.is_set():
        try:
            q.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def _prefetch_run(make, q, stop):
    """Thread body: put every chunk of ``make()``, then an end (or error) marker."""
    try:
        for chunk in make():
            if not _prefetch_put(q, stop, ("chunk", chunk)):
                return
        _prefetch_put(q, stop, ("end", None))
    except BaseException as err:  # noqa: BLE001  (handed to the consumer)
        _prefetch_put(q, stop, ("error", err))


class _Prefetch:
    """Iterate ``make()``'s chunks in a background thread, up to ``depth`` chunks ahead.

    The LibSVM parse kernel releases the GIL, so the next chunk is parsed while the caller
    trains on the current one (MXNet's LibSVMIter prefetches the same way). Errors raised
    while reading are re-raised to the caller, in order.
    """

    def __init__(self, make, depth):
        self._q = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._done = False
        # the thread holds the queue and the event, not self: an abandoned prefetcher is
        # collected and its __del__ stops the thread
        self._thread = threading.Thread(target=_prefetch_run, args=(make, self._q, self._stop),
                                        daemon=True)
        self._thread.start()

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        kind, value = self._q.get()
        if kind == "chunk":
            return value
        self._done = True
        self._thread.join()
        if kind == "error":
            raise value
        raise StopIteration

    def __del__(self):
        self._stop.set()

    def close(self):
        """Stop the thread (it may be blocked on a full queue) and wait for it."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._q.get(timeout=0.05)
            except queue.Empty:
                pass
        self._done = True


def _is_null(path):
    return path is None or path == "" or path == "NULL"


def _shape_tuple(shape, what):
    if isinstance(shape, int):
        return (shape,)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise ShapeError(f"{what} must be a tuple of ints, got {shape!r}") from None


class _RowStream:
    """Rows of a chunked source, handed out ``take(n)`` at a time across chunk borders."""

    def __init__(self, open_chunks, concat, slice_rows, nrows):
        self._open = open_chunks
        self._concat = concat
        self._slice = slice_rows
        self._nrows = nrows
        self.rewind()

    def close(self):
        """Stop reading (ends a prefetch thread)."""
        old = getattr(self, "_chunks", None)
        if hasattr(old, "close"):
            old.close()
        self._chunks = iter(())

    def rewind(self, skip=0):
        """Start again from the first row, then drop ``skip`` rows."""
        self.close()
        self._chunks = iter(self._open())
        self._cur = None
        self._off = 0
        self._at_start = skip == 0
        if skip:
            self.take(skip)

    def take(self, n):
        """Up to ``n`` rows (fewer only at the end of the source); None when exhausted."""
        parts, got = [], 0
        while got < n:
            if self._cur is None or self._off >= self._nrows(self._cur):
                self._cur = next(self._chunks, None)
                self._off = 0
                if self._cur is None:
                    break
                continue
            k = min(n - got, self._nrows(self._cur) - self._off)
            parts.append(self._slice(self._cur, self._off, self._off + k))
            self._off += k
            got += k
        if not parts:
            return None
        out = parts[0] if len(parts) == 1 else self._concat(parts)
        if self._at_start:
            # the source's first rows, kept for completing a last batch (round_batch)
            # without reading the file again
            self._head = out
            self._at_start = False
        return out

    def head(self, n):
        """The source's first ``n`` rows (None or fewer when it has fewer)."""
        h = getattr(self, "_head", None)
        if h is not None and self._nrows(h) >= n:
            return self._slice(h, 0, n)
        fresh = _RowStream(self._open, self._concat, self._slice, self._nrows)
        out = fresh.take(n)
        fresh.close()
        return out


class _BatchLoader(MXDataIter):
    """MXNet's batch loader over one or two aligned row streams (data, label)."""

    def __init__(self, batch_size, round_batch, streams, names, data_name, label_name):
        super().__init__(batch_size=batch_size, data_name=data_name, label_name=label_name)
        check_batch_size(batch_size, type(self).__name__)
        self.round_batch = bool(round_batch)
        self._streams = streams
        self._names = names
        self._overflow = 0
        self._row = 0
        self._batch = None

    def reset(self):
        # MXNet: after an overflowing (wrapped) batch the next epoch starts after the rows
        # used to complete that batch
        skip = self._overflow if self.round_batch else 0
        for s in self._streams:
            s.rewind(skip)
        self._overflow = 0
        self._row = skip
        self._batch = None

    def _check_aligned(self, got):
        counts = [0 if g is None else self._count(g) for g in got]
        if len(set(counts)) > 1:
            raise FormatError(f"{type(self).__name__}: {self._names[1]} has a different number "
                              f"of rows than {self._names[0]} ({counts[1]} vs {counts[0]} in "
                              "this batch)")
        return counts[0]

    def iter_next(self):
        if self._overflow and self.round_batch:
            return False  # the wrapped batch ended the epoch
        got = [s.take(self.batch_size) for s in self._streams]
        if got[0] is None:
            if any(g is not None for g in got[1:]):
                raise FormatError(f"{type(self).__name__}: {self._names[1]} has more rows "
                                  f"than {self._names[0]}")
            return False
        n = self._check_aligned(got)
        index = np.arange(self._row, self._row + n, dtype=np.int64)
        self._row += n
        pad = self.batch_size - n
        if pad:
            if self.round_batch:
                more = [s.head(pad) for s in self._streams]
                if more[0] is None or self._count(more[0]) < pad:
                    raise MXNetError(f"{type(self).__name__}: number of input must be bigger "
                                     f"than batch size ({self.batch_size})")
                self._check_aligned(more)
                got = [self._join([g, m]) for g, m in zip(got, more)]
                index = np.concatenate([index, np.arange(pad, dtype=np.int64)])
                self._overflow = pad
                self._row = pad
            else:
                got = [self._join([g, self._zeros_like(g, pad)]) for g in got]
                index = np.concatenate([index, np.full(pad, -1, dtype=np.int64)])
        self._batch = (got, pad, index)
        return True

    def next(self):
        if self._debug_skip_load and self._debug_batch is not None:
            return self._debug_batch
        if not self.iter_next():
            raise StopIteration
        got, pad, index = self._batch
        data, label = self._make(got)
        batch = DataBatch(data=data, label=label, pad=pad, index=index,
                          provide_data=self.provide_data, provide_label=self.provide_label)
        if self._debug_skip_load:
            self._debug_batch = batch
        return batch

    def getpad(self):
        return self._batch[1] if self._batch else 0

    def getindex(self):
        return self._batch[2] if self._batch else None

    def getdata(self):
        return self._make(self._batch[0])[0][0]

    def getlabel(self):
        return self._make(self._batch[0])[1][0]


# ----------------------------------------------------------------------------- LibSVM
def _csr_chunk_rows(c):
    return c[1].shape[0]


def _csr_chunk_slice(c, a, b):
    return (c[0][a:b], kcsr.slice_rows(c[1], a, b))


def _csr_chunk_concat(parts):
    return (np.concatenate([p[0] for p in parts]), kcsr.concat_rows_csr([p[1] for p in parts]))


class LibSVMIter(_BatchLoader):
    """Batches of CSR rows read from a LibSVM text file (MXNet's ``LibSVMIter``).

    Parameters
    ----------
    data_libsvm : str
        Path of the data file: ``label index:value ...`` per line, zero-based indices.
    data_shape : tuple of int
        ``(num_features,)``; an index ``>= num_features`` is a FormatError.
    label_libsvm : str, optional
        A second LibSVM file whose features are the label (a CSR label of
        ``label_shape``); by default the label is the data file's first column (dense).
    label_shape : tuple of int
    batch_size : int
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` (byte ranges split at lines).
    round_batch : bool
        True: complete the last batch from the start of the part (MXNet). False: complete
        it with empty rows (sparsym extension; MXNet raises).
    dtype : str or numpy dtype, optional
        Value dtype of the data (float32).
    data_name, label_name : str
    chunk_bytes : int
        Bytes parsed at a time (files larger than memory stream).
    prefetch_buffer : int
        Chunks (of ``chunk_bytes``) parsed ahead in a background thread while the caller
        trains, as MXNet's iterator does (at most 4); 0 parses on demand in the caller's
        thread.
    ctx : ignored (MXNet compatibility).

    Examples
    --------
    >>> import os, tempfile, sparsym as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'a.libsvm')
    >>> _ = open(p, 'w').write('1 0:1 2:2\\n0 1:3\\n1 3:4\\n')
    >>> it = mx.io.LibSVMIter(data_libsvm=p, data_shape=(4,), batch_size=2)
    >>> [(b.data[0].stype, b.label[0].asnumpy().tolist(), b.pad) for b in it]
    [('csr', [1.0, 0.0], 0), ('csr', [1.0, 1.0], 1)]
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm="NULL", label_shape=(1,),
                 batch_size=1, num_parts=1, part_index=0, round_batch=True, prefetch_buffer=4,
                 ctx=None, dtype=None, data_name="data", label_name="softmax_label",
                 chunk_bytes=_CHUNK):
        data_shape = _shape_tuple(data_shape, "LibSVMIter: data_shape")
        label_shape = _shape_tuple(label_shape, "LibSVMIter: label_shape")
        if len(data_shape) != 1:
            raise ShapeError(f"LibSVMIter: data_shape must have one dimension (num_features,), "
                             f"got {data_shape}")
        if not os.path.isfile(data_libsvm):
            raise FileNotFoundError(f"LibSVMIter: data_libsvm file not found: {data_libsvm}")
        self.dtype = np.dtype(dtype or np.float32)
        self.data_shape, self.label_shape = data_shape, label_shape
        self.data_name, self.label_name = data_name, label_name
        self._sparse_label = not _is_null(label_libsvm)

        depth = min(int(prefetch_buffer or 0), 4)
        threaded = depth > 0

        def reader(path, nf, dt):
            def make():
                # chunks parse in segments on the kernel pool's threads (the kernel is
                # GIL-free, serial: no Numba parallel region, whatever the threading layer)
                return LibSVMReader(path, nf, chunk_bytes, num_parts, part_index, dt,
                                    parallel=True)
            if threaded:
                return lambda: _Prefetch(make, depth)
            return make

        streams = [_RowStream(reader(data_libsvm, data_shape[0], self.dtype), _csr_chunk_concat,
                              _csr_chunk_slice, _csr_chunk_rows)]
        names = [data_libsvm]
        if self._sparse_label:
            if len(label_shape) != 1:
                raise ShapeError(f"LibSVMIter: label_shape must have one dimension with "
                                 f"label_libsvm, got {label_shape}")
            streams.append(_RowStream(reader(label_libsvm, label_shape[0], np.float32),
                                      _csr_chunk_concat, _csr_chunk_slice, _csr_chunk_rows))
            names.append(label_libsvm)
        super().__init__(batch_size, round_batch, streams, names, data_name, label_name)

    @property
    def provide_data(self):
        return [DataDesc(self.data_name, (self.batch_size,) + self.data_shape, self.dtype.type)]

    @property
    def provide_label(self):
        shape = ((self.batch_size,) + self.label_shape if self._sparse_label or
                 self.label_shape != (1,) else (self.batch_size,))
        return [DataDesc(self.label_name, shape, np.float32)]

    @staticmethod
    def _count(chunk):
        return chunk[1].shape[0]

    @staticmethod
    def _join(parts):
        return _csr_chunk_concat(parts)

    @staticmethod
    def _zeros_like(chunk, n):
        c = chunk[1]
        return (np.zeros(n, np.float32), st.zeros_raw("csr", (n, c.shape[1]), c.dtype))

    def _make(self, got):
        labels, x = got[0]
        data = [wrap(x)]
        if self._sparse_label:
            return data, [wrap(got[1][1])]
        if self.label_shape != (1,):
            lab = np.zeros((len(labels),) + self.label_shape, np.float32)
            lab[:, 0] = labels
            return data, [wrap(lab)]
        return data, [wrap(np.ascontiguousarray(labels, dtype=np.float32))]


# ----------------------------------------------------------------------------- CSV
def _csv_chunks(path, ncols, dtype, chunk_bytes, num_parts=1, part_index=0):
    """Yield 2-D arrays of the CSV rows of ``path`` (the part's byte range): the blocks of
    each chunk, parsed in segments on threads by the GIL-free kernel."""
    warm_numba()  # after a first pass parsed with NumPy, Numba pays for itself
    size = os.path.getsize(path)
    line_no = 1
    with open(path, "rb") as f:
        begin = _line_start_at_or_after(f, part_index * size // num_parts, size)
        end = _line_start_at_or_after(f, (part_index + 1) * size // num_parts, size)
        if begin:
            f.seek(0)
            line_no += f.read(begin).count(b"\n")
        f.seek(begin)
        pos, carry = begin, b""
        while pos < end or carry:
            blk = f.read(min(chunk_bytes, end - pos)) if pos < end else b""
            pos += len(blk)
            buf = carry + blk if carry else blk
            cut = len(buf) if pos >= end else buf.rfind(b"\n") + 1
            if cut == 0:
                carry = buf
                continue
            carry, chunk = buf[cut:], buf[:cut] if cut < len(buf) else buf
            blocks, lines = parse_csv_chunk(chunk, ncols, dtype, path, line_no)
            yield from blocks
            line_no += lines


class CSVIter(_BatchLoader):
    """Dense batches read from CSV files (MXNet's ``CSVIter``).

    Parameters
    ----------
    data_csv : str
    data_shape : tuple of int
        Shape of one row (the line holds ``prod(data_shape)`` values).
    label_csv : str, optional
        Label file; without it the label is all zeros, as in MXNet.
    label_shape : tuple of int
    batch_size : int
    round_batch : bool
    dtype : str or numpy dtype, optional
        float32 (default), int32 or int64 as in MXNet (integer dtypes read the integer part
        of each value: ``1.5`` is 1); other dtypes are parsed as float64 and cast.
    num_parts, part_index : int
    prefetch_buffer : int
        Chunks parsed ahead in a background thread while the caller trains (at most 4; the
        kernel releases the GIL); 0 parses on demand in the caller's thread.
    chunk_bytes : int
        Bytes parsed at a time (each in segments on the kernel pool's threads).
    ctx : ignored (MXNet compatibility).

    Examples
    --------
    >>> import os, tempfile, numpy as np, sparsym as mx
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, 'x.csv')
    >>> np.savetxt(p, np.arange(6).reshape(3, 2), delimiter=',')
    >>> it = mx.io.CSVIter(data_csv=p, data_shape=(2,), batch_size=2)
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [0.0, 1.0]]]
    """

    def __init__(self, data_csv, data_shape, label_csv="NULL", label_shape=(1,), batch_size=1,
                 round_batch=True, prefetch_buffer=4, ctx=None, dtype=None, num_parts=1,
                 part_index=0, data_name="data", label_name="softmax_label",
                 chunk_bytes=_CHUNK):
        self.data_shape = _shape_tuple(data_shape, "CSVIter: data_shape")
        self.label_shape = _shape_tuple(label_shape, "CSVIter: label_shape")
        self.dtype = np.dtype(dtype or np.float32)
        self.data_name, self.label_name = data_name, label_name
        if not os.path.isfile(data_csv):
            raise FileNotFoundError(f"CSVIter: data_csv file not found: {data_csv}")
        self._has_label = not _is_null(label_csv)
        nd_ = int(np.prod(self.data_shape))
        nl = int(np.prod(self.label_shape))

        depth = min(int(prefetch_buffer or 0), 4)
        parse_dt = self.dtype if self.dtype.name in ("float32", "float64", "int32",
                                                     "int64") else np.dtype(np.float64)

        def src(path, n, dt):
            def make():
                blocks = _csv_chunks(path, n, parse_dt, chunk_bytes, num_parts, part_index)
                if parse_dt != dt:
                    return (blk.astype(dt) for blk in blocks)
                return blocks
            return (lambda: _Prefetch(make, depth)) if depth else make

        streams = [_RowStream(src(data_csv, nd_, self.dtype), np.concatenate,
                              lambda c, a, b: c[a:b], len)]
        names = [data_csv]
        if self._has_label:
            if not os.path.isfile(label_csv):
                raise FileNotFoundError(f"CSVIter: label_csv file not found: {label_csv}")
            streams.append(_RowStream(src(label_csv, nl, self.dtype), np.concatenate,
                                      lambda c, a, b: c[a:b], len))
            names.append(label_csv)
        super().__init__(batch_size, round_batch, streams, names, data_name, label_name)

    @property
    def provide_data(self):
        return [DataDesc(self.data_name, (self.batch_size,) + self.data_shape, self.dtype.type)]

    @property
    def _label_batch_shape(self):
        if self.label_shape == (1,):
            return (self.batch_size,)
        return (self.batch_size,) + self.label_shape

    @property
    def provide_label(self):
        return [DataDesc(self.label_name, self._label_batch_shape, self.dtype.type)]

    @staticmethod
    def _count(chunk):
        return len(chunk)

    @staticmethod
    def _join(parts):
        return np.concatenate(parts)

    @staticmethod
    def _zeros_like(chunk, n):
        return np.zeros((n,) + chunk.shape[1:], chunk.dtype)

    def _make(self, got):
        bs = self.batch_size
        data = [wrap(np.ascontiguousarray(got[0]).reshape((bs,) + self.data_shape))]
        if self._has_label:
            lab = np.ascontiguousarray(got[1]).reshape(self._label_batch_shape)
        else:
            lab = np.zeros(self._label_batch_shape, self.dtype)
        return data, [wrap(lab)]
