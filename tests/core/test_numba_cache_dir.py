"""Kernels keep their compiled code when the package directory cannot hold a cache.

A system-wide or read-only install cannot write ``__pycache__`` next to the kernels; Numba
then caches in the user's cache directory (``$XDG_CACHE_HOME/numba``), so a second run loads
instead of compiling again. The test makes ``sparsym/kernels/__pycache__`` a plain file in a
copy of the package (unwritable even for root, where file modes do not stop writes).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import sparsym

_RUN = """
import numpy as np
from sparsym.kernels import libsvm
b = libsvm._as_u8(b"2.5 ")
print(libsvm._parse_float(b, 0, 3, libsvm._POW10)[0],
      sum(libsvm._parse_float.stats.cache_hits.values()))
"""


def test_kernels_cache_in_user_dir_when_package_dir_is_unwritable(tmp_path):
    pkg = tmp_path / "site" / "sparsym"
    shutil.copytree(Path(sparsym.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "kernels" / "__pycache__").write_text("not a directory")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(PYTHONPATH=str(pkg.parent), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               SPARSYM_COMPILE_NOTICE="0", PYTHONDONTWRITEBYTECODE="1")
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True,
                           text=True, timeout=300, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout.split())
    assert outs[0] == ["2.5", "0"]  # compiled on the first run
    assert outs[1] == ["2.5", "1"]  # loaded from the cache on the second
    cached = list((tmp_path / "xdg" / "numba").rglob("libsvm._parse_float*.nbi"))
    assert cached, "no index under $XDG_CACHE_HOME/numba"
