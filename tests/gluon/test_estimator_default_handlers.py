"""Estimator's handler preparation: _prepare_default_handlers,
_prepare_default_validation_handlers and _categorize_handlers with MXNet 1.9.1's defaults,
order, tuple layout and errors (probed on the oracle)."""
import warnings

import pytest

import sparsym as mx
from sparsym import gluon
from sparsym.gluon.contrib.estimator import Estimator
from sparsym.gluon.contrib.estimator.event_handler import (
    EarlyStoppingHandler,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
)


def _setup():
    net = gluon.nn.Dense(2)
    net.initialize()
    est = Estimator(net=net, loss=gluon.loss.L2Loss(), train_metrics=mx.metric.Accuracy(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd"))
    est.max_epoch, est.max_batch = 1, None
    data = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.ones((4, 3)), mx.nd.ones((4,))),
                                 batch_size=2)
    return est, data


def _names(handlers):
    return [type(h).__name__ for h in handlers]


def test_defaults_order_and_categories():
    est, data = _setup()
    handlers = est._prepare_default_handlers(None, None)
    assert _names(handlers) == ["GradientUpdateHandler", "MetricHandler", "StoppingHandler",
                                "LoggingHandler"]
    cats = est._categorize_handlers(handlers)
    assert isinstance(cats, tuple) and [_names(c) for c in cats] == [
        ["StoppingHandler", "LoggingHandler"], ["MetricHandler", "LoggingHandler"],
        ["LoggingHandler"], ["GradientUpdateHandler", "MetricHandler", "StoppingHandler",
                             "LoggingHandler"],
        ["StoppingHandler", "LoggingHandler"], ["LoggingHandler"]]
    handlers = est._prepare_default_handlers(data, None)
    assert _names(handlers) == ["GradientUpdateHandler", "MetricHandler", "ValidationHandler",
                                "StoppingHandler", "LoggingHandler"]
    # a user's handler of a default's class replaces it; a StoppingHandler is always added
    handlers = est._prepare_default_handlers(None, [StoppingHandler(max_epoch=3)])
    assert _names(handlers) == ["GradientUpdateHandler", "MetricHandler", "StoppingHandler",
                                "StoppingHandler", "LoggingHandler"]
    handlers = est._prepare_default_handlers(None, GradientUpdateHandler(priority=-5000))
    assert _names(handlers) == ["GradientUpdateHandler", "MetricHandler", "StoppingHandler",
                                "LoggingHandler"] and handlers[0].priority == -5000
    with pytest.warns(UserWarning, match="`greater` operator will be used"):
        early = EarlyStoppingHandler(monitor=est.train_metrics[0])
    handlers = est._prepare_default_handlers(None, [early])
    assert len(handlers) == 5 and handlers[2] is early
    assert isinstance(handlers[0], GradientUpdateHandler)
    assert isinstance(handlers[1], MetricHandler) and isinstance(handlers[4], LoggingHandler)


def test_validation_defaults_and_metric_checks():
    est, _ = _setup()
    assert _names(est._prepare_default_validation_handlers(None)) == ["MetricHandler",
                                                                      "LoggingHandler"]
    mine = LoggingHandler(metrics=est.val_metrics)
    handlers = est._prepare_default_validation_handlers([mine])
    assert _names(handlers) == ["MetricHandler", "LoggingHandler"] and handlers[1] is mine
    with pytest.raises(ValueError, match="refers to a metric instance"):
        est._prepare_default_validation_handlers([LoggingHandler(metrics=est.train_metrics)])
    with pytest.raises(ValueError, match="refers to a metric instance"):
        est._prepare_default_handlers(None, [MetricHandler(metrics=[mx.metric.Accuracy()])])
    with pytest.raises(ValueError, match="handlers must be an EventHandler or a list"):
        est._prepare_default_handlers(None, [object()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est._prepare_default_handlers(None, None)  # no warning from the defaults
