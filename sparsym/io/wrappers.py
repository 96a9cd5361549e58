"""Iterator wrappers: PrefetchingIter (background threads) and ResizeIter (fixed epoch size)."""
from __future__ import annotations

import threading

from ..base import MXNetError
from .io import DataBatch, DataDesc, DataIter

__all__ = ["PrefetchingIter", "ResizeIter"]


class ResizeIter(DataIter):
    """Make an iterator yield exactly ``size`` batches per epoch (MXNet's ``ResizeIter``).

    The wrapped iterator is reset and read again when it runs out before ``size``.

    Parameters
    ----------
    data_iter : DataIter
    size : int
        Batches per epoch.
    reset_internal : bool
        Reset ``data_iter`` on :meth:`reset` (otherwise it carries on where it stopped).

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> it = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(4.0), batch_size=2), 3)
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]]
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__(data_iter.batch_size)
        if size < 0:
            raise ValueError(f"ResizeIter: size must be >= 0, got {size}")
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise MXNetError("ResizeIter: the wrapped iterator yields no batch") from None
        self.cur += 1
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return self.current_batch

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


def _rename(descs, mapping):
    if mapping is None:
        return list(descs)
    out = []
    for d in descs:
        name = mapping.get(d.name, d.name)
        out.append(DataDesc(name, d.shape, getattr(d, "dtype", None) or "float32",
                            getattr(d, "layout", "NCHW")))
    return out


class PrefetchingIter(DataIter):
    """Fetch the next batch of one or more iterators in background threads.

    With several iterators, a batch concatenates their data and label lists (MXNet's
    ``PrefetchingIter``); ``pad`` and ``index`` come from the first.

    Parameters
    ----------
    iters : DataIter or list of DataIter
    rename_data, rename_label : list of dict, optional
        Per iterator, ``{old_name: new_name}`` for provide_data / provide_label.

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> it = mx.io.PrefetchingIter(mx.io.NDArrayIter(np.arange(4.0), batch_size=2))
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[0.0, 1.0], [2.0, 3.0]]
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        self.iters = list(iters)
        self.n_iter = len(self.iters)
        if self.n_iter == 0:
            raise MXNetError("PrefetchingIter needs at least one iterator")
        for name, ren in (("rename_data", rename_data), ("rename_label", rename_label)):
            if ren is not None and len(ren) != self.n_iter:
                raise MXNetError(f"PrefetchingIter: {name} needs one dict per iterator")
        self.rename_data, self.rename_label = rename_data, rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for e in self.data_taken:
            e.set()
        self.started = True
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self._errors = [None] * self.n_iter

        def prefetch(i):
            while True:
                self.data_taken[i].wait()
                if not self.started:
                    break
                try:
                    self.next_batch[i] = self.iters[i].next()
                except StopIteration:
                    self.next_batch[i] = None
                except Exception as err:  # noqa: BLE001  (re-raised in the consumer)
                    self.next_batch[i] = None
                    self._errors[i] = err
                self.data_taken[i].clear()
                self.data_ready[i].set()

        self.prefetch_threads = [threading.Thread(target=prefetch, args=[i], daemon=True)
                                 for i in range(self.n_iter)]
        for t in self.prefetch_threads:
            t.start()

    def close(self):
        """Stop the prefetch threads."""
        if not getattr(self, "started", False):
            return
        self.started = False
        for e in self.data_taken:
            e.set()
        for t in self.prefetch_threads:
            t.join(timeout=5)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass

    @property
    def provide_data(self):
        if self.rename_data is None:
            return sum((list(i.provide_data) for i in self.iters), [])
        return sum((_rename(i.provide_data, r) for i, r in zip(self.iters, self.rename_data)),
                   [])

    @property
    def provide_label(self):
        if self.rename_label is None:
            return sum((list(i.provide_label) for i in self.iters), [])
        return sum((_rename(i.provide_label, r) for i, r in
                    zip(self.iters, self.rename_label)), [])

    def reset(self):
        for e in self.data_ready:
            e.wait()
        for i in self.iters:
            i.reset()
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()

    def iter_next(self):
        for e in self.data_ready:
            e.wait()
        for err in self._errors:
            if err is not None:
                self._errors = [None] * self.n_iter
                for e in self.data_ready:
                    e.clear()
                for e in self.data_taken:
                    e.set()
                raise err
        if self.next_batch[0] is None:
            for b in self.next_batch:
                if b is not None:
                    raise MXNetError("Number of entry mismatches between iterators")
            return False
        for b in self.next_batch:
            if b.pad != self.next_batch[0].pad:
                raise MXNetError("Number of entry mismatches between iterators")
        nb = self.next_batch
        self.current_batch = DataBatch(sum((list(b.data) for b in nb), []),
                                       sum((list(b.label or []) for b in nb), []),
                                       nb[0].pad, nb[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad
