"""Contributed Gluon blocks (mx.gluon.contrib)."""
from . import cnn, data, nn, rnn  # noqa: F401
