"""Training curves: a fit callback that draws metrics per epoch to a PNG (matplotlib).

Exposed as ``mx.callback.TrainingCurve`` beside MXNet's callbacks.
"""
from __future__ import annotations

import io
import math
import os

from . import callback as _callback

__all__ = ["TrainingCurve"]


class TrainingCurve:
    """Record training and validation metrics per epoch and redraw a PNG after each epoch.

    ``Module.fit`` hands batch-end, epoch-end and eval-end callbacks different arguments,
    so the recorder has one method for each; :meth:`callbacks` returns them as ``fit``
    keyword arguments. Outside ``fit`` (a hand-written loop) call :meth:`add` and
    :meth:`save`.

    Parameters
    ----------
    path : str or os.PathLike
        Where the PNG is written (replaced atomically after every epoch).
    title : str, optional
        Figure title.
    metrics : sequence of str, optional
        Metric names to draw (e.g. ``['accuracy']``); all by default.
    dpi : int
        Resolution of the PNG.

    Attributes
    ----------
    history : dict of str -> list of (epoch, value)
        Keys are ``'train-<metric>'`` and ``'validation-<metric>'``.

    Examples
    --------
    >>> import os, tempfile, sparsym as mx
    >>> path = os.path.join(tempfile.mkdtemp(), 'curve.png')
    >>> curve = mx.callback.TrainingCurve(path)
    >>> for epoch, loss in enumerate([0.9, 0.5, 0.3]):
    ...     curve.add(epoch, 'train-mse', loss)
    >>> curve.save()
    >>> os.path.getsize(path) > 0
    True

    With ``Module.fit``::

        mod.fit(train_iter, eval_data=val_iter, num_epoch=10, **curve.callbacks())
    """

    def __init__(self, path="training_curve.png", title=None, metrics=None, dpi=100):
        self.path = os.fspath(path)
        self.title = title
        self.metrics = None if metrics is None else [str(m) for m in metrics]
        self.dpi = int(dpi)
        self.history = {}
        self._train_metric = None

    # ------------------------------------------------------------------ fit callbacks
    def batch_end(self, param):
        """Batch-end callback: remember the training metric of the running epoch."""
        self._train_metric = param.eval_metric

    def epoch_end(self, epoch, symbol=None, arg_params=None, aux_params=None):
        """Epoch-end callback: record the epoch's training metric and redraw."""
        if self._train_metric is not None:
            # the whole epoch's value even when Speedometer(auto_reset=True) resets the
            # local window (metrics without global statistics give their local value)
            for name, value in self._train_metric.get_global_name_value():
                self.add(epoch, f"train-{name}", value)
            self._train_metric = None
        self.save()

    def eval_end(self, param):
        """Eval-end callback: record the validation metric and redraw."""
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_global_name_value():
            self.add(param.epoch, f"validation-{name}", value)
        self.save()

    def callbacks(self):
        """``{'batch_end_callback', 'epoch_end_callback', 'eval_end_callback'}`` for fit."""
        return {"batch_end_callback": self.batch_end, "epoch_end_callback": self.epoch_end,
                "eval_end_callback": self.eval_end}

    # ------------------------------------------------------------------ recording, drawing
    def add(self, epoch, key, value):
        """Record ``value`` of series ``key`` (``'train-acc'``...) at ``epoch``."""
        self.history.setdefault(str(key), []).append((int(epoch), float(value)))

    def _panels(self):
        """Metric name -> [(phase, points)], in first-seen order, filtered by ``metrics``."""
        panels = {}
        for key, pts in self.history.items():
            phase, _, name = key.partition("-")
            if not name:
                phase, name = "", key
            if self.metrics is not None and name not in self.metrics:
                continue
            panels.setdefault(name, []).append((phase, pts))
        return panels

    def figure(self):
        """A matplotlib Figure with one panel per metric (no pyplot global state)."""
        try:
            from matplotlib.figure import Figure
            from matplotlib.ticker import MaxNLocator
        except ImportError:
            raise ImportError("TrainingCurve needs matplotlib: pip install matplotlib") from None
        panels = self._panels()
        n = max(1, len(panels))
        cols = min(n, 3)
        rows = math.ceil(n / cols)
        fig = Figure(figsize=(4.2 * cols, 3.2 * rows), dpi=self.dpi)
        for i, (name, series) in enumerate(panels.items()):
            ax = fig.add_subplot(rows, cols, i + 1)
            for phase, pts in series:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o", markersize=3, label=phase or name)
            ax.set_xlabel("epoch")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel(name)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
        if not panels:
            fig.add_subplot(1, 1, 1).text(0.5, 0.5, "no metrics recorded yet", ha="center")
        if self.title:
            fig.suptitle(self.title)
        fig.tight_layout()
        return fig

    def save(self, path=None):
        """Draw the curves and write the PNG (temp file + rename)."""
        from .utils import atomic_write
        buf = io.BytesIO()
        self.figure().savefig(buf, format="png")
        atomic_write(path or self.path, buf.getvalue())


# mx.callback.TrainingCurve, next to MXNet's own callbacks
_callback.TrainingCurve = TrainingCurve
