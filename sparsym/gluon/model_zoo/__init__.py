"""Gluon model zoo (mx.gluon.model_zoo): architectures; pretrained weights load from local
files (see :mod:`model_store`)."""
from . import model_store, vision  # noqa: F401
