"""The first-use compile notice: one line on stderr once compilation passes the threshold."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numba
    import sparsym
    from sparsym import _compile_notice as cn
    cn.THRESHOLD_S = {threshold}

    @numba.njit(cache=False)
    def f(x):
        return x * 2 + 1

    for t in (1, 1.0, 1j):       # three fresh compilations
        f(t)
    print("total", cn.compile_seconds() > 0)
""")


def _run(threshold, env_extra=None):
    import os
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", SCRIPT.format(threshold=threshold)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_notice_printed_once_when_compiling_passes_the_threshold():
    p = _run(0.0)
    assert p.returncode == 0, p.stderr
    assert "total True" in p.stdout
    assert p.stderr.count("sparsym: compiling kernels for their first use") == 1, p.stderr


def test_no_notice_below_the_threshold_or_when_silenced():
    p = _run(1e9)
    assert p.returncode == 0, p.stderr
    assert "compiling kernels" not in p.stderr
    p = _run(0.0, {"SPARSYM_COMPILE_NOTICE": "0"})
    assert p.returncode == 0, p.stderr
    assert "compiling kernels" not in p.stderr
