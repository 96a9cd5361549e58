"""sparsym asks OpenMP for passive waiting unless the user chose a policy."""
import os
import subprocess
import sys

import pytest

_PROBE = "import sparsym, os; print(os.environ.get('OMP_WAIT_POLICY'))"


def _policy_after_import(env_policy):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_policy is not None:
        env["OMP_WAIT_POLICY"] = env_policy
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize("given,expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE"),
                                            ("passive", "passive")])
def test_import_sets_passive_wait_policy_unless_user_set_one(given, expected):
    assert _policy_after_import(given) == expected


_LAYER = """
import numpy as np, numba, sparsym as mx
from sparsym.kernels import _twins
_twins._ADAPTIVE = False  # parallel whenever the work is large enough
_twins.COMPILE_AFTER_S = 0.0  # and compiled at once
a = mx.nd.sparse.csr_matrix(np.eye(2000, dtype=np.float32))
mx.nd.sparse.dot(a, mx.nd.ones((2000, 64))).wait_to_read()
print(numba.threading_layer())
"""


def test_parallel_kernels_run_on_tbb_where_the_wheel_is_a_dependency():
    """pyproject installs tbb on x86-64 Linux; in a plain venv its libtbb.so.12 lies in
    <venv>/lib, off the loader's path, so sparsym preloads it: Numba must then pick TBB."""
    if not (sys.platform == "linux" and os.uname().machine == "x86_64"):
        pytest.skip("tbb is a dependency on x86-64 Linux and Windows only")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_THREADING")}
    out = subprocess.run([sys.executable, "-c", _LAYER], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "tbb"
