"""The estimator: Gluon's training loop behind one ``fit`` call."""
from __future__ import annotations

import copy
import logging
import sys
import warnings

from ....base import ParamAssertionError
from ....context import Context, cpu
from ....metric import Loss as LossMetric
from ...data import DataLoader
from ...loss import Loss
from ...trainer import Trainer
from . import event_handler as eh
from .batch_processor import BatchProcessor
from .utils import check_handler_metric_ref, check_metrics, suggest_metric_for_loss

__all__ = ["Estimator"]

_EVENTS = (("train_begin", eh.TrainBegin), ("epoch_begin", eh.EpochBegin),
           ("batch_begin", eh.BatchBegin), ("batch_end", eh.BatchEnd),
           ("epoch_end", eh.EpochEnd), ("train_end", eh.TrainEnd))


class Estimator:
    """Train and evaluate a Gluon network with handlers for metrics, logging, validation,
    checkpoints and early stopping.

    Parameters
    ----------
    net : gluon.Block
    loss : gluon.loss.Loss
    train_metrics : EvalMetric or list of EvalMetric, optional
        Default: accuracy for a softmax cross-entropy loss, and the running loss.
    val_metrics : EvalMetric or list of EvalMetric, optional
        Default: copies of the training metrics.
    initializer : Initializer, optional
        Initialises ``net`` if it is not initialised yet.
    trainer : gluon.Trainer, optional
        Default: SGD with learning rate 0.001 (with a warning).
    context : Context or list of Context, optional
        Default: ``mx.cpu()``.
    val_net : gluon.Block, optional
        Network for validation (default ``net``).
    val_loss : gluon.loss.Loss, optional
        Loss for validation (default ``loss``).
    batch_processor : BatchProcessor, optional
        The step of one batch (needs ``fit_batch`` and ``evaluate_batch``).
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = check_metrics(train_metrics)
        self._val_metrics = check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0

    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, Loss):
            raise ValueError(f"loss must be a Loss, refer to gluon.loss.Loss:{loss}")
        return loss

    @staticmethod
    def _check_context(context):
        if not context:
            return [cpu()]
        if isinstance(context, Context):
            context = [context]
        if not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example "
                             f"mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:"
                             f"{context}")
        for ctx in context:
            if ctx.device_type != "cpu":
                # MXNet's assert and text (the list of available GPUs after "mx.cpu(), " is
                # empty on a CPU build)
                raise ParamAssertionError(f"{ctx} is not available, please make sure your "
                                          "context is in one of: mx.cpu(), ")
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise ValueError("Customized Batch Processor must contain fit_batch() and "
                             "evaluate_batch() methods")
        return batch_processor

    def _is_initialized(self):
        params = self.net.collect_params()
        try:
            for name in params:
                params[name].list_ctx()
        except RuntimeError:
            return False
        return True

    def _initialize(self, initializer):
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your net. "
                          "You can use net.initialize(init=your_initializer, "
                          "force_reinit=True)to force re-initialize.", stacklevel=2)

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.", stacklevel=2)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError(f"Trainer must be a Gluon Trainer instance, refer to "
                             f"gluon.Trainer:{trainer}")
        return trainer

    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(LossMetric(self.loss.name.rstrip("1234567890")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            metric.name = (metric.name.replace("training", "validation")
                           if "training" in metric.name else "validation " + metric.name)

    @property
    def train_metrics(self):
        """The metrics updated on training batches."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The metrics updated on validation batches."""
        return self._val_metrics

    @staticmethod
    def _check_loader(data, what):
        if not isinstance(data, DataLoader):
            raise ValueError(f"Estimator only support input as Gluon DataLoader. "
                             f"Alternatively, you can transform your DataIter or any NDArray "
                             f"into Gluon DataLoader. Refer to gluon.data.DataLoader ({what})")

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Run ``val_net`` over ``val_data`` and update the validation metrics.

        Parameters
        ----------
        val_data : gluon.data.DataLoader
        batch_axis : int, default 0
        event_handlers : EventHandler or list of EventHandler, optional
        """
        self._check_loader(val_data, "val_data")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for h in epoch_begin:
            h.epoch_begin(self)
        for batch in val_data:
            for h in batch_begin:
                h.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for h in batch_end:
                h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for h in epoch_end:
            h.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train ``net`` for ``epochs`` epochs or ``batches`` batches (exactly one of them).

        Parameters
        ----------
        train_data : gluon.data.DataLoader
        val_data : gluon.data.DataLoader, optional
            Evaluated after every epoch (a ValidationHandler changes when).
        epochs, batches : int
        event_handlers : EventHandler or list of EventHandler, optional
            Added to the defaults (stopping, gradient update, metrics, validation, logging);
            a handler of a default's class replaces that default.
        batch_axis : int, default 0
        """
        self._check_loader(train_data, "train_data")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number "
                             "of epochs or number of batches.Please specify one and only one "
                             "of: epochs or batches.")
        self.max_epoch, self.max_batch, self.batch_axis = epochs, batches, batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for h in train_begin:
            h.train_begin(self)
        while True:
            for h in epoch_begin:
                h.epoch_begin(self)
            for batch in train_data:
                for h in batch_begin:
                    h.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # every handler sees the batch, then any of them may stop the epoch
                stops = [h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                         for h in batch_end]
                if any(stops):
                    break
            if any([h.epoch_end(self) for h in epoch_end]):
                break
        for h in train_end:
            h.train_end(self)

    def _prepare_default_handlers(self, val_data, event_handlers):
        """The handlers ``fit`` runs: the user's, then a StoppingHandler (always) and a
        GradientUpdateHandler, MetricHandler, ValidationHandler (with ``val_data``) and
        LoggingHandler for each of those classes the user gave none of, sorted by priority
        (stable: the user's first at equal priority). When user and default handlers mix,
        a handler that refers to a metric the estimator does not update is a ValueError."""
        defaults = [(None, lambda: eh.StoppingHandler(self.max_epoch, self.max_batch)),
                    (eh.GradientUpdateHandler, eh.GradientUpdateHandler),
                    (eh.MetricHandler, lambda: eh.MetricHandler(metrics=self.train_metrics))]
        if val_data:
            defaults.append((eh.ValidationHandler,
                             lambda: eh.ValidationHandler(val_data=val_data,
                                                          eval_fn=self.evaluate)))
        defaults.append((eh.LoggingHandler,
                         lambda: eh.LoggingHandler(metrics=self.train_metrics)))
        return self._with_defaults(event_handlers, self.train_metrics + self.val_metrics,
                                   defaults)

    def _prepare_default_validation_handlers(self, event_handlers):
        """The handlers ``evaluate`` runs: the user's, plus a MetricHandler and a
        LoggingHandler on the validation metrics unless the user gave one of that class."""
        return self._with_defaults(event_handlers, self.val_metrics, [
            (eh.MetricHandler, lambda: eh.MetricHandler(metrics=self.val_metrics)),
            (eh.LoggingHandler, lambda: eh.LoggingHandler(metrics=self.val_metrics))])

    @staticmethod
    def _with_defaults(event_handlers, known_metrics, defaults):
        """The user's handlers plus each default whose class the user did not give, sorted
        by priority; mixing the two checks the metrics the user's handlers refer to."""
        handlers = eh.check_event_handlers(event_handlers)
        added = [make() for cls, make in defaults
                 if cls is None or not any(isinstance(h, cls) for h in handlers)]
        if handlers and added:
            for h in handlers + added:
                check_handler_metric_ref(h, set(known_metrics))
        handlers = handlers + added
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    @staticmethod
    def _categorize_handlers(handlers):
        """(train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end): the
        handlers implementing each event, in their order (MXNet's tuple)."""
        return tuple([h for h in handlers if isinstance(h, cls)] for _, cls in _EVENTS)
