"""Training callbacks (mx.callback) and fit's progress bar."""
from __future__ import annotations

import logging
import math
import sys
import time
from collections import namedtuple

from .checkpoint import save_checkpoint

logger = logging.getLogger("sparsym")

__all__ = ["BatchEndParam", "Speedometer", "do_checkpoint", "log_train_metric",
           "module_checkpoint", "ProgressBar", "LogValidationMetricsCallback", "TqdmProgressBar",
           "progress_bar_callback"]

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Epoch-end callback saving ``mod`` every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """Epoch-end callback writing ``prefix-symbol.json`` and ``prefix-%04d.params``."""
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """Batch-end callback logging the training metric every ``period`` batches."""
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logger.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name,
                            value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Log samples/sec (and the metric) every ``frequent`` batches, in MXNet's format."""

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if self.init:
            if count % self.frequent == 0:
                try:
                    speed = self.frequent * self.batch_size / (time.time() - self.tic)
                except ZeroDivisionError:
                    speed = float("inf")
                if param.eval_metric is not None:
                    nv = param.eval_metric.get_name_value()
                    if self.auto_reset:
                        param.eval_metric.reset_local()
                    msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec"
                    msg += "\t%s=%f" * len(nv)
                    logger.info(msg, param.epoch, count - self.frequent, count, speed,
                                *sum(nv, ()))
                else:
                    logger.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch,
                                count, speed)
                self.tic = time.time()
        else:
            self.init = True
            self.tic = time.time()


class ProgressBar:
    """Batch-end callback drawing a text bar of ``length`` characters (MXNet's)."""

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog = "=" * filled + "-" * (self.bar_len - filled)
        logger.info("[%s] %s%s\r", prog, percents, "%")


class LogValidationMetricsCallback:
    """Eval-end callback logging validation metrics."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logger.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)


class TqdmProgressBar:
    """fit's per-epoch tqdm bar: batches done (of the epoch's total when the iterator knows
    it) and the running training metric; each epoch leaves one line."""

    def __init__(self):
        self._bar = None
        self._metric = None

    def start(self, epoch, total=None):
        from tqdm import tqdm
        self._bar = tqdm(desc=f"epoch {epoch}", total=total, unit="batch", leave=True,
                         file=sys.stderr, dynamic_ncols=True)

    def step(self, metric):
        if self._bar is not None:
            self._bar.update(1)
            self._metric = metric
            if self._bar.n % 20 == 0:
                self._bar.set_postfix(_postfix(metric), refresh=False)

    def close(self):
        if self._bar is not None:
            if self._metric is not None:
                self._bar.set_postfix(_postfix(self._metric), refresh=True)
            self._bar.close()
            self._bar = None


def _postfix(metric):
    return {k: f"{v:.4f}" for k, v in metric.get_global_name_value()}


def progress_bar_callback(progress_bar):
    """A TqdmProgressBar when asked, or by default when stderr is an interactive terminal."""
    if progress_bar is None:
        progress_bar = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    return TqdmProgressBar() if progress_bar else None
