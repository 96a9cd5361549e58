"""The allocator policy set at import (sparsym/_malloc.py): glibc keeps freed batch-sized
blocks, unless the user chose malloc's thresholds or turned the policy off."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CODE = "import sparsym, sparsym._malloc as m; print(m.APPLIED)"


def _applied(**env):
    full = {k: v for k, v in os.environ.items()
            if not k.startswith("MALLOC_") and k not in ("SPARSYM_MALLOC_KEEP", "GLIBC_TUNABLES")}
    full.update(env, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", CODE], env=full, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux") or
                    not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"),
                    reason="the policy is glibc's mallopt")
def test_glibc_keeps_freed_blocks_unless_the_user_chose():
    assert _applied()
    assert not _applied(SPARSYM_MALLOC_KEEP="0")
    assert not _applied(MALLOC_TRIM_THRESHOLD_="1000000")
    assert not _applied(GLIBC_TUNABLES="glibc.malloc.trim_threshold=1000000")
