"""Deformable convolutions as Gluon blocks: a plain Convolution predicts the sampling
offsets (and, for the modulated variant, masks) that the deformable operator uses."""
from __future__ import annotations

from ...block import HybridBlock
from ...nn import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v, name):
    v = (v, v) if isinstance(v, int) else tuple(v)
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair (2-D convolution), got {v}")
    return v


class _DeformableBase(HybridBlock):
    """Shared setup: geometry, the offset convolution's and the deformable kernel's
    Parameters (registered in ``_order``, as MXNet registers them). ``op_name`` and ``adj``
    are accepted for MXNet's signature and unused."""

    _per_tap = 2  # offset channels per kernel tap and deformable group (dy, dx)
    _order = ("offset_weight", "offset_bias", "deformable_conv_weight", "deformable_conv_bias")

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name=None, adj=None,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if layout != "NCHW":
            raise ValueError(f"{type(self).__name__} supports layout 'NCHW' only, got "
                             f"{layout!r}")
        k = _pair(kernel_size, "kernel_size")
        geom = {"kernel": k, "stride": _pair(strides, "strides"),
                "dilate": _pair(dilation, "dilation"), "pad": _pair(padding, "padding")}
        self._channels = channels
        self._offset_channels = self._per_tap * k[0] * k[1] * num_deformable_group
        self._kwargs_offset = dict(geom, num_filter=self._offset_channels, num_group=groups,
                                   no_bias=not offset_use_bias, layout=layout)
        self._kwargs_deformable = dict(geom, num_filter=channels, num_group=groups,
                                       num_deformable_group=num_deformable_group,
                                       no_bias=not use_bias, layout=layout)
        cg = in_channels // groups if in_channels else 0
        specs = {
            "offset_weight": ((self._offset_channels, cg) + k, offset_weight_initializer),
            "offset_bias": ((self._offset_channels,), offset_bias_initializer)
            if offset_use_bias else None,
            # MXNet leaves the kernel's input channels to inference even with in_channels
            "deformable_conv_weight": ((channels, 0) + k, weight_initializer),
            "deformable_conv_bias": ((channels,), bias_initializer) if use_bias else None}
        with self.name_scope():
            for name in self._order:
                spec = specs[name]
                setattr(self, name, None if spec is None else self.params.get(
                    name, shape=spec[0], init=spec[1], allow_deferred_init=True))
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _offsets(self, F, x, offset_weight, offset_bias):
        args = (x, offset_weight) if offset_bias is None else (x, offset_weight, offset_bias)
        return F.Convolution(*args, cudnn_off=True, **self._kwargs_offset)

    def _finish(self, out):
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        k = self._kwargs_deformable
        cin = self.deformable_conv_weight.shape[1] * k["num_group"]
        s = (f"{type(self).__name__}({cin or None} -> {self._channels}, "
             f"kernel_size={k['kernel']}, stride={k['stride']}")
        if k["pad"] != (0, 0):
            s += f", padding={k['pad']}"
        if k["dilate"] != (1, 1):
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        return s + (", bias=False)" if k["no_bias"] else ")")


class DeformableConvolution(_DeformableBase):
    """2-D deformable convolution (DCN v1): sampling positions shifted by offsets that a
    Convolution of the input predicts (zero-initialised, so it starts as a Convolution).

    Parameters
    ----------
    channels : int
    kernel_size, strides, padding, dilation : int or pair of int
    groups, num_deformable_group : int
    layout : 'NCHW'
    use_bias, offset_use_bias : bool
    in_channels : int (0: inferred)
    activation : str or None
    weight_initializer, bias_initializer, offset_weight_initializer,
    offset_bias_initializer : Initializer or str
    """

    def _alias(self):
        return "deformable_conv"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        bias = () if deformable_conv_bias is None else (deformable_conv_bias,)
        out = F.contrib.DeformableConvolution(x, offset, deformable_conv_weight, *bias,
                                              name="fwd", **self._kwargs_deformable)
        return self._finish(out)


class ModulatedDeformableConvolution(_DeformableBase):
    """2-D modulated deformable convolution (DCN v2): the offset Convolution also predicts
    a mask per tap, applied as ``2 * sigmoid(mask)`` (MXNet's block). Parameters as for
    :class:`DeformableConvolution`."""

    _per_tap = 3  # dy, dx and the mask
    _order = ("deformable_conv_weight", "deformable_conv_bias", "offset_weight", "offset_bias")

    def _alias(self):
        return "modulated_deformable_conv"

    def hybrid_forward(self, F, x, deformable_conv_weight, offset_weight,
                       deformable_conv_bias=None, offset_bias=None):
        both = self._offsets(F, x, offset_weight, offset_bias)
        split = self._offset_channels * 2 // 3
        offset = F.slice_axis(both, axis=1, begin=0, end=split)
        mask = F.sigmoid(F.slice_axis(both, axis=1, begin=split, end=None)) * 2
        bias = () if deformable_conv_bias is None else (deformable_conv_bias,)
        out = F.contrib.ModulatedDeformableConvolution(x, offset, mask, deformable_conv_weight,
                                                       *bias, name="fwd",
                                                       **self._kwargs_deformable)
        return self._finish(out)
