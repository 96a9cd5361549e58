"""``mx.log``: loggers with MXNet's line format (``W1203 17:02:10 pid file:func:line] msg``)."""
from __future__ import annotations

import logging
import warnings
from logging import CRITICAL, DEBUG, ERROR, INFO, NOTSET, WARNING

__all__ = ["get_logger", "getLogger", "CRITICAL", "DEBUG", "ERROR", "INFO", "NOTSET",
           "WARNING"]

_LABELS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}


class _Formatter(logging.Formatter):
    """MXNet's format: a one-letter level, date, process, location; coloured as MXNet's."""

    def __init__(self):
        super().__init__(datefmt="%m%d %H:%M:%S")

    def format(self, record):
        level = record.levelno
        color = "\x1b[31m" if level >= WARNING else "\x1b[32m" if level >= INFO else "\x1b[34m"
        self._style._fmt = (color + _LABELS.get(level, "U")
                            + "%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]"
                            + "\x1b[0m %(message)s")
        return super().format(record)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """A logger writing MXNet's line format to stderr or to ``filename``.

    Parameters
    ----------
    name : str, optional
        Logger name; a named logger gets its handler once (later calls only set the level).
    filename : str, optional
        Log to this file instead of stderr.
    filemode : str, optional
        File mode, default 'a'.
    level : int, default logging.WARNING

    Returns
    -------
    logging.Logger

    Examples
    --------
    >>> import logging, sparsym as mx
    >>> mx.log.get_logger("sparsym.doc", level=logging.INFO).level == logging.INFO
    True
    """
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", None):
        logger._init_done = True
        handler = (logging.FileHandler(filename, filemode or "a") if filename
                   else logging.StreamHandler())
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
    logger.setLevel(level)
    return logger


def getLogger(name=None, filename=None, filemode=None, level=WARNING):  # noqa: N802 (MXNet)
    """Deprecated alias of :func:`get_logger` (warns, as MXNet's)."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.", DeprecationWarning,
                  stacklevel=2)
    return get_logger(name, filename, filemode, level)
