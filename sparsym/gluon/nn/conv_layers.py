"""Convolution, transposed convolution, pooling and padding layers."""
from __future__ import annotations

import numbers

from ... import symbol as _symbol
from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]


def _tuple(value, n, what):
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(value)
    assert len(value) == n, f"{what} must be a number or a list of {n} ints"
    return value


def _infer_weight_shape(op_name, data_shape, kwargs):
    """(data, weight, bias) shapes of ``op_name`` for a partly known data shape (0s)."""
    op = getattr(_symbol, op_name)
    sym = op(_symbol.var("data", shape=tuple(data_shape)), **kwargs)
    shapes = sym.infer_shape_partial()[0]
    return [tuple(0 if d is None else d for d in s) if s is not None else None
            for s in shapes]


class _Conv(HybridBlock):
    """Shared body of the convolution layers (``op_name`` Convolution or Deconvolution)."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            strides = _tuple(strides, n, "strides")
            padding = _tuple(padding, n, "padding")
            dilation = _tuple(dilation, n, "dilation")
            self._op_name = op_name
            self._kwargs = {"kernel": kernel_size, "stride": strides, "dilate": dilation,
                            "pad": padding, "num_filter": channels, "num_group": groups,
                            "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            dshape = [0] * (n + 2)
            dshape[layout.find("N")] = 1
            dshape[layout.find("C")] = in_channels
            wshapes = _infer_weight_shape(op_name, dshape, self._kwargs)
            self.weight = self.params.get("weight", shape=wshapes[1],
                                          init=weight_initializer, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=wshapes[2], init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            act = op(x, weight, name="fwd", **self._kwargs)
        else:
            act = op(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            act = self.act(act)
        return act

    def _alias(self):
        return "conv"

    def __repr__(self):
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{self.__class__.__name__}({{mapping}}, kernel_size={k['kernel']}, " \
            f"stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if hasattr(self, "outpad") and self.outpad != (0,) * n:
            s += f", output_padding={self.outpad}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        s += ")"
        shape = self.weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")


def _conv_class(name, ndim, layout0, transpose):
    """A Conv{n}D / Conv{n}DTranspose class with MXNet's signature."""
    layouts = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}[ndim]

    def __init__(self, channels, kernel_size, strides=(1,) * ndim, padding=(0,) * ndim,
                 *rest, **kwargs):
        names = (["output_padding"] if transpose else []) + \
            ["dilation", "groups", "layout", "activation", "use_bias", "weight_initializer",
             "bias_initializer", "in_channels"]
        defaults = {"output_padding": (0,) * ndim, "dilation": (1,) * ndim, "groups": 1,
                    "layout": layout0, "activation": None, "use_bias": True,
                    "weight_initializer": None, "bias_initializer": "zeros", "in_channels": 0}
        opts = dict(defaults)
        opts.update(zip(names, rest))
        for key in list(kwargs):
            if key in defaults:
                opts[key] = kwargs.pop(key)
        assert opts["layout"] in layouts, \
            f"Only supports {', '.join(repr(x) for x in layouts)} layout for now"
        kernel_size = _tuple(kernel_size, ndim, "kernel_size")
        adj = None
        if transpose:
            adj = _tuple(opts["output_padding"], ndim, "output_padding")
            self.outpad = adj
        _Conv.__init__(self, channels, kernel_size, strides, padding, opts["dilation"],
                       opts["groups"], opts["layout"], opts["in_channels"],
                       opts["activation"], opts["use_bias"], opts["weight_initializer"],
                       opts["bias_initializer"],
                       op_name="Deconvolution" if transpose else "Convolution", adj=adj,
                       **kwargs)

    kind = "transposed " if transpose else ""
    doc = f"""{ndim}-D {kind}convolution over ``{layout0}`` input.

    Parameters
    ----------
    channels : int
    kernel_size : int or tuple of {ndim} ints
    strides, padding{', output_padding' if transpose else ''}, dilation : int or tuple
    groups : int
    layout : str
    activation : str, optional
    use_bias : bool
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int
        0 infers it at the first forward.
    """
    return type(name, (_Conv,), {"__init__": __init__, "__doc__": doc,
                                  "__module__": __name__})


