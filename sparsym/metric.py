"""Evaluation metrics (mx.metric), MXNet 1.9 semantics."""
from __future__ import annotations

import json
import math

import numpy

from . import ndarray  # noqa: F401  (mx.metric exposes it, as MXNet's)
from . import storage as st
from .base import MXNetError, ParamAssertionError, numeric_types, string_types  # noqa: F401
from .ndarray.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "LogLoss",
           "AUC", "create", "np", "register", "check_label_shapes"]

_REGISTRY: dict = {}


def register(klass, *aliases):
    for n in (klass.__name__.lower(),) + aliases:
        _REGISTRY[n] = klass
    return klass


def alias(*names):
    def deco(klass):
        return register(klass, *names)
    return deco


def _np(x):
    return x.asnumpy() if isinstance(x, NDArray) else numpy.asarray(x)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError when the numbers (or shapes) of labels and predictions differ."""
    if not shape:
        la, pr = len(labels), len(preds)
    else:
        la, pr = labels.shape, preds.shape
    if la != pr:
        raise ValueError(f"Shape of labels {la} does not match shape of predictions {pr}")
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """Base metric: accumulates ``sum_metric`` over ``num_inst`` (local and global)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        config = self._kwargs.copy()
        config.update({"metric": type(self).__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        if self.output_names is not None:
            pred = [pred[n] for n in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[n] for n in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError()

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0

    def _add(self, value, n):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += n
        self.global_num_inst += n

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def get_name_value(self):
        name, value = self.get()
        if not isinstance(name, list):
            name, value = [name], [value]
        return list(zip(name, value))

    def get_global_name_value(self):
        if not self._has_global_stats:
            # a user metric that overrides get_name_value() is honoured, as in MXNet
            return self.get_name_value()
        name, value = self.get_global()
        if not isinstance(name, list):
            name, value = [name], [value]
        return list(zip(name, value))


@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        self.metrics = [create(m) for m in (metrics or [])]
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config

    def get_metric(self, index):
        """The ``index``-th child metric."""
        if not 0 <= index < len(self.metrics):
            raise ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}")
        return self.metrics[index]

    def update(self, labels, preds):
        for m in self.metrics:
            m.update(labels, preds)

    def update_dict(self, labels, preds):
        for m in self.metrics:
            m.update_dict(labels, preds)

    def reset(self):
        for m in getattr(self, "metrics", []):
            m.reset()

    def reset_local(self):
        for m in self.metrics:
            m.reset_local()

    def get(self):
        names, values = [], []
        for m in self.metrics:
            n, v = m.get()
            names += n if isinstance(n, list) else [n]
            values += v if isinstance(v, list) else [v]
        return names, values

    def get_global(self):
        names, values = [], []
        for m in self.metrics:
            n, v = m.get_global()
            names += n if isinstance(n, list) else [n]
            values += v if isinstance(v, list) else [v]
        return names, values


@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of argmax(pred, axis) == label."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p, lab = _np(pred), _np(label)
            if p.shape != lab.shape:
                p = numpy.argmax(p, axis=self.axis)
            p = p.astype(numpy.int64).ravel()
            lab = lab.astype(numpy.int64).ravel()
            check_label_shapes(lab, p)
            self._add(float((p == lab).sum()), len(p))


@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Label within the top_k predictions."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if top_k <= 1:
            raise MXNetError("Please use Accuracy if top_k is no more than 1")
        self.name += f"_{top_k}"

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p = numpy.argpartition(_np(pred).astype(numpy.float32), -self.top_k)
            lab = _np(label).astype(numpy.int64)
            n = p.shape[0]
            if p.ndim == 1:
                self._add(float((p.flat == lab.flat).sum()), n)
            else:
                k = min(self.top_k, p.shape[1])
                hit = sum(float((p[:, -j - 1].ravel() == lab.ravel()).sum()) for j in range(k))
                self._add(hit, n)


class _BinaryStats:
    """True/false positive/negative counts since the last local reset and since the last
    reset, under the names of MXNet's _BinaryClassificationMetrics (``F1.metrics``)."""

    _NAMES = ("true_positives", "false_positives", "false_negatives", "true_negatives")

    def __init__(self):
        self.reset_stats()

    def local_reset_stats(self):
        for n in self._NAMES:
            setattr(self, n, 0)

    def reset_stats(self):
        for n in self._NAMES:
            setattr(self, n, 0)
            setattr(self, "global_" + n, 0)

    def update_binary_stats(self, label, pred):
        """Count one (label, prediction) pair: argmax of the prediction rows vs the label."""
        p = _np(pred)
        lab = _np(label).astype(numpy.int64).ravel()
        pl = numpy.argmax(p, axis=1) if p.ndim > 1 else (p > 0.5).astype(numpy.int64)
        if len(numpy.unique(lab)) > 2:
            # MXNet's text (its class is _BinaryClassificationMetrics)
            raise ValueError("_BinaryClassificationMetrics currently only supports binary "
                             "classification.")
        counts = (((pl == 1) & (lab == 1)).sum(), ((pl == 1) & (lab == 0)).sum(),
                  ((pl == 0) & (lab == 1)).sum(), ((pl == 0) & (lab == 0)).sum())
        for n, c in zip(self._NAMES, counts):
            setattr(self, n, getattr(self, n) + int(c))
            setattr(self, "global_" + n, getattr(self, "global_" + n) + int(c))

    def counts(self, use_global=False):
        """(tp, fp, fn, tn), local or global."""
        pre = "global_" if use_global else ""
        return tuple(getattr(self, pre + n) for n in self._NAMES)

    def total(self, use_global=False):
        return sum(self.counts(use_global))

    total_examples = property(total)
    global_total_examples = property(lambda self: self.total(True))

    def _precision_recall(self, use_global):
        tp, fp, fn, _ = self.counts(use_global)
        return (float(tp) / (tp + fp) if tp + fp > 0 else 0.0,
                float(tp) / (tp + fn) if tp + fn > 0 else 0.0)

    precision = property(lambda self: self._precision_recall(False)[0])
    recall = property(lambda self: self._precision_recall(False)[1])
    global_precision = property(lambda self: self._precision_recall(True)[0])
    global_recall = property(lambda self: self._precision_recall(True)[1])

    def score_f1(self, use_global=False):
        prec, rec = self._precision_recall(use_global)
        return 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0

    fscore = property(score_f1)
    global_fscore = property(lambda self: self.score_f1(True))

    def matthewscc(self, use_global=False):
        """MXNet's MCC: 0 without samples; zero factors of the denominator count as 1."""
        if not self.total(use_global):
            return 0.0
        tp, fp, fn, tn = (float(c) for c in self.counts(use_global))
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: with ``average='macro'`` each update adds its own score (one instance
    per update, whatever the number of label/prediction pairs); with ``'micro'`` the score
    covers every sample since the last reset (global) or local reset (local), weighted by
    the number of samples (MXNet 1.9.1's num_inst / global_num_inst)."""

    _zero = 0

    def __init__(self, name, output_names=None, label_names=None, average="macro"):
        self.average = average
        self.stats = _BinaryStats()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _score(self, use_global):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.stats.update_binary_stats(label, pred)
        if self.average == "macro":
            # the counts restart at every update, so the local and global scores agree
            self._add(self._score(False), 1)
            self.stats.reset_stats()
        else:
            self.sum_metric = self._score(False) * self.stats.total()
            self.global_sum_metric = self._score(True) * self.stats.total(True)
            self.num_inst = self.stats.total()
            self.global_num_inst = self.stats.total(True)

    def reset(self):
        self.num_inst = self.global_num_inst = self._zero
        self.sum_metric = self.global_sum_metric = 0.0
        self.stats.reset_stats()

    def reset_local(self):
        self.num_inst = self._zero
        self.sum_metric = 0.0
        self.stats.local_reset_stats()


@alias()
class F1(_BinaryMetric):
    """Binary F1 score, ``2 * precision * recall / (precision + recall)`` (0 when both are
    0); ``average`` 'macro' (default) averages the updates' scores, 'micro' scores all
    samples together."""

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    @property
    def metrics(self):
        """The counts (MXNet's ``F1.metrics``)."""
        return self.stats

    def _score(self, use_global):
        return self.stats.score_f1(use_global)


@alias()
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary classification (``average`` as F1's)."""

    _zero = 0.0  # MXNet counts MCC's instances in floats
    _metrics = property(lambda self: self.stats, doc="The counts (MXNet's ``MCC._metrics``).")

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.stats.matthewscc(use_global)


@alias()
class Perplexity(EvalMetric):
    """exp(mean negative log-likelihood of the label), ignoring ``ignore_label``."""

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label, self.axis = ignore_label, axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds):
            p = _np(pred)
            lab = _np(label).astype(numpy.int64).reshape(-1)
            p = p.reshape(-1, p.shape[-1])
            probs = p[numpy.arange(len(lab)), numpy.clip(lab, 0, p.shape[-1] - 1)]
            if self.ignore_label is not None:
                keep = lab != self.ignore_label
                probs = probs[keep]
            loss -= float(numpy.sum(numpy.log(numpy.maximum(1e-10, probs))))
            num += len(probs)
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


def _read(x):
    """The values of ``x`` to read, not to keep: no copy of a dense NDArray."""
    return st.todense(x._raw) if isinstance(x, NDArray) else numpy.asarray(x)


def _regression_pairs(labels, preds):
    # the regression metrics only read the pairs (their arithmetic makes new arrays)
    labels, preds = check_label_shapes(labels, preds, True)
    for label, pred in zip(labels, preds):
        lab, p = _read(label), _read(pred)
        if lab.ndim == 1:
            lab = lab.reshape(lab.shape[0], 1)
        if p.ndim == 1:
            p = p.reshape(p.shape[0], 1)
        yield lab, p


@alias()
class MAE(EvalMetric):
    """Mean absolute error (per batch mean, averaged over batches as MXNet does)."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        for lab, p in _regression_pairs(labels, preds):
            self._add(float(numpy.abs(lab - p).mean()), 1)


@alias()
class MSE(EvalMetric):
    """Mean squared error (per batch mean, averaged over batches as MXNet does)."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        for lab, p in _regression_pairs(labels, preds):
            d = lab - p
            d *= d
            # the mean in the arrays' dtype (float32 batches give MXNet's float32 figure);
            # for float32/64 that is ndarray.mean's own sum and division, without its
            # Python-level wrapper (a batch-1 loop calls this once a step)
            if not d.size:
                self._add(float("nan"), 1)
            elif d.dtype == numpy.float32 or d.dtype == numpy.float64:
                self._add(float(numpy.add.reduce(d, axis=None) / d.size), 1)
            else:
                self._add(float(d.mean()), 1)


@alias()
class RMSE(EvalMetric):
    """Root mean squared error per batch, averaged over batches."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        for lab, p in _regression_pairs(labels, preds):
            d = lab - p
            self._add(float(numpy.sqrt((d * d).mean())), 1)


@alias("ce")
class CrossEntropy(EvalMetric):
    """Mean -log p[label]."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            lab = _np(label).ravel().astype(numpy.int64)
            p = _np(pred)
            if lab.shape[0] != p.shape[0]:
                raise ValueError(f"Shape of labels {lab.shape[0]} does not match shape of "
                                 f"predictions {p.shape[0]}")
            prob = p[numpy.arange(lab.shape[0]), lab]
            self._add(float((-numpy.log(prob + self.eps)).sum()), lab.shape[0])


@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """Same as cross-entropy, named nll-loss."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of labels and predictions: averaged per batch (``'macro'``) or
    over all samples seen (``'micro'``, Welford's online moments)."""

    def __init__(self, name="pearsonr", output_names=None, label_names=None,
                 average="macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset(self):
        super().reset()
        self._n = 0
        self._mean_l = self._mean_p = 0.0
        self._m2_l = self._m2_p = self._cov = 0.0

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            a = _np(label).ravel().astype(numpy.float64)
            b = _np(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(float(numpy.corrcoef(b, a)[0, 1]), 1)
                continue
            # MXNet's streaming form: label moments, cross term, then prediction moments
            self.num_inst += 1
            self.global_num_inst += 1
            n0 = self._n
            self._n = n0 + len(a)
            d = a - self._mean_l
            self._mean_l += float(numpy.sum(d / self._n))
            self._m2_l += float(numpy.sum(d * (a - self._mean_l)))
            self._cov += float(numpy.sum((a - self._mean_l) * (b - self._mean_p)))
            d = b - self._mean_p
            self._mean_p += float(numpy.sum(d / self._n))
            self._m2_p += float(numpy.sum(d * (b - self._mean_p)))

    def _pooled(self):
        """The micro correlation: every sample since the last reset (reset_local keeps the
        moments, as MXNet's)."""
        n = self._n
        den = (n - 1) * math.sqrt(self._m2_p / (n - 1)) * math.sqrt(self._m2_l / (n - 1))
        return (self.name, self._cov / den if den else float("nan"))

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        return self._pooled()

    def get_global(self):
        if self.average == "macro":
            return super().get_global()
        return (self.name, float("nan")) if self.global_num_inst == 0 else self._pooled()


@alias()
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Pearson on the confusion matrix), over the samples
    since the last reset (MXNet's ``pcc``)."""

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            lab = _np(label).astype(numpy.int64).ravel()
            p = _np(pred)
            p = p.argmax(axis=1) if p.shape != _np(label).shape else p.astype(numpy.int64)
            p = p.ravel()
            n = int(max(p.max(initial=0), lab.max(initial=0)))
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (p, lab), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self._calc_mcc(self.lcm))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self._calc_mcc(self.gcm))

    # MXNet defines the sums from the confusion matrices: the score times the count
    sum_metric = property(lambda self: self._calc_mcc(self.lcm) * self.num_inst)
    global_sum_metric = property(lambda self: self._calc_mcc(self.gcm) * self.global_num_inst)

    def reset(self):
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))


@alias()
class Loss(EvalMetric):
    """Mean of the outputs (for MakeLoss heads)."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for p in preds:
            a = _np(p)
            # summed in the array's dtype, as MXNet's nd.sum
            self._add(float(a.sum(dtype=a.dtype if a.dtype.kind == "f" else None)), a.size)


@alias()
class Torch(Loss):
    """Dummy metric for torch criterions (MXNet's ``torch``): the mean of the outputs."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@alias()
class Caffe(Loss):
    """Dummy metric for caffe criterions (MXNet's ``caffe``): the mean of the outputs."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@alias("log_loss")
class LogLoss(EvalMetric):
    """Binary log loss of P(label=1) predictions (column 1 for two-column predictions)."""

    def __init__(self, eps=1e-12, name="log_loss", output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p = _np(pred)
            p = p[:, 1] if p.ndim == 2 and p.shape[1] == 2 else p.ravel()
            y = _np(label).ravel()
            p = numpy.clip(p.astype(numpy.float64), self.eps, 1 - self.eps)
            self._add(float(-(y * numpy.log(p) + (1 - y) * numpy.log(1 - p)).sum()), len(y))


@alias("auc")
class AUC(EvalMetric):
    """Area under the ROC curve over all samples seen (rank statistic, ties averaged)."""

    def __init__(self, name="auc", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset(self):
        super().reset()
        self._scores, self._labels = [], []

    def reset_local(self):
        super().reset_local()
        self._scores, self._labels = [], []

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p = _np(pred)
            p = p[:, 1] if p.ndim == 2 and p.shape[1] == 2 else p.ravel()
            self._scores.append(p.astype(numpy.float64))
            self._labels.append(_np(label).ravel())
            self.num_inst = self.global_num_inst = 1

    def get(self):
        if not self._scores:
            return (self.name, float("nan"))
        from scipy.stats import rankdata
        s, y = numpy.concatenate(self._scores), numpy.concatenate(self._labels) > 0.5
        npos, nneg = int(y.sum()), int((~y).sum())
        if npos == 0 or nneg == 0:
            return (self.name, float("nan"))
        r = rankdata(s)
        return (self.name, float((r[y].sum() - npos * (npos + 1) / 2) / (npos * nneg)))

    get_global = get


class CustomMetric(EvalMetric):
    """Wrap ``feval(label, pred) -> value`` (or (sum, count))."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_np(label), _np(pred))
            # numpy scalars become Python numbers, so get() prints as it does under MXNet
            reval = tuple(v.item() if isinstance(v, numpy.generic) else v for v in reval) \
                if isinstance(reval, tuple) else \
                (reval.item() if isinstance(reval, numpy.generic) else reval)
            if isinstance(reval, tuple):
                self._add(reval[0], reval[1])
            else:
                self._add(reval, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):  # noqa: F811  (MXNet's name)
    """Create a CustomMetric from a numpy function."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


def create(metric, *args, **kwargs):
    """Create a metric from a name, a callable, an instance or a list of those; also, as
    MXNet's registry, from a config: a dict or the JSON of ``get_config()`` (``{...}``) or
    of ``[name, kwargs]``."""
    if isinstance(metric, dict):
        cfg = dict(metric)
        if "metric" not in cfg:
            raise ValueError(f"metric config {metric!r} names no 'metric'")
        return create(cfg.pop("metric"), *args, **cfg, **kwargs)
    if isinstance(metric, str) and metric.startswith(("{", "[")):
        if args or kwargs:
            raise ValueError("a metric JSON config takes no further arguments")
        cfg = json.loads(metric)
        if isinstance(cfg, list):
            return create(cfg[0], **cfg[1])
        return create(cfg)
    if callable(metric) and not isinstance(metric, EvalMetric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, EvalMetric):
        return metric
    if isinstance(metric, list):
        comp = CompositeEvalMetric()
        for m in metric:
            comp.add(create(m, *args, **kwargs))
        return comp
    if isinstance(metric, str):
        key = metric.lower()
        if key not in _REGISTRY:
            # MXNet asserts here: an AssertionError (and a ValueError)
            raise ParamAssertionError(f"{metric} is not registered. Please register with "
                                      f"metric.register first (registered: {sorted(_REGISTRY)})")
        return _REGISTRY[key](*args, **kwargs)
    raise TypeError(f"metric must be a str, callable, EvalMetric or list, got "
                    f"{type(metric).__name__}")
