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


def test_idle_cores_reads_the_load():
    from sparsym.kernels import blas
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    blas._load[0] = -10.0
    assert blas.idle_cores() == pytest.approx(n - os.getloadavg()[0], abs=1.0)


@pytest.mark.parametrize("var", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                 "SPARSYM_BLAS_POLICY"])
def test_user_environment_turns_the_policy_off(var):
    out = _probe(**{var: "2" if var != "SPARSYM_BLAS_POLICY" else "0"})
    assert not out["state"]["active"]
    assert out["after_small_fc"] == out["before"] == out["after_large_gemm"]
