"""Event handlers of the estimator: classes with ``train_begin``, ``epoch_begin``,
``batch_begin``, ``batch_end``, ``epoch_end`` or ``train_end`` hooks (a handler's class says
which it has). ``batch_end`` and ``epoch_end`` return True to stop training."""
from __future__ import annotations

import os
import re
import time
import warnings

import numpy as np

from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as LossMetric
from .utils import check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler"]


class EventHandler:
    """Base of every handler."""


def check_event_handlers(handlers):
    """A new list of handlers from one handler, a list or None."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError(f"handlers must be an EventHandler or a list of EventHandler, got: "
                         f"{handlers}")
    return handlers


def _hook_class(name, method, when, stops):
    """A handler base with one no-op hook ``method`` (returning False where a hook can stop
    training)."""
    def hook(self, estimator, *args, **kwargs):
        return False if stops else None
    hook.__name__ = method
    doc = f"Has a hook {when}" + (" (True stops training)." if stops else ".")
    return type(name, (EventHandler,), {method: hook, "__doc__": doc, "__module__": __name__})


TrainBegin = _hook_class("TrainBegin", "train_begin", "before training starts", False)
TrainEnd = _hook_class("TrainEnd", "train_end", "after training ends", False)
EpochBegin = _hook_class("EpochBegin", "epoch_begin", "at the start of every epoch", False)
EpochEnd = _hook_class("EpochEnd", "epoch_end", "at the end of every epoch", True)
BatchBegin = _hook_class("BatchBegin", "batch_begin", "before every batch", False)
BatchEnd = _hook_class("BatchEnd", "batch_end", "after every batch", True)


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop after ``max_epoch`` epochs or ``max_batch`` batches (the estimator's ``fit``
    arguments, read at ``train_begin``)."""

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch, self.max_batch = max_epoch, max_batch
        self.current_batch = self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch, self.max_batch = estimator.max_epoch, estimator.max_batch
        self.current_batch = self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        self.stop_training = self.stop_training or self.current_batch == self.max_batch
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        self.stop_training = self.stop_training or self.current_epoch == self.max_epoch
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset ``metrics`` every epoch and update them every batch (a Loss metric with the
    loss, the others with labels and predictions)."""

    def __init__(self, metrics, priority=-1000):
        self.metrics = check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            if isinstance(metric, LossMetric):
                metric.update(0, kwargs["loss"])
            else:
                metric.update(kwargs["label"], kwargs["pred"])


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Call ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` every
    ``epoch_period`` epochs and every ``batch_period`` batches."""

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data, self.eval_fn = val_data, eval_fn
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = self.current_epoch = 0

    def _evaluate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._evaluate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._evaluate(estimator)


