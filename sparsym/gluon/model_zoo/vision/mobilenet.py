"""MobileNet v1 (Howard et al. 2017) and v2 (Sandler et al. 2018) with MXNet's layer names."""
from __future__ import annotations

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["MobileNet", "MobileNetV2", "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75",
           "mobilenet_v2_0_75", "mobilenet0_5", "mobilenet_v2_0_5", "mobilenet0_25",
           "mobilenet_v2_0_25", "get_mobilenet", "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """min(max(x, 0), 6)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    """Convolution without bias, batch norm, and relu (or relu6) when ``active``."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False),
            nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


class LinearBottleneck(HybridBlock):
    """Expand (1x1, ``t`` times), depthwise 3x3, project (1x1, linear); residual when the
    stride is 1 and the channels match.

    Parameters
    ----------
    in_channels, channels : int
    t : int
        Expansion factor.
    stride : int
    """

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            wide = in_channels * t
            _add_conv(self.out, wide, relu6=True)
            _add_conv(self.out, wide, kernel=3, stride=stride, pad=1, num_group=wide,
                      relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _scaled(multiplier, channels):
    return [int(c * multiplier) for c in channels]


class MobileNet(HybridBlock):
    """MobileNet v1: depthwise-separable convolutions, global average pooling, dense output.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier of every layer.
    classes : int, default 1000
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        dw_channels = _scaled(multiplier, [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024])
        channels = _scaled(multiplier, [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2)
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                for dwc, c, s in zip(dw_channels, channels, strides):
                    # depthwise 3x3 then pointwise 1x1
                    _add_conv(self.features, channels=dwc, kernel=3, stride=s, pad=1,
                              num_group=dwc)
                    _add_conv(self.features, channels=c)
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNet v2: inverted residual linear bottlenecks, a 1x1 convolution classifier.

    Parameters
    ----------
    multiplier : float, default 1.0
    classes : int, default 1000
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        in_channels = _scaled(multiplier, [32, 16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                              + [160] * 3)
        channels = _scaled(multiplier, [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                           + [160] * 3 + [320])
        expansions = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                for in_c, c, t, s in zip(in_channels, channels, expansions, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _store_suffix(multiplier):
    """MXNet's store names: 1.0, 0.75, 0.5, 0.25."""
    s = f"{multiplier:.2f}"
    return s[:-1] if s in ("1.00", "0.50") else s


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet v1 with width ``multiplier``."""
    return load_pretrained(MobileNet(multiplier, **kwargs),
                           f"mobilenet{_store_suffix(multiplier)}", pretrained, ctx, root)


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet v2 with width ``multiplier``."""
    return load_pretrained(MobileNetV2(multiplier, **kwargs),
                           f"mobilenetv2_{_store_suffix(multiplier)}", pretrained, ctx, root)


def _factory(get, multiplier, name):
    def make(**kwargs):
        return get(multiplier, **kwargs)
    make.__name__ = name
    make.__doc__ = f"{get.__doc__.split(' with ')[0]} at width {multiplier}."
    return make


mobilenet1_0 = _factory(get_mobilenet, 1.0, "mobilenet1_0")
mobilenet0_75 = _factory(get_mobilenet, 0.75, "mobilenet0_75")
mobilenet0_5 = _factory(get_mobilenet, 0.5, "mobilenet0_5")
mobilenet0_25 = _factory(get_mobilenet, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _factory(get_mobilenet_v2, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _factory(get_mobilenet_v2, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _factory(get_mobilenet_v2, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _factory(get_mobilenet_v2, 0.25, "mobilenet_v2_0_25")
