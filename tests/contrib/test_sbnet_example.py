"""examples/block_sparse_cnn.py runs on tiny settings and reports both models."""
import importlib.util
import json
import pathlib

import pytest

pytest.importorskip("sklearn")
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "block_sparse_cnn.py"


def test_block_sparse_cnn_tiny_run(capsys):
    spec = importlib.util.spec_from_file_location("block_sparse_cnn", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(["--canvas", "16", "--limit", "80", "--epochs", "1", "--batch-size", "16"])
    line = json.loads([ln for ln in capsys.readouterr().out.splitlines()
                       if ln.startswith("{")][-1])
    assert line == pytest.approx(res)
    assert line["example"] == "block_sparse_cnn" and line["canvas"] == 16
    assert 0 < line["pixel_density"] < 0.3
    for key in ("dense_acc", "sparse_acc"):
        assert 0.0 <= line[key] <= 1.0
    assert line["sparse_epoch_s"] > 0 and line["dense_epoch_s"] > 0
