"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016) with MXNet's layer names."""
from __future__ import annotations

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ..model_store import load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet"]


def _conv_relu(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze, expand1x1, expand3x3):
    """Squeeze (1x1) then the concatenation of the 1x1 and 3x3 expansions."""
    out = nn.HybridSequential(prefix="")
    out.add(_conv_relu(squeeze, 1))
    expand = HybridConcurrent(axis=1, prefix="")
    expand.add(_conv_relu(expand1x1, 1), _conv_relu(expand3x3, 3, 1))
    out.add(expand)
    return out


# stem (channels, kernel) and the stage layout: "P" a 3x3/2 ceil max-pool, else fire squeeze
_SPEC = {"1.0": ((96, 7), ("P", 16, 16, 32, "P", 32, 48, 48, 64, "P", 64)),
         "1.1": ((64, 3), ("P", 16, 16, "P", 32, 32, "P", 48, 48, 64, 64))}


class SqueezeNet(HybridBlock):
    """SqueezeNet: fire modules between max-pools, a 1x1 convolution classifier and 13x13
    average pooling (224x224 inputs).

    Parameters
    ----------
    version : {'1.0', '1.1'}
    classes : int, default 1000
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in _SPEC, \
            f"Unsupported SqueezeNet version {version}:1.0 or 1.1 expected"
        (stem_c, stem_k), stages = _SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(stem_c, kernel_size=stem_k, strides=2),
                              nn.Activation("relu"))
            for stage in stages:
                if stage == "P":
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                else:
                    self.features.add(_fire(stage, 4 * stage, 4 * stage))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1')."""
    return load_pretrained(SqueezeNet(version, **kwargs), f"squeezenet{version}", pretrained,
                           ctx, root)


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (see :func:`get_squeezenet`)."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1: fewer operations than 1.0 at the same accuracy."""
    return get_squeezenet("1.1", **kwargs)
