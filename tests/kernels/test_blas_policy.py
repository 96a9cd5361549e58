"""The BLAS thread policy: one thread by default, all for large GEMMs, the user's choice wins."""
import json
import os
import subprocess
import sys

import pytest

_PROBE = """
import json, numpy as np, sparsym as mx
from threadpoolctl import threadpool_info, threadpool_limits
from sparsym.kernels import blas
def now():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"][0]
out = {"before": now()}
x, w = mx.nd.ones((4, 8)), mx.nd.ones((3, 8))
mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=3).wait_to_read()
out["after_small_fc"] = now()
blas.idle_cores = lambda: 0.2  # every core busy: large GEMMs keep one thread too
with blas.gemm_threads(blas.LARGE_GEMM):
    out["large_when_busy"] = now()
blas.idle_cores = lambda: 2.0  # an idle machine
with blas.gemm_threads(blas.LARGE_GEMM):
    out["in_large_gemm"] = now()
out["after_large_gemm"] = now()
with threadpool_limits(limits=2, user_api="blas"):
    with blas.gemm_threads(blas.LARGE_GEMM):
        out["large_under_user_limit"] = now()
    out["after_under_user_limit"] = now()
out["state"] = blas.policy_state()
print(json.dumps(out))
"""


def _probe(**env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                        "BLIS_NUM_THREADS", "SPARSYM_BLAS_POLICY")}
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_one_thread_by_default_all_for_large_gemms_user_limits_kept():
    full = os.cpu_count() or 1
    if full < 2:
        pytest.skip("one core: BLAS has one thread anyway")
    out = _probe()
    if out["before"] < 2:
        pytest.skip("BLAS started with one thread here")
    assert out["after_small_fc"] == 1
    assert out["large_when_busy"] == 1
    assert out["in_large_gemm"] == out["before"]
    assert out["after_large_gemm"] == 1
    # an explicit threadpool_limits is the user's: the policy leaves it alone
    assert out["large_under_user_limit"] == 2 and out["after_under_user_limit"] == 2
    assert out["state"]["active"] and out["state"]["full"] == out["before"]


def test_idle_cores_reads_the_machine():
    from sparsym.kernels import blas
    blas._load[:] = [-10.0, 0.0, None]
    first = blas.idle_cores()
    assert first <= blas._ncpu()  # negative when more tasks run than there are cores


class _Clock:
    """Stands in for ``time`` in kernels.blas: monotonic and process seconds set by hand."""

    def __init__(self):
        self.now, self.cpu = 100.0, 10.0

    def monotonic(self):
        return self.now

    def process_time(self):
        return self.cpu


@pytest.mark.parametrize("busy, own, others", [
    (2.0, 2.0, 0.0),  # this process alone kept both cores busy: both are free for it
    (2.0, 0.5, 1.5),  # others used 1.5 cores
    (0.2, 0.0, 0.2),  # a quiet machine, this process idle
])
def test_idle_cores_leaves_out_this_process(monkeypatch, busy, own, others):
    from sparsym.kernels import blas
    clock, machine = _Clock(), [1000.0]
    monkeypatch.setattr(blas, "time", clock)
    monkeypatch.setattr(blas, "_machine", lambda: (machine[0], 1))
    monkeypatch.setattr(blas, "_ncpu", lambda: 2)
    blas._load[:] = [-10.0, 0.0, None]
    assert blas.idle_cores() == 2.0  # the first figure: one task running, this one
    clock.now += 0.1
    machine[0] += 0.2
    assert blas.idle_cores() == 2.0  # within SAMPLE_S: the last figure stands
    clock.now += 0.9
    machine[0] += busy - 0.2
    clock.cpu += own
    assert blas.idle_cores() == pytest.approx(2.0 - others)
    blas._load[:] = [-10.0, 0.0, None]


@pytest.mark.parametrize("running, own, idle", [
    (3, 2, 1.0),  # a pool thread of this process still running, one other process
    (3, 3, 2.0),  # all three running tasks are this process's threads
    (1, 1, 2.0),
])
def test_first_figure_leaves_out_this_processs_running_threads(monkeypatch, running, own,
                                                                idle):
    from sparsym.kernels import blas
    monkeypatch.setattr(blas, "_machine", lambda: (1000.0, running))
    monkeypatch.setattr(blas, "_own_running", lambda: own)
    monkeypatch.setattr(blas, "_ncpu", lambda: 2)
    blas._load[:] = [-10.0, 0.0, None]
    assert blas.idle_cores() == idle
    blas._load[:] = [-10.0, 0.0, None]


def test_own_running_counts_the_caller():
    from sparsym.kernels import blas
    assert blas._own_running() >= 1


@pytest.mark.parametrize("var", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                 "SPARSYM_BLAS_POLICY"])
def test_user_environment_turns_the_policy_off(var):
    out = _probe(**{var: "2" if var != "SPARSYM_BLAS_POLICY" else "0"})
    assert not out["state"]["active"]
    assert out["after_small_fc"] == out["before"] == out["after_large_gemm"]
