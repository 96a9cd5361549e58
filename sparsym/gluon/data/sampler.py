"""Samplers: the orders in which a DataLoader visits a dataset."""
from __future__ import annotations

import numpy as np

from ...base import ParamError

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "FilterSampler",
           "IntervalSampler"]


class Sampler:
    """Base class: an iterable of dataset indices with a length."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``start, start+1, ..., start+length-1``."""

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A random permutation of ``range(length)`` per pass (numpy's global generator)."""

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices ``i`` of ``dataset`` with ``fn(dataset[i])`` true."""

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Group another sampler's indices into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
    batch_size : int
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with a short last batch: yield it, drop it, or prepend it to the next
        pass.
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:  # MXNet: ZeroDivisionError from len(), or one huge batch
            raise ParamError(f"BatchSampler: batch_size must be a positive integer, got "
                             f"{batch_size!r}")
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "discard":
                return
            elif self._last_batch == "rollover":
                self._prev = batch
            else:
                raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                                 f"but got {self._last_batch}")

    def __len__(self):
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        if self._last_batch == "rollover":
            return (len(self._prev) + len(self._sampler)) // self._batch_size
        raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', but got "
                         f"{self._last_batch}")


class IntervalSampler(Sampler):
    """``0, interval, 2*interval, ...`` then (with ``rollover``) ``1, 1+interval, ...``."""

    def __init__(self, length, interval, rollover=True):
        assert interval < length, \
            f"Interval {interval} must be smaller than length {length}"
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for i in range(self._interval if self._rollover else 1):
            yield from range(i, self._length, self._interval)

    def __len__(self):
        return self._length
