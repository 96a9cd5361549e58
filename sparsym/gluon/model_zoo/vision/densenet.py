"""DenseNet 121/161/169/201 (Huang et al. 2016) with MXNet's layer names."""
from __future__ import annotations

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "get_densenet"]

# initial features, growth rate, layers per dense block
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def _bn_relu_conv(out, channels, kernel_size, padding=0):
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=kernel_size, padding=padding, use_bias=False))


def _dense_layer(growth_rate, bn_size, dropout):
    """The input concatenated with ``growth_rate`` new feature maps (bottleneck 1x1, 3x3)."""
    new = nn.HybridSequential(prefix="")
    _bn_relu_conv(new, bn_size * growth_rate, 1)
    _bn_relu_conv(new, growth_rate, 3, 1)
    if dropout:
        new.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), new)
    return out


def _dense_block(num_layers, bn_size, growth_rate, dropout, stage):
    out = nn.HybridSequential(prefix=f"stage{stage}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_dense_layer(growth_rate, bn_size, dropout))
    return out


def _transition(channels):
    out = nn.HybridSequential(prefix="")
    _bn_relu_conv(out, channels, 1)
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet: dense blocks joined by halving transitions, then 7x7 average pooling
    (224x224 inputs) and the output layer.

    Parameters
    ----------
    num_init_features : int
        Channels of the first convolution.
    growth_rate : int
        Feature maps each dense layer adds.
    block_config : list of int
        Layers per dense block.
    bn_size : int, default 4
        Bottleneck width, in multiples of ``growth_rate``.
    dropout : float, default 0
    classes : int, default 1000
    """

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                        use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            channels = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_dense_block(num_layers, bn_size, growth_rate, dropout, i + 1))
                channels += num_layers * growth_rate
                if i != len(block_config) - 1:
                    channels //= 2
                    self.features.add(_transition(channels))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                              nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_densenet(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """DenseNet with ``num_layers`` (121, 161, 169 or 201)."""
    init, growth, config = densenet_spec[num_layers]
    return load_pretrained(DenseNet(init, growth, config, **kwargs), f"densenet{num_layers}",
                           pretrained, ctx, root)


def _factory(num_layers):
    def make(**kwargs):
        return get_densenet(num_layers, **kwargs)
    make.__name__ = f"densenet{num_layers}"
    make.__doc__ = f"DenseNet-{num_layers} (see :func:`get_densenet`)."
    return make


densenet121, densenet161, densenet169, densenet201 = (_factory(n) for n in (121, 161, 169, 201))
