"""Run the seed tutorial unchanged with MXPKG=sparsym and compare with MXNet 1.9.1's JSON."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT.parent / "shared" / "seeds" / "seed_tutorial.py"
LOCAL_SEED = ROOT / "tests" / "conformance" / "seed_tutorial.py"
MXNET_JSON = ROOT / "tests" / "fixtures" / "mxnet" / "seed_tutorial_mxnet.json"


def _run(env_extra):
    script = SEED if SEED.exists() else LOCAL_SEED
    env = dict(os.environ, MXPKG="sparsym", **env_extra)
    res = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=600)
    line = [x for x in res.stdout.splitlines() if x.startswith("{")]
    assert line, res.stderr[-3000:]
    return res, json.loads(line[-1])


@pytest.fixture(scope="module")
def tutorial():
    return _run({"EPOCHS": "10"})


def test_tutorial_passes_its_assertion(tutorial):
    res, out = tutorial
    assert res.returncode == 0, res.stderr[-3000:]
    assert out["mse"][-1] < 1


def test_tutorial_matches_mxnet_on_non_timing_fields(tutorial):
    _, out = tutorial
    ref = json.loads(MXNET_JSON.read_text())
    for key in ("vars", "bind_stypes", "eval_b", "infer_stypes", "fallback", "linear_cls_bind"):
        assert out[key] == ref[key], key
    assert out["infer_stypes"] == ["default", "csr", "row_sparse"]
    assert out["bind_stypes"] == ["csr", "row_sparse"]


def test_tutorial_fallback_warning_printed_once_per_signature(tutorial):
    res, _ = tutorial
    # every fallback signature is reported at most once, however many batches run
    chunks = res.stderr.split("Storage type fallback detected")[1:]
    heads = [c.split("params =")[0] for c in chunks]
    assert len(heads) == len(set(heads))
