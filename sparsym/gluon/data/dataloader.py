"""DataLoader: batches of a Dataset, assembled in this process or by worker processes."""
from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
from multiprocessing.reduction import ForkingPickler  # noqa: F401  (MXNet's name, used by GluonNLP)

import numpy as np

from ... import ndarray as nd
from ...base import ShapeError
from ...context import Context
from ...ndarray.ndarray import NDArray
from . import sampler as _sampler

__all__ = ["DataLoader", "DataLoaderV1", "default_batchify_fn", "default_mp_batchify_fn"]


def _shape(sample):
    if isinstance(sample, NDArray):
        return sample.shape
    try:
        return tuple(np.shape(sample))
    except ValueError:  # a ragged nested list
        return "ragged"


def _check_same_shapes(data, field):
    """Samples of one batch must share a shape: name the first that differs."""
    first = _shape(data[0])
    for i, d in enumerate(data[1:], 1):
        s = _shape(d)
        if s != first or s == "ragged":
            where = f"field {field} of " if field is not None else ""
            raise ShapeError(f"{where}sample {i} of the batch has shape {s}, sample 0 has "
                             f"{first}: samples of a batch must have one shape (pad them, or "
                             f"pass a batchify_fn)")


def _batchify(data, field):
    first = data[0]
    if isinstance(first, NDArray):
        if first.stype == "csr":
            return nd.concat(*[d if d.ndim == 2 else d.reshape((1, -1)) for d in data],
                             dim=0)
        _check_same_shapes(data, field)
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [_batchify(i, k) for k, i in enumerate(zip(*data))]
    _check_same_shapes(data, field)
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


def default_batchify_fn(data):
    """Stack samples into a batch: NDArrays stack (csr rows concatenate into a csr batch),
    tuples batch element-wise, anything else goes through numpy. Samples of different
    shapes raise ShapeError naming the field and the sample."""
    return _batchify(data, None)


default_mp_batchify_fn = default_batchify_fn

def _worker_loop(dataset, batchify_fn, key_queue, data_queue, parent=None):
    """A worker process: assemble the batches whose indices arrive on ``key_queue``; exit
    when the parent process is gone (a SIGKILLed parent sends no end marker)."""
    import queue
    parent = parent or os.getppid()
    while True:
        try:
            task = key_queue.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:
                break
            continue
        if task is None:
            break
        idx, samples = task
        try:
            data_queue.put((idx, batchify_fn([dataset[i] for i in samples]), None))
        except Exception as err:  # noqa: BLE001  (handed to the parent, raised there)
            data_queue.put((idx, None, f"{type(err).__name__}: {err}"))


class _ProcessPool:
    """Forked worker processes fed through queues (they inherit the dataset and batchify
    function unpickled); ``apply_async``-like submission, results by task id."""

    def __init__(self, num_workers, dataset, batchify_fn):
        ctx = multiprocessing.get_context("fork")
        self._key_queue = ctx.Queue()
        self._data_queue = ctx.Queue()
        self._workers = [ctx.Process(target=_worker_loop, daemon=True,
                                     args=(dataset, batchify_fn, self._key_queue,
                                           self._data_queue, os.getpid()))
                         for _ in range(num_workers)]
        for w in self._workers:
            w.start()
        self._done = {}
        self._next_id = 0

    def submit(self, samples):
        tid = self._next_id
        self._next_id += 1
        self._key_queue.put((tid, samples))
        return tid

    def _check_workers(self):
        """A worker that died (killed by a signal, or exited) loses its batch: say so now."""
        import signal
        for i, w in enumerate(self._workers):
            code = w.exitcode
            if code is None:
                continue
            how = (f"killed by signal {signal.Signals(-code).name}" if code < 0
                   else f"exited with code {code}")
            raise RuntimeError(f"DataLoader worker {i} (pid {w.pid}) {how}; its batch is "
                               "lost (a worker killed for memory shows as SIGKILL)")

    def result(self, tid, timeout):
        import queue
        import time
        deadline = time.monotonic() + timeout
        while tid not in self._done:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"DataLoader: no batch from the workers within {timeout} s")
            try:
                idx, batch, err = self._data_queue.get(timeout=min(left, 0.2))
            except queue.Empty:
                self._check_workers()
                continue
            self._done[idx] = (batch, err)
        batch, err = self._done.pop(tid)
        if err is not None:
            raise RuntimeError(f"DataLoader worker failed: {err}")
        return batch

    def terminate(self):
        for w in self._workers:
            if w.is_alive():
                w.terminate()
        for w in self._workers:
            w.join(timeout=5)
        for q in (self._key_queue, self._data_queue):
            q.cancel_join_thread()
            q.close()
        self._workers = []


def _thread_worker_fn(samples, batchify_fn, dataset):
    return batchify_fn([dataset[i] for i in samples])


