"""The NumPy twins that run while Numba is not set up in a process give the kernels' results
(the optimizer updates bit for bit), and a fresh process switches to Numba after
NUMBA_AFTER_WORK of them or as soon as anything else sets Numba up."""
import subprocess
import sys

import numpy as np
import pytest

from sparsym.kernels import _arrays, _twins, optim, rsp
from sparsym.kernels import reduce as kred
from sparsym.storage import RSP


def _both(monkeypatch, f):
    """f() with the NumPy twins, then with the compiled kernels."""
    with monkeypatch.context() as m:
        m.setattr(_twins, "numba_on", lambda: False)
        a = f()
    return a, f()


UPDATES = [("sgd", optim.sgd_update, optim.sgd_update_lazy, 0, {}),
           ("sgd_mom", optim.sgd_mom_update, optim.sgd_mom_update_lazy, 1, {"momentum": 0.9}),
           ("adam", optim.adam_update, optim.adam_update_lazy, 2, {})]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("clip", [None, 0.01])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,dense,lazy_fn,nstates,kw", UPDATES)
def test_optimizer_twins_bit_for_bit(monkeypatch, name, dense, lazy_fn, nstates, kw, lazy,
                                     clip, dtype):
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((50, 7)).astype(dtype)
    st0 = [np.abs(rng.standard_normal((50, 7))).astype(dtype) for _ in range(nstates)]
    rows = np.sort(rng.choice(50, 20, replace=False)).astype(np.int64)
    g = (RSP(rng.standard_normal((20, 7)).astype(dtype), rows, (50, 7)) if lazy
         else rng.standard_normal((50, 7)).astype(dtype))

    def run():
        w, st = w0.copy(), [s.copy() for s in st0]
        (lazy_fn if lazy else dense)(w, g, *st, 0.1, wd=1e-3, rescale_grad=0.5,
                                     clip_gradient=clip, **kw)
        return [w] + st
    a, b = _both(monkeypatch, run)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    if lazy:  # rows without a gradient are untouched
        rest = np.setdiff1d(np.arange(50), rows)
        np.testing.assert_array_equal(a[0][rest], w0[rest])


def test_sgd_dense_entry_point_twin(monkeypatch):
    rng = np.random.default_rng(4)
    w0, g = rng.standard_normal((8, 3, 2)).astype(np.float32), np.ones((8, 3, 2), np.float32)

    def run():
        w, m = w0.copy(), np.full_like(w0, 0.5)
        assert optim.sgd_dense(w, g, m, 0.1, 0.9, 1e-4, 0.25, 0.1)
        return w, m
    a, b = _both(monkeypatch, run)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_clip_ids_twin_casts_like_the_kernel(monkeypatch):
    ids = np.random.default_rng(5).integers(-5, 120, 300).astype(np.float32)
    ids[:4] = [np.nan, 1e30, -1e30, 99.9]
    a, b = _both(monkeypatch, lambda: rsp.clip_ids(ids, 100))
    assert a.dtype == b.dtype == np.int64
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n", [100, 5000])
def test_unique_positions_twin(monkeypatch, n):
    ids = np.random.default_rng(6).integers(0, n, 700)
    (ua, pa), (ub, pb) = _both(monkeypatch, lambda: _arrays.unique_positions(ids, n))
    np.testing.assert_array_equal(ua, ub)
    np.testing.assert_array_equal(pa, pb)
    np.testing.assert_array_equal(ua[pa], ids)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_grad_twin(monkeypatch, dtype):
    rng = np.random.default_rng(7)
    ids = rng.integers(0, 40, (30, 10)).astype(np.float32)
    og = rng.standard_normal((30, 10, 6)).astype(dtype)
    a, b = _both(monkeypatch, lambda: rsp.embedding_grad_rsp(ids, og, 40))
    np.testing.assert_array_equal(a.indices, b.indices)
    # the twin rounds each sum once, the kernel after each addition
    np.testing.assert_allclose(a.data, b.data, rtol=1e-5, atol=1e-6)
    dense = np.zeros((40, 6), dtype)
    np.add.at(dense, ids.astype(np.int64).ravel(), og.reshape(-1, 6))
    np.testing.assert_allclose(a.data, dense[a.indices], rtol=1e-5, atol=1e-6)


def test_broadcast_block_twin(monkeypatch):
    g = np.random.default_rng(8).standard_normal((5, 1, 4)).astype(np.float32)
    a, b = _both(monkeypatch, lambda: kred.broadcast_block(g, (5, 3, 4), (1,)))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, np.broadcast_to(g, (5, 3, 4)))


_FRESH = """
import numpy as np, sys
from sparsym.kernels import _twins, rsp
_twins.NUMBA_AFTER_WORK = {after}
ids = np.arange(300, dtype=np.float32)
for _ in range(3):
    rsp.clip_ids(ids, 1000)
print(_twins.numba_on(), 'numba.np.arraymath' in sys.modules)
"""


@pytest.mark.parametrize("after,want", [(10**12, "False False"), (1, "True True")])
def test_fresh_process_switches_after_the_work(after, want):
    """A short job never sets Numba up; past NUMBA_AFTER_WORK the compiled kernels run."""
    r = subprocess.run([sys.executable, "-c", _FRESH.format(after=after)],
                       capture_output=True, text=True, check=True)
    assert r.stdout.split("\n")[-2] == want
