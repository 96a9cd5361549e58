"""AlexNet (Krizhevsky et al. 2012, the one-tower variant) with MXNet's layer names."""
from __future__ import annotations

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """AlexNet: five convolutions, three max-pools, two 4096-unit dense layers with dropout.

    Parameters
    ----------
    classes : int, default 1000
        Units of the output layer.
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                # (channels, kernel, stride, padding, max-pool after)
                for c, k, s, p, pool in ((64, 11, 4, 2, True), (192, 5, 1, 2, True),
                                         (384, 3, 1, 1, False), (256, 3, 1, 1, False),
                                         (256, 3, 1, 1, True)):
                    self.features.add(nn.Conv2D(c, kernel_size=k, strides=s, padding=p,
                                                activation="relu"))
                    if pool:
                        self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(4096, activation="relu"), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """AlexNet (see :class:`AlexNet`); ``pretrained`` loads MXNet's file from ``root``."""
    return load_pretrained(AlexNet(**kwargs), "alexnet", pretrained, ctx, root)
