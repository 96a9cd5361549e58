"""The package's import moves its long-lived objects to the collector's permanent generation."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CODE = "import gc, sparsym; print(gc.get_freeze_count())"


def _frozen(env_value):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("SPARSYM_GC_FREEZE", None)
    if env_value is not None:
        env["SPARSYM_GC_FREEZE"] = env_value
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[-1])


def test_import_freezes_its_objects_unless_asked_not_to():
    assert _frozen(None) > 10000
    assert _frozen("0") == 0