Conv1D = _conv_class("Conv1D", 1, "NCW", False)
Conv2D = _conv_class("Conv2D", 2, "NCHW", False)
Conv3D = _conv_class("Conv3D", 3, "NCDHW", False)
Conv1DTranspose = _conv_class("Conv1DTranspose", 1, "NCW", True)
Conv2DTranspose = _conv_class("Conv2DTranspose", 2, "NCHW", True)
Conv3DTranspose = _conv_class("Conv3DTranspose", 3, "NCDHW", True)


class _Pooling(HybridBlock):
    """Shared body of the pooling layers."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type,
                 layout, count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        strides = _tuple(strides, len(pool_size), "strides")
        padding = _tuple(padding, len(pool_size), "padding")
        self._kwargs = {"kernel": pool_size, "stride": strides, "pad": padding,
                        "global_pool": global_pool, "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{self.__class__.__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


def _pool_class(name, ndim, pool_type, is_global):
    layouts = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}[ndim]

    if is_global:
        def __init__(self, layout=layouts[0], **kwargs):
            assert layout in layouts, \
                f"Only {' and '.join(layouts)} layouts are valid for {ndim}D Pooling"
            _Pooling.__init__(self, (1,) * ndim, None, 0, True, True, pool_type, layout,
                              **kwargs)
    elif pool_type == "max":
        def __init__(self, pool_size=2, strides=None, padding=0, layout=layouts[0],
                     ceil_mode=False, **kwargs):
            assert layout in layouts, \
                f"Only {' and '.join(layouts)} layouts are valid for {ndim}D Pooling"
            pool_size = _tuple(pool_size, ndim, "pool_size")
            _Pooling.__init__(self, pool_size, strides, padding, ceil_mode, False, "max",
                              layout, **kwargs)
    else:
        def __init__(self, pool_size=2, strides=None, padding=0, layout=layouts[0],
                     ceil_mode=False, count_include_pad=True, **kwargs):
            assert layout in layouts, \
                f"Only {' and '.join(layouts)} layouts are valid for {ndim}D Pooling"
            pool_size = _tuple(pool_size, ndim, "pool_size")
            _Pooling.__init__(self, pool_size, strides, padding, ceil_mode, False, "avg",
                              layout, count_include_pad, **kwargs)

    what = ("global " if is_global else "") + ("max" if pool_type == "max" else "average")
    doc = f"{ndim}-D {what} pooling."
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc,
                                     "__module__": __name__})


MaxPool1D = _pool_class("MaxPool1D", 1, "max", False)
MaxPool2D = _pool_class("MaxPool2D", 2, "max", False)
MaxPool3D = _pool_class("MaxPool3D", 3, "max", False)
AvgPool1D = _pool_class("AvgPool1D", 1, "avg", False)
AvgPool2D = _pool_class("AvgPool2D", 2, "avg", False)
AvgPool3D = _pool_class("AvgPool3D", 3, "avg", False)
GlobalMaxPool1D = _pool_class("GlobalMaxPool1D", 1, "max", True)
GlobalMaxPool2D = _pool_class("GlobalMaxPool2D", 2, "max", True)
GlobalMaxPool3D = _pool_class("GlobalMaxPool3D", 3, "max", True)
GlobalAvgPool1D = _pool_class("GlobalAvgPool1D", 1, "avg", True)
GlobalAvgPool2D = _pool_class("GlobalAvgPool2D", 2, "avg", True)
GlobalAvgPool3D = _pool_class("GlobalAvgPool3D", 3, "avg", True)


class ReflectionPad2D(HybridBlock):
    """Pad the two spatial axes of NCHW input by reflection."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Integral):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8
        self._padding = tuple(padding)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)
