"""Convolutional recurrent cells: RNN, LSTM and GRU steps whose transforms are convolutions."""
from __future__ import annotations

import numbers

from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell"]


def _tuple(spec, dims):
    return (spec,) * dims if isinstance(spec, numbers.Integral) else tuple(spec)


def _conv_out_size(dimensions, kernels, paddings, dilations):
    return tuple(int((x + 2 * p - d * (k - 1) - 1) / 1) + 1 if x else 0
                 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


class _BaseConvRNNCell(HybridRecurrentCell):
    """i2h and h2h convolutions of ``_num_gates * hidden_channels`` filters; h2h keeps the
    spatial size (odd kernels, 'same' padding)."""

    _num_gates = 1
    _num_states = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        assert all(isinstance(spec, numbers.Integral) or len(spec) == dims
                   for spec in [i2h_kernel, i2h_pad, i2h_dilate, h2h_kernel, h2h_dilate]), (
            f"For {dims}D convolution, the convolution settings can only be either int or "
            f"list/tuple of length {dims}")
        self._i2h_kernel = _tuple(i2h_kernel, dims)
        self._stride = (1,) * dims
        self._i2h_pad = _tuple(i2h_pad, dims)
        self._i2h_dilate = _tuple(i2h_dilate, dims)
        self._h2h_kernel = _tuple(h2h_kernel, dims)
        assert all(k % 2 == 1 for k in self._h2h_kernel), \
            f"Only support odd number, get h2h_kernel= {h2h_kernel}"
        self._h2h_dilate = _tuple(h2h_dilate, dims)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        channel_axis = conv_layout.find("C")
        self._channel_axis = channel_axis
        in_channels = input_shape[channel_axis - 1]
        self._in_channels = in_channels
        dimensions = input_shape[1:] if channel_axis == 1 else input_shape[:-1]
        total_out = hidden_channels * self._num_gates
        out_size = _conv_out_size(dimensions, self._i2h_kernel, self._i2h_pad,
                                  self._i2h_dilate)
        if channel_axis == 1:
            i2h_shape = (total_out, in_channels) + self._i2h_kernel
            h2h_shape = (total_out, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out_size
        else:
            i2h_shape = (total_out,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total_out,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out_size + (hidden_channels,)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total_out,),
                                        init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total_out,),
                                        init=h2h_bias_initializer, allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_c = shape[1 if self._channel_axis == 1 else -1]
        return (f"{self.__class__.__name__}({in_c if in_c else None} -> "
                f"{shape[0] // self._num_gates}, {self._conv_layout})")

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        n = self._hidden_channels * self._num_gates
        i2h = F.Convolution(data=inputs, num_filter=n, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], num_filter=n, kernel=self._h2h_kernel,
                            dilate=self._h2h_dilate, pad=self._h2h_pad, stride=self._stride,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            name=prefix + "h2h")
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _num_gates = 4
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        sl = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice",
                            axis=self._channel_axis)
        in_gate = F.Activation(sl[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(sl[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, sl[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(sl[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _num_gates = 3

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice",
                                           axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice",
                                           axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation,
                                          name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                name=prefix + "out")
        return next_h, [next_h]


def _cell_class(name, base, dims, layout):
    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0,) * dims, i2h_dilate=(1,) * dims, h2h_dilate=(1,) * dims,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout=layout, activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout,
                      activation, prefix=prefix, params=params)

    doc = f"""{dims}-D convolutional {base._alias(None)[5:].upper()} cell.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step's input without the batch axis.
    hidden_channels : int
    i2h_kernel, h2h_kernel : int or tuple (h2h kernels must be odd)
    i2h_pad, i2h_dilate, h2h_dilate : int or tuple
    conv_layout : str ('{layout}' or channels last)
    activation : str or Block
    """
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Conv1DRNNCell = _cell_class("Conv1DRNNCell", _ConvRNNCell, 1, "NCW")
Conv2DRNNCell = _cell_class("Conv2DRNNCell", _ConvRNNCell, 2, "NCHW")
Conv3DRNNCell = _cell_class("Conv3DRNNCell", _ConvRNNCell, 3, "NCDHW")
Conv1DLSTMCell = _cell_class("Conv1DLSTMCell", _ConvLSTMCell, 1, "NCW")
Conv2DLSTMCell = _cell_class("Conv2DLSTMCell", _ConvLSTMCell, 2, "NCHW")
Conv3DLSTMCell = _cell_class("Conv3DLSTMCell", _ConvLSTMCell, 3, "NCDHW")
Conv1DGRUCell = _cell_class("Conv1DGRUCell", _ConvGRUCell, 1, "NCW")
Conv2DGRUCell = _cell_class("Conv2DGRUCell", _ConvGRUCell, 2, "NCHW")
Conv3DGRUCell = _cell_class("Conv3DGRUCell", _ConvGRUCell, 3, "NCDHW")
