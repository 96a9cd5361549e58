"""Contributed Gluon blocks (mx.gluon.contrib)."""
from . import data, nn, rnn  # noqa: F401
