"""gluon.contrib.estimator: the fit loop, its default and user handlers, checkpoints and
resuming, early stopping (behaviour probed on MXNet 1.9.1)."""
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym import gluon
from sparsym.gluon.contrib.estimator import (
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochEnd,
    Estimator,
    LoggingHandler,
    ValidationHandler,
)


def _data(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("float32")
    return gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=16)


def _estimator(lr=0.5, **kwargs):
    net = gluon.nn.Dense(2)
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    return Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, **kwargs)


def test_fit_trains_and_names_the_default_metrics():
    est = _estimator()
    assert [m.name for m in est.train_metrics] == ["training accuracy",
                                                   "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy",
                                                 "validation softmaxcrossentropyloss"]
    est.fit(_data(), val_data=_data(seed=1), epochs=5)
    assert est.train_metrics[0].get()[1] > 0.85
    assert est.val_metrics[0].get()[1] > 0.8
    est.evaluate(_data(seed=2))
    assert est.val_metrics[1].get()[1] < 0.5


def test_fit_by_batches_stops_mid_epoch():
    seen = []

    class Count(BatchEnd):
        def batch_end(self, estimator, *args, **kwargs):
            seen.append(kwargs["batch"][0].shape[0])

    est = _estimator()
    est.fit(_data(), batches=6, event_handlers=[Count()])
    assert seen == [16] * 6


def test_exactly_one_of_epochs_and_batches_and_loader_inputs():
    est = _estimator()
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(_data(), epochs=1, batches=2)
    with pytest.raises(ValueError, match="only support input as Gluon DataLoader"):
        est.fit(mx.nd.zeros((4, 4)), epochs=1)
    with pytest.raises(ValueError, match="loss must be a Loss"):
        Estimator(gluon.nn.Dense(2), loss=lambda a, b: a)


def test_a_handler_with_an_unknown_metric_is_refused():
    est = _estimator()
    with pytest.raises(ValueError, match="outside of the known training and validation"):
        est.fit(_data(), epochs=1, event_handlers=[LoggingHandler(metrics=[mx.metric.MAE()])])


def test_validation_every_k_batches_and_logging_per_batch(capsys):
    calls = []
    est = _estimator()
    val = ValidationHandler(_data(seed=1), lambda **kw: calls.append(kw["batch_axis"]),
                            epoch_period=None, batch_period=2)
    est.fit(_data(), epochs=1, event_handlers=[val, LoggingHandler(
        log_interval=2, metrics=est.train_metrics)])
    assert calls == [0, 0]
    text = capsys.readouterr().out
    assert "[Epoch 0][Batch 2][Samples 48]" in text and "Train finished" in text


def test_checkpoints_rotate_and_resume(tmp_path):
    est = _estimator()
    est.net.hybridize()
    ck = CheckpointHandler(str(tmp_path), model_prefix="m", max_checkpoints=2,
                           monitor=est.train_metrics[0], save_best=True)
    est.fit(_data(), epochs=3, event_handlers=[ck])
    files = sorted(os.listdir(tmp_path))
    assert files == ["m-best.params", "m-best.states", "m-epoch1batch8.params",
                     "m-epoch1batch8.states", "m-epoch2batch12.params",
                     "m-epoch2batch12.states", "m-symbol.json"]
    weight = est.net.weight.data().asnumpy()
    est2 = _estimator()
    ck2 = CheckpointHandler(str(tmp_path), model_prefix="m", resume_from_checkpoint=True)
    stops = []

    class Stop(EpochEnd):
        def epoch_end(self, estimator, *args, **kwargs):
            stops.append(estimator.max_epoch)

    est2.fit(_data(), epochs=5, event_handlers=[ck2, Stop()])
    assert stops == [2, 2]                 # resumed after epoch 2 of 5: two epochs left
    assert "m-epoch4batch20.params" in os.listdir(tmp_path)   # numbering continues
    est3 = _estimator()
    est3.net.load_parameters(str(tmp_path / "m-epoch2batch12.params"))
    np.testing.assert_array_equal(est3.net.weight.data().asnumpy(), weight)
    with pytest.raises(ValueError, match="maximum number of epoch 3 reached"):
        _estimator().fit(_data(), epochs=3, event_handlers=[
            CheckpointHandler(str(tmp_path), model_prefix="m", resume_from_checkpoint=True)])


def test_early_stopping_on_a_loss_that_stops_improving():
    est = _estimator(lr=0.0)                   # nothing learns: the loss stays put
    stop = EarlyStoppingHandler(monitor=est.train_metrics[1], patience=2, min_delta=1e-3)
    assert stop.monitor_op is np.less          # a loss improves downwards
    est.fit(_data(), epochs=20, event_handlers=[stop])
    assert stop.stop_training and stop.stopped_epoch == 2
    assert EarlyStoppingHandler(monitor=est.train_metrics[0]).monitor_op is np.greater
