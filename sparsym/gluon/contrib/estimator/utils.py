"""Argument checks shared by the estimator and its handlers."""
from __future__ import annotations

from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss


def check_metrics(metrics):
    """A list of simple metrics from a metric, a composite metric, a list or None."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, refer to "
                         f"mxnet.metric.EvalMetric: {metrics}")
    return metrics


def check_handler_metric_ref(handler, known_metrics):
    """Raise when a handler's ``*metric*`` attribute holds a metric the estimator does not
    update (it would report a value that never changes)."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        ref = getattr(handler, attribute)
        for metric in (ref if isinstance(ref, list) else [ref] if ref else []):
            if metric not in known_metrics:
                raise ValueError(
                    f"Event handler {type(handler).__name__} refers to a metric instance "
                    f"{metric} outside of the known training and validation metrics. Please "
                    "use the metrics from estimator.train_metrics and estimator.val_metrics "
                    "instead.")


def suggest_metric_for_loss(loss):
    """Accuracy for a softmax cross-entropy loss, else None."""
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None
