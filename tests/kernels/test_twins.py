"""Serial/parallel twins: a parallel twin is compiled only when the work has earned it."""
import numpy as np
import pytest
from numba import prange

from sparsym.kernels import _twins


def _scale(x, out):
    for i in prange(x.shape[0]):
        out[i] = 2.0 * x[i]


@pytest.fixture
def fresh(monkeypatch):
    """Empty readiness and charge records; nothing counts as cached on disk."""
    monkeypatch.setattr(_twins, "_READY", set())
    monkeypatch.setattr(_twins, "_ON_DISK_SEEN", set())
    monkeypatch.setattr(_twins, "_SERIAL_S", {})
    monkeypatch.setattr(_twins, "_cached_on_disk", lambda disp: False)
    monkeypatch.setattr(_twins, "PAR_MIN_WORK", 1)
    monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 3600.0)


def test_parallel_twin_compiles_only_after_serial_time_earns_it(fresh, monkeypatch):
    k = _twins.Twin(_scale)
    x = np.arange(1000, dtype=np.float64)
    out = np.empty_like(x)
    k(len(x), x, out)
    np.testing.assert_array_equal(out, 2 * x)
    assert k.ser.overloads and not k.par.overloads  # large work, but not compiled yet
    assert _twins._SERIAL_S[k.par] >= 0.0
    monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)  # the serial time now suffices
    out[:] = 0
    k(len(x), x, out)
    np.testing.assert_array_equal(out, 2 * x)
    if _twins.numba.get_num_threads() >= 2:
        assert k.par.overloads
    assert _twins.par_allowed(k.par, k.par)


def test_gate_runs_serial_until_parallel_twin_is_ready(fresh, monkeypatch):
    ser, par = _twins.twins(_scale)
    calls = []
    x = np.ones(8)
    out = np.empty_like(x)

    def serial():
        calls.append("s")
        ser(x, out)

    def parallel():
        calls.append("p")
        par(x, out)

    monkeypatch.setattr(_twins, "_ADAPTIVE", False)
    for _ in range(3):
        _twins.run_gated("test-gate", 1 << 20, serial, parallel, par)
    assert calls == ["s"] * 3 and not par.overloads
    # a parallel twin already compiled (or cached on disk) is used at once
    par(x, out)
    calls.clear()
    _twins.run_gated("test-gate", 1 << 20, serial, parallel, par)
    assert calls == (["p"] if _twins.numba.get_num_threads() >= 2 else ["s"])


def _row_sums(lo, hi, indptr, data, out):
    for i in range(lo, hi):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p]
        out[i] = acc


def test_blockwise_runs_one_definition_whole_or_over_blocks(fresh):
    k = _twins.Blockwise(_row_sums)
    indptr = np.array([0, 2, 2, 5, 9], dtype=np.int64)
    data = np.arange(9.0)
    want = np.array([1.0, 0.0, 9.0, 26.0])
    out = np.zeros(4)
    k.run("test-blockwise", 1 << 20, indptr, indptr, data, out)
    np.testing.assert_array_equal(out, want)
    assert k.ser.overloads and not k.par.overloads  # the parallel driver has not earned it
    out[:] = 0
    k.par(np.array([0, 1, 3, 4]), indptr, data, out)
    np.testing.assert_array_equal(out, want)
    # generated from the body, cached next to it under its own name
    assert k.par.py_func.__name__ == "_row_sums_par"
    assert k.par.py_func.__code__.co_filename == _row_sums.__code__.co_filename


def test_balanced_bounds_split_segments_by_cost():
    ptr = np.array([0, 10, 10, 10, 10, 10, 20], dtype=np.int64)
    b = _twins.balanced_bounds(ptr, 2)
    assert b[0] == 0 and b[-1] == 6 and len(b) == 3
    assert 1 <= b[1] <= 5  # the two 10-entry rows land in different blocks
