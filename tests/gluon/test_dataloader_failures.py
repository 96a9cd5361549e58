"""DataLoader failure handling: a worker killed by a signal is reported at once, naming the
worker and the signal; samples of different shapes name the batch, field and sample."""
import os
import signal
import time

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ShapeError


class _KillOnFive(mx.gluon.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return np.full((2,), i, np.float32)


def test_worker_killed_by_a_signal_is_reported_at_once():
    loader = mx.gluon.data.DataLoader(_KillOnFive(), batch_size=2, num_workers=2, timeout=120)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader batch \d+: DataLoader worker \d "
                                           r"\(pid \d+\) killed by signal SIGKILL"):
        for _ in loader:
            pass
    assert time.monotonic() - start < 30


class _Ragged(mx.gluon.data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return (np.zeros((3,), np.float32), np.zeros((4 if i == 4 else 2,), np.float32))


@pytest.mark.parametrize("workers", [0, 1])
def test_samples_of_different_shapes_name_batch_field_and_sample(workers):
    loader = mx.gluon.data.DataLoader(_Ragged(), batch_size=3, num_workers=workers)
    err = ShapeError if workers == 0 else RuntimeError
    with pytest.raises(err, match=r"batch 1: .*field 1 of sample 1 of the batch has shape "
                                  r"\(4,\), sample 0 has \(2,\)"):
        for _ in loader:
            pass


def test_ndarray_samples_of_different_shapes():
    from sparsym.gluon.data.dataloader import default_batchify_fn
    with pytest.raises(ShapeError, match=r"sample 2 of the batch has shape \(3,\)"):
        default_batchify_fn([mx.nd.zeros(2), mx.nd.zeros(2), mx.nd.zeros(3)])
