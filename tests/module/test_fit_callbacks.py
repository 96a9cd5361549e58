"""fit with every callback hook, score, predict, iter_predict; mx.callback."""
from __future__ import annotations

import io
import logging
import os
import re

import numpy as np
import pytest

import sparsym as mx


def net():
    d = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(d, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def data(n=20, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(n, 3).astype(np.float32)
    return x, (x[:, 0] > 0.5).astype(np.float32)


def test_fit_calls_every_hook_in_order(caplog):
    x, y = data()
    train = mx.io.NDArrayIter(x, y, batch_size=4)
    val = mx.io.NDArrayIter(x[:8], y[:8], batch_size=4)
    events = []

    def batch_end(p):
        assert p.eval_metric.name == "accuracy" and "self" in p.locals
        events.append(("batch", p.epoch, p.nbatch))

    def epoch_end(epoch, sym, arg, aux):
        assert sym is not None and "fc_weight" in arg
        events.append(("epoch", epoch))

    def eval_batch_end(p):
        events.append(("eval_batch", p.epoch, p.nbatch))

    def eval_end(p):
        events.append(("eval_end", p.epoch, p.nbatch))

    mon = mx.monitor.Monitor(100, pattern="fc_output")
    mod = mx.mod.Module(net())
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=val, num_epoch=2, begin_epoch=0, batch_end_callback=batch_end,
                epoch_end_callback=[epoch_end], eval_batch_end_callback=eval_batch_end,
                eval_end_callback=eval_end, monitor=mon, eval_metric="acc",
                optimizer_params={"learning_rate": 0.1})
    exp = []
    for e in range(2):
        exp += [("batch", e, i) for i in range(5)] + [("epoch", e)]
        exp += [("eval_batch", e, 0), ("eval_batch", e, 1), ("eval_end", e, 2)]
    assert events == exp
    assert mon.step == 10 and mon.exes  # tic per batch, installed on the executor
    text = caplog.text
    assert re.search(r"Epoch\[1\] Train-accuracy=\d\.\d{6}", text)
    assert re.search(r"Epoch\[1\] Validation-accuracy=\d\.\d{6}", text)
    assert "Epoch[1] Time cost=" in text


def test_fit_requires_num_epoch():
    x, y = data()
    with pytest.raises(mx.MXNetError, match="number of epochs"):
        mx.mod.Module(net()).fit(mx.io.NDArrayIter(x, y, batch_size=4))


def test_speedometer_log_line(caplog, monkeypatch):
    clock = iter(np.arange(0, 100, 0.5))
    monkeypatch.setattr(mx.callback.time, "time", lambda: float(next(clock)))
    metric = mx.metric.create("acc")
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [1, 0]])])
    sp = mx.callback.Speedometer(batch_size=10, frequent=2)
    with caplog.at_level(logging.INFO, logger="sparsym"):
        for nbatch in range(5):
            sp(mx.callback.BatchEndParam(epoch=3, nbatch=nbatch, eval_metric=metric,
                                         locals=None))
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "Epoch[3] Batch [0-2]\tSpeed: 40.00 samples/sec\taccuracy=1.000000"
    assert len(lines) == 2 and metric.num_inst == 0  # auto_reset resets the local stats
    sp2 = mx.callback.Speedometer(batch_size=10, frequent=1)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sparsym"):
        sp2(mx.callback.BatchEndParam(0, 0, None, None))
        sp2(mx.callback.BatchEndParam(0, 1, None, None))
    assert caplog.records[0].getMessage() == "Iter[0] Batch [1]\tSpeed: 20.00 samples/sec"


def test_checkpoint_callbacks(tmp_path):
    x, y = data()
    train = mx.io.NDArrayIter(x, y, batch_size=4)
    mod = mx.mod.Module(net())
    p1, p2 = str(tmp_path / "a"), str(tmp_path / "b")
    mod.fit(train, num_epoch=4, epoch_end_callback=[mx.callback.do_checkpoint(p1, period=2),
                                                    mx.callback.module_checkpoint(
                                                        mod, p2, period=3,
                                                        save_optimizer_states=True)])
    files = sorted(os.listdir(tmp_path))
    assert files == ["a-0002.params", "a-0004.params", "a-symbol.json", "b-0003.params",
                     "b-0003.states", "b-symbol.json"]
    sym, arg, aux = mx.model.load_checkpoint(p1, 4)
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(arg[k].asnumpy(), v.asnumpy())
    assert sym.list_outputs() == ["softmax_output"]


def test_log_callbacks(caplog):
    metric = mx.metric.create("acc")
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [0, 1]])])
    with caplog.at_level(logging.INFO, logger="sparsym"):
        cb = mx.callback.log_train_metric(period=2, auto_reset=True)
        cb(mx.callback.BatchEndParam(1, 1, metric, None))
        cb(mx.callback.BatchEndParam(1, 2, metric, None))
        mx.callback.LogValidationMetricsCallback()(mx.callback.BatchEndParam(
            4, 0, mx.metric.create(["acc", "mse"]), None))
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs[0] == "Iter[1] Batch[2] Train-accuracy=0.500000"
    assert msgs[1] == "Epoch[4] Validation-accuracy=nan"
    assert msgs[2] == "Epoch[4] Validation-mse=nan"
    assert metric.num_inst == 0


def test_fit_tqdm_progress_bar(monkeypatch):
    import sys
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    x, y = data()
    mod = mx.mod.Module(net())
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=4), num_epoch=1, progress_bar=True)
    out = buf.getvalue()
    assert "epoch 0" in out and "5/5" in out and "accuracy=" in out


def test_score_predict_iter_predict():
    x, y = data(10)
    it = mx.io.NDArrayIter(x, y, batch_size=4)  # pad mode: 3 batches, the last padded by 2
    mod = mx.mod.Module(net())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    mod.init_params(mx.init.Xavier())
    out = mod.predict(it)
    assert out.shape == (10, 2)
    w = mod.get_params()[0]
    logits = x @ w["fc_weight"].asnumpy().T + w["fc_bias"].asnumpy()
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(out.asnumpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
    outs = mod.predict(it, merge_batches=False)
    assert [o[0].shape for o in outs] == [(4, 2), (4, 2), (2, 2)]
    assert isinstance(mod.predict(it, always_output_list=True), list)
    assert mod.predict(it, num_batch=1).shape == (4, 2)
    seen = [(nb, b.pad, o[0].shape) for o, nb, b in mod.iter_predict(it)]
    assert seen == [(0, 0, (4, 2)), (1, 0, (4, 2)), (2, 2, (2, 2))]
    # predict on a bare array
    np.testing.assert_allclose(mod.predict(mx.nd.array(x)).asnumpy(), out.asnumpy(), rtol=1e-6)
    ends = []
    res = mod.score(it, ["acc", "ce"], num_batch=2, score_end_callback=lambda p: ends.append(
        p.nbatch))
    assert [n for n, _ in res] == ["accuracy", "cross-entropy"] and ends == [2]
    acc = dict(mod.score(it, "acc"))["accuracy"]
    # pad rows count in MXNet's score (the metric sees whole batches)
    pred = np.concatenate([out.asnumpy(), out.asnumpy()[:2]]).argmax(1)
    assert acc == pytest.approx((pred == np.concatenate([y, y[:2]])).mean())
