"""Contributed convolution blocks (mx.gluon.contrib.cnn)."""
from .conv_layers import *  # noqa: F401,F403