def _metric_text(metrics):
    return ", ".join("%s: %.4f" % m.get() for m in metrics)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log the metrics at the end of every epoch (``log_interval='epoch'``) or every
    ``log_interval`` batches, with timings, through ``estimator.logger``."""

    def __init__(self, log_interval="epoch", metrics=None, priority=np.inf):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = check_metrics(metrics)
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = self.current_epoch = self.processed_samples = 0
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.batch_index = self.current_epoch = self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        msg = "Train finished using total %ds with %d epochs. " % (
            time.time() - self.train_start, self.current_epoch)
        estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.processed_samples += kwargs["batch"][0].shape[0]
            self.log_interval_time += time.time() - self.batch_start
            if self.batch_index % self.log_interval == 0:
                msg = "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs " % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        if any("training" in m.name for m in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch,
                                                  time.time() - self.epoch_start)
        estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0


def _monitor_op(monitor, mode, who):
    """np.greater or np.less: how ``monitor`` improves under ``mode``."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who} mode {mode} is unknown, fallback to auto mode.", RuntimeWarning,
                      stacklevel=3)
        mode = "auto"
    if mode == "auto":
        # accuracy-like metrics grow; MXNet 1.9.1 picks 'greater' for every metric here.
        # MXNet's notice names the operator chosen (its text)
        name = monitor.get()[0]
        mode = "max" if "acc" in name.lower() or "f1" in name.lower() else "min"
        if mode == "max":
            warnings.warn(f"`greater` operator will be used to determine if {name} has "
                          "improved. Please specify `mode='min'` to use the `less` operator. "
                          "Specify `mode='max' to disable this warning.`", stacklevel=3)
        else:
            warnings.warn(f"`less` operator will be used to determine if {name} has improved. "
                          "Please specify `mode='max'` to use the `greater` operator. Specify "
                          "`mode='min' to disable this warning.`", stacklevel=3)
    return np.greater if mode == "max" else np.less


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save the parameters and trainer states every ``epoch_period`` epochs / ``batch_period``
    batches as ``<model_prefix>-epoch<E>batch<B>.params/.states`` in ``model_dir`` (keeping
    ``max_checkpoints``), the best by ``monitor`` as ``<model_prefix>-best``, and the symbol
    of a hybridized network; ``resume_from_checkpoint`` continues from the latest files.

    Parameters
    ----------
    model_dir : str
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        Needed with ``save_best``.
    verbose : int, default 0
    save_best : bool, default False
    mode : {'auto', 'min', 'max'}, default 'auto'
        How ``monitor`` improves; 'auto': max for accuracy and F1, else min.
    epoch_period : int, default 1
    batch_period : int, optional
    max_checkpoints : int, default 5
    resume_from_checkpoint : bool, default False
    """

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        self.monitor, self.verbose = monitor, verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir, self.model_prefix = model_dir, model_prefix
        self.save_best = save_best
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric "
                             "objects from estimator.train_metrics and estimator.val_metrics "
                             "as monitor.")
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        self.trained_epoch = self.trained_batch = -1
        if save_best:
            self.monitor_op = _monitor_op(monitor, mode, "ModelCheckpoint")
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            by_epoch = bool(estimator.max_epoch)
            if by_epoch != bool(self.epoch_period) or by_epoch == bool(self.batch_period):
                raise ValueError(
                    "To use resume from checkpoint, you must only specify the same type of "
                    "period you used for training.For example, if you are training based on "
                    "number of epochs,you must save only based on epochs, and set "
                    "batch_period to None.")
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        epoch, batch = self.current_epoch, self.current_batch
        if self.resume_from_checkpoint:
            epoch += self.trained_epoch + 1
            batch += self.trained_batch + (0 if estimator.max_epoch else 1)
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch, batch)
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if not self.save_best:
            return
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"Skipping save best because {name} is not updated, make sure you pass one of "
                "the metric objects estimator.train_metrics and estimator.val_metrics as "
                "monitor"), stacklevel=2)
        elif self.monitor_op(value, self.best):
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                      "%0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, self.model_prefix + "-best")
            self._save_params_and_trainer(estimator, self.model_prefix + "-best")
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_epoch,
                                  name, self.best)

    def _save_symbol(self, estimator):
        path = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        cached = getattr(estimator.net, "_cached_graph", None)
        if cached:
            cached[1].save(path)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator "
                "in order to save model architecture as %s.", path)

    def _save_params_and_trainer(self, estimator, prefix):
        estimator.net.save_parameters(os.path.join(self.model_dir, prefix + ".params"))
        estimator.trainer.save_states(os.path.join(self.model_dir, prefix + ".states"))
        if "best" not in prefix:
            self.saved_checkpoints.append(prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for ext in (".params", ".states"):
                path = os.path.join(self.model_dir, old + ext)
                if os.path.exists(path):
                    os.remove(path)

    def _checkpoints(self):
        """(epoch, batch, stem) of the saved checkpoints of this prefix in model_dir."""
        pattern = re.compile(re.escape(self.model_prefix) + r"-epoch(\d+)batch(\d+)\.params$")
        found = []
        for fname in os.listdir(self.model_dir):
            if fname.startswith(self.model_prefix + "-epoch") and fname.endswith(".params"):
                m = pattern.match(fname)
                if m is None:
                    raise ValueError(
                        "Error parsing checkpoint file, please check your checkpoints have the "
                        "format: {model_name}-epoch{epoch_number}batch{batch_number}.params, "
                        f"there should also be a .states file for each .params file ({fname})")
                found.append((int(m.group(1)), int(m.group(2)), fname[:-len(".params")]))
        return sorted(found)

    def _resume(self, estimator):
        found = self._checkpoints()
        self.saved_checkpoints.extend(stem for _, _, stem in found)
        if not found:
            what = ("%d batches" % estimator.max_batch if estimator.max_batch
                    else "%d epochs" % estimator.max_epoch)
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for " + what)
            return
        self.trained_epoch = found[-1][0]
        self.trained_batch = max(b for e, b, _ in found if e == self.trained_epoch)
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to "
               "train for " % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(
                    f"Found checkpoint with maximum number of epoch {estimator.max_epoch} "
                    "reached, please specify resume_from_checkpoint=False (default value) if "
                    "you wan to train from scratch.")
            estimator.max_epoch -= self.trained_epoch + 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(
                    f"Found checkpoint with maximum number of batch {self.trained_batch} "
                    "reached, please specifyresume_from_checkpoint=False (default value) if "
                    "you wan to train from scratch.")
            estimator.max_batch -= self.trained_batch + 1
            msg += "%d batches " % estimator.max_batch
        stem = os.path.join(self.model_dir, "%s-epoch%dbatch%d" % (
            self.model_prefix, self.trained_epoch, self.trained_batch))
        for ext in (".params", ".states"):
            if not os.path.exists(stem + ext):
                raise ValueError(f"Failed to load checkpoint, {stem + ext} does not exist")
        estimator.net.load_parameters(stem + ".params", ctx=estimator.context)
        estimator.trainer.load_states(stem + ".states")
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs.

    Parameters
    ----------
    monitor : EvalMetric
        One of the estimator's metrics (not a composite).
    min_delta : float, default 0
    patience : int, default 0
    mode : {'auto', 'min', 'max'}, default 'auto'
        'auto': max for accuracy and F1, else min.
    baseline : float, optional
        The value to improve on at the start.
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor, self.baseline = monitor, baseline
        self.patience = patience
        self.monitor_op = _monitor_op(monitor, mode, "EarlyStopping")
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        self.best = None

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"{name} is not updated, make sure you pass one of the metric objects from "
                "estimator.train_metrics and estimator.val_metrics as monitor."), stacklevel=2)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best, self.wait = value, 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHanlder: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """``trainer.step(batch size)`` after every batch (the batch size summed over the
    per-context losses)."""

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(lval.shape[0] for lval in losses))
