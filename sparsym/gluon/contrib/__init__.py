"""Contributed Gluon blocks (mx.gluon.contrib)."""
from . import data, nn  # noqa: F401
