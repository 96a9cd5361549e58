"""``python -m sparsym`` prints the installation report quickly."""
import json
import os
import resource
import subprocess
import sys

import sparsym as mx
from sparsym import diagnose

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _child_cpu(args, env):
    """(CPU seconds, stdout) of a child Python run with ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def test_python_m_sparsym_prints_every_section_within_a_cpu_second_of_the_import():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # CPU time, not wall time: the test machine may be loaded. The report's own work is
    # measured against a bare import in the same conditions (the import alone is ~1.5 s of
    # CPU on a quiet 2-core machine and grows on a busy one)
    imp = min(_child_cpu(["-c", "import sparsym"], env)[0] for _ in range(2))
    cpu, out = _child_cpu(["-m", "sparsym"], env)
    assert cpu < imp + 1.0, (cpu, imp)
    for section in ("sparsym", "python", "packages", "oneDNN", "threading", "BLAS",
                    "numba cache", "CPU", "features", "environment"):
        assert f"----------{section}----------" in out, section
    assert f"version:   {mx.__version__}" in out and "MXNet API: 1.9.1" in out
    assert "numba threading layer:" in out and "why:" in out


def test_report_content_and_json():
    report = diagnose.collect()
    assert report["packages"]["numpy"].split(".")[0] == __import__("numpy").__version__[0]
    assert report["threading"]["numba threading layer"] in ("tbb", "omp", "workqueue")
    assert report["numba cache"]["files"] >= 0 and report["numba cache"]["size"].endswith("MiB")
    assert "INT64_TENSOR_SIZE" in report["features"]["enabled"].split()
    assert "CUDA" in report["features"]["disabled"].split()
    text = diagnose.format_report(report)
    assert text.startswith("----------sparsym----------\nversion:")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = ("import sys, runpy; sys.argv = ['sparsym', '--json']; "
            "runpy.run_module('sparsym', run_name='__main__')")
    res = subprocess.run([sys.executable, "-c", code + "\n"], capture_output=True, text=True,
                         env=env, timeout=120)
    data = json.loads(res.stdout)
    assert data["sparsym"]["MXNet API"] == mx.__mxnet_version__


def test_report_imports_no_optional_heavy_library():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = ("import sys, sparsym.diagnose as d; d.collect(); "
            "print(sorted(m for m in ('ray', 'onnx', 'onnxruntime', 'torch', 'sklearn') "
            "if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    assert res.stdout.strip() == "[]"
