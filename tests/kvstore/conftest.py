"""One local Ray cluster (127.0.0.1) per test session, started by the first dist test."""
from __future__ import annotations

import os
import threading
import time

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")   # keep Ray on loopback
os.environ.setdefault("RAY_DEDUP_LOGS", "0")


@pytest.fixture(scope="session")
def ray_address():
    """Address of the session's Ray cluster (skips without Ray installed)."""
    pytest.importorskip("ray")
    from sparsym.kvstore.dist import connect_ray
    ray = connect_ray(None, num_cpus=2, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def run_workers(fn, workers, timeout=120):
    """Run ``fn(kv)`` for every worker in its own thread; return the results by rank.

    The first exception raised by a worker is re-raised here.
    """
    results, errors = {}, {}

    def body(kv):
        try:
            results[kv.rank] = fn(kv)
        except BaseException as err:   # re-raised in the test's thread
            errors[kv.rank] = err

    threads = [threading.Thread(target=body, args=(kv,), daemon=True) for kv in workers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        if errors:   # the others may wait for the failed one: give them a moment, then report
            deadline = min(deadline, time.monotonic() + 5)
        time.sleep(0.02)
    if errors:
        raise errors[min(errors)]
    if any(t.is_alive() for t in threads):
        raise TimeoutError(f"workers still running after {timeout}s")
    return [results[r] for r in sorted(results)]


def make_group(num_workers, num_servers, kv_type="dist_sync", **config):
    """A fresh job (its own actors) and its in-process workers (created concurrently)."""
    from sparsym.kvstore.dist import DistConfig, start_servers
    group = start_servers(config=DistConfig.from_env(num_workers=num_workers,
                                                     num_servers=num_servers, **config))
    workers = [group.worker(kv_type, rank) for rank in range(num_workers)]
    return group, workers


class _Jobs:
    """Helpers handed to the dist tests; every job made here is shut down after the test."""

    run_workers = staticmethod(run_workers)

    def __init__(self, address):
        self.address = address
        self.groups = []

    def make(self, num_workers, num_servers, kv_type="dist_sync", **config):
        group, workers = make_group(num_workers, num_servers, kv_type, **config)
        self.groups.append((group, workers))
        return group, workers

    def close(self):
        for group, workers in self.groups:
            for kv in workers:
                kv._detach()
            group.shutdown()


@pytest.fixture
def jobs(ray_address):
    """Make dist jobs with in-process workers: ``group, kvs = jobs.make(2, 2)``."""
    j = _Jobs(ray_address)
    yield j
    j.close()


@pytest.fixture(scope="module")
def sync_pair(ray_address):
    """One dist_sync job (2 workers x 2 servers, arrays of >= 10 elements split) shared by
    a test module: actors take seconds to start. Tests use distinct int keys; the ones that
    need the servers without an optimizer come before those that set one."""
    group, workers = make_group(2, 2, "dist_sync", bigarray_bound=10)
    yield group, workers
    for kv in workers:
        kv._detach()
    group.shutdown()


@pytest.fixture(scope="session")
def run():
    """``run(fn, workers)``: :func:`run_workers`."""
    return run_workers
