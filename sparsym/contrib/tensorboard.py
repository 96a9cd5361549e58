"""``mx.contrib.tensorboard``: log evaluation metrics to TensorBoard from Module callbacks."""
from __future__ import annotations

import importlib

__all__ = ["LogMetricsCallback"]

# SummaryWriter providers with MXBoard's add_scalar(tag, value, global_step) API, in order
_WRITERS = ("mxboard", "tensorboardX", "torch.utils.tensorboard")


def _summary_writer(logging_dir):
    for name in _WRITERS:
        try:
            return importlib.import_module(name).SummaryWriter(logging_dir)
        except ImportError:
            continue
    raise ImportError("LogMetricsCallback needs a TensorBoard writer: pip install mxboard "
                      "(or tensorboardX)")


class LogMetricsCallback:
    """A batch- or epoch-end callback that writes the metric values as TensorBoard scalars.

    Parameters
    ----------
    logging_dir : str
        The event files' folder (``tensorboard --logdir=<logging_dir>``).
    prefix : str, optional
        Prepended to every metric name (``'<prefix>-<name>'``), e.g. 'train' or 'eval'.

    Examples
    --------
    >>> cb = mx.contrib.tensorboard.LogMetricsCallback('logs/train')  # doctest: +SKIP
    >>> mod.fit(train, eval_data=val, batch_end_callback=cb)  # doctest: +SKIP
    """

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        self.summary_writer = _summary_writer(logging_dir)

    def __call__(self, param):
        """Write ``param.eval_metric``'s values at step ``param.epoch``."""
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = f"{self.prefix}-{name}"
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
