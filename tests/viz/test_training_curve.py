"""mx.callback.TrainingCurve: metrics per epoch recorded from Module.fit and drawn to a PNG."""
import doctest

import numpy as np
import pytest

import sparsym as mx

pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install matplotlib)")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    """(width, height) read from the IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _module_and_iters():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    train = mx.io.NDArrayIter(x, y, batch_size=16, shuffle=True)
    val = mx.io.NDArrayIter(x[:32], y[:32], batch_size=16)
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(fc, name="softmax"))
    return mod, train, val


def test_fit_records_train_and_validation_and_writes_png(tmp_path):
    path = tmp_path / "curve.png"
    curve = mx.callback.TrainingCurve(path, title="toy")
    mod, train, val = _module_and_iters()
    mod.fit(train, eval_data=val, num_epoch=3, optimizer_params={"learning_rate": 0.5},
            eval_metric="acc", progress_bar=False, **curve.callbacks())
    assert [e for e, _ in curve.history["train-accuracy"]] == [0, 1, 2]
    assert [e for e, _ in curve.history["validation-accuracy"]] == [0, 1, 2]
    for _, v in curve.history["train-accuracy"] + curve.history["validation-accuracy"]:
        assert 0.0 <= v <= 1.0
    # the last validation value is what score reports for the trained module
    assert curve.history["validation-accuracy"][-1][1] == pytest.approx(
        dict(mod.score(val, "acc"))["accuracy"])
    w, h = _png_size(path)
    assert w > 100 and h > 100


def test_several_metrics_one_panel_each(tmp_path):
    curve = mx.callback.TrainingCurve(tmp_path / "c.png")
    for e in range(4):
        curve.add(e, "train-mse", 1.0 / (e + 1))
        curve.add(e, "validation-mse", 1.2 / (e + 1))
        curve.add(e, "train-mae", 0.5 / (e + 1))
    fig = curve.figure()
    assert len(fig.axes) == 2
    assert [len(ax.lines) for ax in fig.axes] == [2, 1]
    assert [ax.get_ylabel() for ax in fig.axes] == ["mse", "mae"]
    only = mx.callback.TrainingCurve(tmp_path / "d.png", metrics=["mae"])
    only.history = curve.history
    assert [ax.get_ylabel() for ax in only.figure().axes] == ["mae"]
    curve.save()
    w1, _ = _png_size(tmp_path / "c.png")
    only.save()
    w2, _ = _png_size(tmp_path / "d.png")
    assert w1 > w2           # two panels side by side are wider than one


def test_empty_curve_still_draws(tmp_path):
    curve = mx.callback.TrainingCurve(tmp_path / "e.png")
    curve.epoch_end(0)
    assert _png_size(tmp_path / "e.png")[0] > 0
    assert curve.history == {}


def test_docstring_examples():
    import sparsym.plotting
    res = doctest.testmod(sparsym.plotting)
    assert res.attempted > 0 and res.failed == 0


def test_train_value_is_whole_epoch_with_speedometer_reset(tmp_path):
    # Speedometer(auto_reset=True) resets the local window; the curve keeps fit's
    # epoch value (global statistics) rather than the last window's
    curve = mx.callback.TrainingCurve(tmp_path / "s.png")
    mod, train, _ = _module_and_iters()
    logged = []
    metric = mx.metric.create("log_loss")

    def record(epoch, *args):
        logged.append(metric.get_global()[1])

    mod.fit(train, num_epoch=2, eval_metric=metric, progress_bar=False,
            batch_end_callback=[mx.callback.Speedometer(16, frequent=1), curve.batch_end],
            epoch_end_callback=[record, curve.epoch_end])
    assert [v for _, v in curve.history["train-log_loss"]] == pytest.approx(logged)
