"""Gluon model zoo (mx.gluon.model_zoo): architectures; pretrained weights need a download."""
from . import vision  # noqa: F401
