"""Contributed Gluon blocks (mx.gluon.contrib)."""
from . import cnn, data, estimator, nn, rnn  # noqa: F401
