"""Inception v3 (Szegedy et al. 2015) with MXNet's layer names; 299x299 inputs."""
from __future__ import annotations

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ..model_store import load_pretrained

__all__ = ["Inception3", "inception_v3"]


def _conv_bn(channels, kernel_size, strides=None, padding=None):
    """Convolution without bias, batch norm (eps 1e-3), relu."""
    kwargs = {"channels": channels, "kernel_size": kernel_size}
    if strides is not None:
        kwargs["strides"] = strides
    if padding is not None:
        kwargs["padding"] = padding
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001),
            nn.Activation("relu"))
    return out


def _branch(pool, *convs):
    """An optional pooling ('avg': 3x3/1 padded, 'max': 3x3/2) then conv-bn-relu layers, each
    given as (channels, kernel, strides, padding)."""
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        out.add(_conv_bn(*conv))
    return out


def _concat(prefix, *branches):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _split(*convs):
    """Two parallel convolutions (1x3 and 3x1 padded) concatenated."""
    out = HybridConcurrent(axis=1, prefix="")
    for conv in convs:
        out.add(_branch(None, conv))
    return out


def _seq(*blocks):
    out = nn.HybridSequential(prefix="")
    for b in blocks:
        out.add(b)
    return out


_1x7, _7x1 = ((1, 7), None, (0, 3)), ((7, 1), None, (3, 0))
_1x3, _3x1 = ((1, 3), None, (0, 1)), ((3, 1), None, (1, 0))


def _block_a(pool_features, prefix):
    return _concat(prefix,
                   lambda: _branch(None, (64, 1)),
                   lambda: _branch(None, (48, 1), (64, 5, None, 2)),
                   lambda: _branch(None, (64, 1), (96, 3, None, 1), (96, 3, None, 1)),
                   lambda: _branch("avg", (pool_features, 1)))


def _block_b(prefix):
    return _concat(prefix,
                   lambda: _branch(None, (384, 3, 2)),
                   lambda: _branch(None, (64, 1), (96, 3, None, 1), (96, 3, 2)),
                   lambda: _branch("max"))


def _block_c(c7, prefix):
    return _concat(prefix,
                   lambda: _branch(None, (192, 1)),
                   lambda: _branch(None, (c7, 1), (c7, *_1x7), (192, *_7x1)),
                   lambda: _branch(None, (c7, 1), (c7, *_7x1), (c7, *_1x7), (c7, *_7x1),
                                   (192, *_1x7)),
                   lambda: _branch("avg", (192, 1)))


def _block_d(prefix):
    return _concat(prefix,
                   lambda: _branch(None, (192, 1), (320, 3, 2)),
                   lambda: _branch(None, (192, 1), (192, *_1x7), (192, *_7x1), (192, 3, 2)),
                   lambda: _branch("max"))


def _block_e(prefix):
    return _concat(prefix,
                   lambda: _branch(None, (320, 1)),
                   lambda: _seq(_branch(None, (384, 1)), _split((384, *_1x3), (384, *_3x1))),
                   lambda: _seq(_branch(None, (448, 1), (384, 3, None, 1)),
                                _split((384, *_1x3), (384, *_3x1))),
                   lambda: _branch("avg", (192, 1)))


class Inception3(HybridBlock):
    """Inception v3: a convolutional stem, blocks A (x3), B, C (x4), D, E (x2), 8x8 average
    pooling, dropout and the output layer.

    Parameters
    ----------
    classes : int, default 1000
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_conv_bn(32, 3, 2), _conv_bn(32, 3), _conv_bn(64, 3, None, 1),
                              nn.MaxPool2D(pool_size=3, strides=2), _conv_bn(80, 1),
                              _conv_bn(192, 3), nn.MaxPool2D(pool_size=3, strides=2),
                              _block_a(32, "A1_"), _block_a(64, "A2_"), _block_a(64, "A3_"),
                              _block_b("B_"), _block_c(128, "C1_"), _block_c(160, "C2_"),
                              _block_c(160, "C3_"), _block_c(192, "C4_"), _block_d("D_"),
                              _block_e("E1_"), _block_e("E2_"), nn.AvgPool2D(pool_size=8),
                              nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """Inception v3 (see :class:`Inception3`)."""
    return load_pretrained(Inception3(**kwargs), "inceptionv3", pretrained, ctx, root)
