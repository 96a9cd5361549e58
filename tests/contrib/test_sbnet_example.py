"""examples/block_sparse_cnn.py runs on tiny settings with the project's dependencies only,
reports both models, and ``--seed`` reproduces a run (its data come from mx.random)."""
import importlib.util
import json
import pathlib

import numpy as np
import pytest

import sparsym as mx

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "block_sparse_cnn.py"
TINY = ["--canvas", "16", "--limit", "80", "--epochs", "1", "--batch-size", "16"]


def _example():
    spec = importlib.util.spec_from_file_location("block_sparse_cnn", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_block_sparse_cnn_tiny_run(capsys):
    res = _example().main(TINY)
    line = json.loads([ln for ln in capsys.readouterr().out.splitlines()
                       if ln.startswith("{")][-1])
    assert line == pytest.approx(res)
    assert line["example"] == "block_sparse_cnn" and line["canvas"] == 16
    assert 0 < line["pixel_density"] < 0.3
    for key in ("dense_acc", "sparse_acc"):
        assert 0.0 <= line[key] <= 1.0
    assert line["sparse_epoch_s"] > 0 and line["dense_epoch_s"] > 0


def test_seed_reproduces_the_data_and_the_run():
    ex = _example()
    mx.random.seed(5)
    a = ex.load_digits(1, 50), ex.place(ex.load_digits(1, 5)[0], 12)
    mx.random.seed(5)
    b = ex.load_digits(1, 50), ex.place(ex.load_digits(1, 5)[0], 12)
    for x, y in zip((a[0][0], a[0][1], a[1]), (b[0][0], b[0][1], b[1])):
        np.testing.assert_array_equal(x, y)
    imgs, labels = a[0]
    assert imgs.shape == (50, 8, 8) and 0 <= imgs.min() and imgs.max() <= 1
    assert sorted(set(labels.tolist())) == list(range(10))
    mx.random.seed(6)
    assert not np.array_equal(ex.load_digits(1, 50)[0], imgs)
    runs = [ex.main(TINY + ["--seed", "7"]) for _ in range(2)]
    for key in ("pixel_density", "dense_acc", "sparse_acc"):
        assert runs[0][key] == runs[1][key]