def _as_in_context(data, ctx):
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class _MultiWorkerIter:
    """Keep ``prefetch`` batches in flight on the pool; yield them in order."""

    def __init__(self, loader, pool, batch_sampler, worker_fn, args, pin_memory, pin_device_id,
                 prefetch, timeout):
        self._loader = loader  # keeps the DataLoader (and its pool) alive while iterating
        self._pool = pool
        self._iter = iter(batch_sampler)
        self._worker_fn = worker_fn
        self._args = args
        self._pin = pin_memory
        self._pin_device_id = pin_device_id
        self._timeout = timeout
        self._data_buffer = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._len = len(batch_sampler)
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return self._len

    def _push_next(self):
        r = next(self._iter, None)
        if r is None:
            return
        if isinstance(self._pool, _ProcessPool):
            self._data_buffer[self._sent_idx] = self._pool.submit(r)
        else:
            self._data_buffer[self._sent_idx] = self._pool.apply_async(
                self._worker_fn, (r,) + self._args)
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            assert not self._data_buffer, "Data buffer should be empty at this moment"
            raise StopIteration
        ret = self._data_buffer.pop(self._rcvd_idx)
        if isinstance(self._pool, _ProcessPool):
            try:
                batch = self._pool.result(ret, self._timeout)
            except RuntimeError as err:
                raise RuntimeError(f"DataLoader batch {self._rcvd_idx}: {err}") from None
        else:
            try:
                batch = ret.get(self._timeout)
            except multiprocessing.TimeoutError as err:
                raise RuntimeError(f"DataLoader: a worker did not return batch "
                                   f"{self._rcvd_idx} within {self._timeout} s") from err
        if self._pin:
            batch = _as_in_context(batch, Context("cpu_pinned", self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self


class DataLoader:
    """Load a Dataset in mini-batches.

    Parameters
    ----------
    dataset : Dataset (or anything indexable with a length)
    batch_size : int
    shuffle : bool
    sampler : Sampler, optional
    last_batch : {'keep', 'discard', 'rollover'}, optional
    batch_sampler : Sampler of index lists, optional
    batchify_fn : callable, optional
        Turns a list of samples into a batch; the default keeps csr rows csr.
    num_workers : int
        Worker processes (forked) assembling batches; 0 assembles them here.
    pin_memory : bool
        Put batches on ``cpu_pinned(pin_device_id)``.
    pin_device_id : int
    prefetch : int, optional
        Batches in flight (default ``2 * num_workers``).
    thread_pool : bool
        Use threads instead of processes.
    timeout : int
        Seconds to wait for a worker's batch.

    Examples
    --------
    >>> import sparsym as mx, numpy as np
    >>> loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(np.arange(10)), 4)
    >>> [b.shape for b in loader]
    [(4,), (4,), (2,)]
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120,
                 auto_reload=True, try_nopython=None):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._auto_reload = auto_reload
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is "
                                 "specified")
            if sampler is None:
                sampler = _sampler.RandomSampler(len(dataset)) if shuffle else \
                    _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size,
                                                  last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be "
                             "specified if batch_sampler is specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._worker_pool = None
        self._prefetch = max(0, int(prefetch) if prefetch is not None else
                             2 * self._num_workers)
        self._batchify_fn = batchify_fn if batchify_fn is not None else (
            default_mp_batchify_fn if num_workers > 0 else default_batchify_fn)

    def _pool(self):
        if self._worker_pool is None:
            if self._thread_pool:
                self._worker_pool = multiprocessing.pool.ThreadPool(self._num_workers)
            else:
                # workers would each import scipy.sparse at their first batch (nd.array
                # checks for scipy matrices): import it once here, before forking
                import scipy.sparse  # noqa: F401
                self._worker_pool = _ProcessPool(self._num_workers, self._dataset,
                                                 self._batchify_fn)
        return self._worker_pool

    def __iter__(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        pool = self._pool()
        if self._thread_pool:
            return _MultiWorkerIter(self, pool, self._batch_sampler, _thread_worker_fn,
                                    (self._batchify_fn, self._dataset), self._pin_memory,
                                    self._pin_device_id, self._prefetch, self._timeout)
        return _MultiWorkerIter(self, pool, self._batch_sampler, None, (), self._pin_memory,
                                self._pin_device_id, self._prefetch, self._timeout)

    def _same_process_iter(self):
        for n, batch in enumerate(self._batch_sampler):
            try:
                ret = self._batchify_fn([self._dataset[idx] for idx in batch])
            except ShapeError as err:
                raise ShapeError(f"DataLoader batch {n}: {err}") from None
            if self._pin_memory:
                ret = _as_in_context(ret, Context("cpu_pinned", self._pin_device_id))
            yield ret

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        pool = getattr(self, "_worker_pool", None)
        if pool is not None:
            pool.terminate()
            self._worker_pool = None





class DataLoaderV1(DataLoader):
    """MXNet 1.x's earlier DataLoader (no ``prefetch``, ``thread_pool``, ``timeout`` or
    ``auto_reload``): the same loader with those at their defaults.

    Parameters
    ----------
    dataset, batch_size, shuffle, sampler, last_batch, batch_sampler, batchify_fn,
    num_workers, pin_memory, pin_device_id
        As :class:`DataLoader`'s.
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0):
        super().__init__(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                         last_batch=last_batch, batch_sampler=batch_sampler,
                         batchify_fn=batchify_fn, num_workers=num_workers,
                         pin_memory=pin_memory, pin_device_id=pin_device_id)
