"""VGG 11/13/16/19 (Simonyan and Zisserman 2014), with and without batch norm."""
from __future__ import annotations

from ....context import cpu
from ....initializer import Xavier
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]

# convolutions per stage and the stage's channels
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


class VGG(HybridBlock):
    """Stages of 3x3 convolutions (each followed by 2x2 max-pooling), then two 4096-unit
    dense layers with dropout and the output layer.

    Parameters
    ----------
    layers : list of int
        Convolutions per stage.
    filters : list of int
        Channels per stage.
    classes : int, default 1000
    batch_norm : bool, default False
        Batch norm after every convolution.
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            conv_init = Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
            for num, channels in zip(layers, filters):
                for _ in range(num):
                    self.features.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                                weight_initializer=conv_init,
                                                bias_initializer="zeros"))
                    if batch_norm:
                        self.features.add(nn.BatchNorm())
                    self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(strides=2))
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"),
                                  nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """VGG with ``num_layers`` (11, 13, 16 or 19); ``batch_norm=True`` for the _bn variants."""
    layers, filters = vgg_spec[num_layers]
    name = f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}"
    return load_pretrained(VGG(layers, filters, **kwargs), name, pretrained, ctx, root)


def _factory(num_layers, batch_norm):
    def make(**kwargs):
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(num_layers, **kwargs)
    make.__name__ = f"vgg{num_layers}{'_bn' if batch_norm else ''}"
    make.__doc__ = (f"VGG-{num_layers}{' with batch norm' if batch_norm else ''} "
                    "(see :func:`get_vgg`).")
    return make


vgg11, vgg13, vgg16, vgg19 = (_factory(n, False) for n in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_factory(n, True) for n in (11, 13, 16, 19))
