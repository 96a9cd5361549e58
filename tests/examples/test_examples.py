"""Every example runs on tiny settings, prints its final metric, and learns something."""
import contextlib
import importlib.util
import io
import json
import pathlib
import runpy
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(name, argv, capsys):
    """main(argv) of examples/<name>.py; returns (its result, the JSON line it printed)."""
    result = _load(name).main(argv)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    assert lines, f"{name} printed no JSON result line"
    return result, json.loads(lines[-1])


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_help(script, monkeypatch):
    monkeypatch.setattr(sys, "argv", [script, "--help"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
        runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    assert exc.value.code == 0
    assert "usage:" in out.getvalue() and "--" in out.getvalue()


def test_matrix_factorization(capsys, tmp_path):
    png = tmp_path / "mf.png"
    (rmse, baseline), line = _run("matrix_factorization", [
        "--num-users", "60", "--num-items", "30", "--num-ratings", "5000", "--epochs", "8",
        "--batch-size", "64", "--lr", "0.2", "--plot", str(png)], capsys)
    assert line["example"] == "matrix_factorization"
    assert line["val_rmse"] == pytest.approx(rmse, abs=1e-4)
    assert line["user_weight_grad_stype"] == "row_sparse"
    assert rmse < 0.75 * baseline          # well below predicting the mean rating
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_matrix_factorization_dense_matches_sparse_path(capsys):
    argv = ["--num-users", "40", "--num-items", "20", "--num-ratings", "1200", "--epochs", "2",
            "--batch-size", "64"]
    (sparse_rmse, _), sparse_line = _run("matrix_factorization", argv, capsys)
    (dense_rmse, _), dense_line = _run("matrix_factorization", argv + ["--dense"], capsys)
    assert dense_line["user_weight_grad_stype"] == "default"
    # momentum SGD: the lazy row_sparse update equals the dense one only on touched rows,
    # so the two runs agree closely but not exactly
    assert sparse_rmse == pytest.approx(dense_rmse, rel=0.05)


def test_factorization_machine(capsys):
    res, line = _run("factorization_machine", [
        "--num-features", "500", "--num-fields", "8", "--train-rows", "6000",
        "--test-rows", "2000", "--epochs", "3", "--batch-size", "128"], capsys)
    assert set(res) == {"log_loss", "auc"}
    assert line["test_auc"] == pytest.approx(res["auc"], abs=1e-4)
    assert 0.6 < res["auc"] <= line["generating_model_auc"] + 0.02
    assert res["log_loss"] < 0.69          # better than a constant 0.5 prediction


def test_factorization_machine_reads_given_libsvm_files(capsys, tmp_path):
    fm = _load("factorization_machine")
    cols, labels, _ = fm.make_fm_data(1200, 200, 6, 2, seed=1)
    fm.write_libsvm(tmp_path / "tr.libsvm", cols[:1000], labels[:1000])
    fm.write_libsvm(tmp_path / "te.libsvm", cols[1000:], labels[1000:])
    res, line = _run("factorization_machine", [
        "--data-train", str(tmp_path / "tr.libsvm"), "--data-test", str(tmp_path / "te.libsvm"),
        "--num-features", "200", "--epochs", "1", "--batch-size", "100"], capsys)
    assert "generating_model_auc" not in line and 0.0 <= res["auc"] <= 1.0
    with pytest.raises(SystemExit):
        fm.parse_args(["--data-train", "x.libsvm"])


def test_wide_deep(capsys):
    (acc, majority, bayes), line = _run("wide_deep", [
        "--train-rows", "4000", "--test-rows", "1000", "--num-linear", "300", "--epochs", "4",
        "--lr", "0.005"], capsys)
    assert line["test_accuracy"] == pytest.approx(acc, abs=1e-4)
    assert majority + 0.05 < acc <= bayes + 0.03


def test_sparse_linear_regression(capsys):
    hist = _load("sparse_linear_regression").main(
        ["--rows", "200", "--features", "50", "--epochs", "3", "--batch-size", "8"])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["mse"][-1] == pytest.approx(hist) and line["mse"][-1] < line["mse"][0]


def test_image_classification_learns_the_synthetic_classes(capsys):
    acc, line = _run("image_classification", [
        "--model", "lenet", "--image-size", "28", "--num-train", "512", "--num-val", "256",
        "--noise", "1.0", "--epochs", "3", "--batch-size", "64"], capsys)
    assert line["example"] == "image_classification" and line["samples"] == 3 * 512
    assert line["val_acc"] == pytest.approx(acc, abs=1e-4)
    assert acc > 0.3                      # ten classes: chance is 0.1
