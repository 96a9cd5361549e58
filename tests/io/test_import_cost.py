"""What ``import sparsym`` loads: heavy SciPy subpackages wait for the code that uses them."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_import_leaves_scipy_ndimage_linalg_special_unloaded():
    # scipy.ndimage alone cost 0.2-0.35 s of every import (the image warp needs it, and
    # imports it when it first runs)
    code = ("import sys; import sparsym; "
            "print(sorted(m for m in ('scipy.ndimage', 'scipy.linalg', 'scipy.special') "
            "if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"
