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
