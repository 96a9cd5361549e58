"""Fused recurrent layers (RNN, LSTM, GRU) over the ``RNN`` operator."""
from __future__ import annotations

import re

from ... import ndarray
from ... import symbol as _symbol
from ..block import HybridBlock
from ..parameter import tensor_types

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class _RNNLayer(HybridBlock):
    """Shared body of the fused layers: per layer and direction i2h/h2h weights and biases,
    concatenated into the RNN operator's flat parameter vector at each call."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        assert layout in ("TNC", "NTC"), \
            f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']"
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = _GATES[mode]
        self._initializers = {"i2h_weight_initializer": i2h_weight_initializer,
                              "h2h_weight_initializer": h2h_weight_initializer,
                              "i2h_bias_initializer": i2h_bias_initializer,
                              "h2h_bias_initializer": h2h_bias_initializer}
        ng, ni, nh = self._gates, input_size, hidden_size
        nr = self._projection_size or nh  # the recurrent state's width
        for i in range(num_layers):
            for j in ["l", "r"][:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni),
                                     i2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, nr),
                                     h2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer,
                                     dtype)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer,
                                     dtype)
                if self._projection_size:
                    self._register_param(f"{j}{i}_h2r_weight", (nr, nh),
                                         h2r_weight_initializer, dtype)
            ni = nr * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = f"{self.__class__.__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> "
                                f"{shape[0] // self._gates}")

    def _collect_params_with_prefix(self, prefix=""):
        # the unfused cells' names, as MXNet saves them (files stay interchangeable)
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")

        def convert_key(m, bidirectional):
            d, lyr, g, t = [m.group(i) for i in range(1, 5)]
            if bidirectional:
                return f"_unfused.{lyr}.{d}_cell.{g}_{t}"
            return f"_unfused.{lyr}.{g}_{t}"

        bidirectional = any(pattern.match(k).group(1) == "r" for k in self._reg_params)
        ret = {prefix + convert_key(pattern.match(key), bidirectional): val
               for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """The same network as a stack of cells sharing this layer's Parameters (MXNet's
        helper, used to check the fused layer against the cells)."""
        from . import rnn_cell
        if self._projection_size:
            raise NotImplementedError("_unfuse does not support projection layer yet")
        if self._lstm_state_clip_min is not None or self._lstm_state_clip_max is not None:
            raise NotImplementedError("_unfuse does not support state clipping")
        make = {"rnn_relu": lambda **kw: rnn_cell.RNNCell(self._hidden_size, "relu", **kw),
                "rnn_tanh": lambda **kw: rnn_cell.RNNCell(self._hidden_size, "tanh", **kw),
                "lstm": lambda **kw: rnn_cell.LSTMCell(self._hidden_size, **kw),
                "gru": lambda **kw: rnn_cell.GRUCell(self._hidden_size, **kw)}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kw = dict(self._initializers, input_size=ni)
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f"l{i}_", **kw),
                                                         make(prefix=f"r{i}_", **kw)))
                else:
                    stack.add(make(prefix=f"l{i}_", **kw))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states (zeros by default), one per state of every layer/direction."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def infer_shape(self, inputs, *args):
        """The first layer's input size comes from the inputs' last axis."""
        ni = inputs.shape[-1]
        ng, nh = self._gates, self._hidden_size
        for j in ["l", "r"][:self._dir]:
            getattr(self, f"{j}0_i2h_weight").shape = (ng * nh, ni)

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=_symbol.zeros)
        if isinstance(states, tensor_types):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ValueError(f"Invalid recurrent state shape. Expecting "
                                     f"{info['shape']}, got {state.shape}.")
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        gs = ["i2h", "h2h", "h2r"] if self._projection_size else ["i2h", "h2h"]
        params = [kwargs[f"{d}{lyr}_{g}_{t}"]
                  for t in ["weight", "bias"] for lyr in range(self._num_layers)
                  for d in ["l", "r"][:self._dir] for g in gs
                  if g != "h2r" or t != "bias"]
        if F is ndarray:  # one recorded call instead of a reshape per parameter and a concat
            params = F._internal._rnn_param_flat(*params)
        else:  # the graph MXNet's layer builds (exported symbols read the same in MXNet)
            params = F._internal._rnn_param_concat(*[p.reshape((-1,)) for p in params], dim=0)
        rnn_args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        opts = {}
        if self._lstm_state_clip_min is not None:
            opts["lstm_state_clip_min"] = self._lstm_state_clip_min
        if self._lstm_state_clip_max is not None:
            opts["lstm_state_clip_max"] = self._lstm_state_clip_max
        if self._lstm_state_clip_nan:
            opts["lstm_state_clip_nan"] = self._lstm_state_clip_nan
        if self._use_sequence_length:
            opts["use_sequence_length"] = True
        if self._projection_size:
            opts["projection_size"] = self._projection_size
        rnn = F.RNN(inputs, params, *rnn_args, state_size=self._hidden_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode, **opts)
        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states


def _state(layer, batch_size):
    return {"shape": (layer._num_layers * layer._dir, batch_size, layer._hidden_size),
            "__layout__": "LNC", "dtype": layer._dtype}


class RNN(_RNNLayer):
    """Multi-layer Elman RNN (``activation`` 'relu' or 'tanh').

    Parameters
    ----------
    hidden_size : int
    num_layers : int
    activation : {'relu', 'tanh'}
    layout : {'TNC', 'NTC'}
    dropout : float
        Between layers.
    bidirectional : bool
    input_size : int
        0 infers it at the first forward.
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "rnn_" + activation,
                         None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [_state(self, batch_size)]


class LSTM(_RNNLayer):
    """Multi-layer LSTM (two states: h and c)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None,
                 h2r_weight_initializer=None, state_clip_min=None, state_clip_max=None,
                 state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "lstm", projection_size,
                         h2r_weight_initializer, state_clip_min, state_clip_max,
                         state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        h = _state(self, batch_size)
        if self._projection_size:
            h["shape"] = h["shape"][:2] + (self._projection_size,)
        return [h, _state(self, batch_size)]


class GRU(_RNNLayer):
    """Multi-layer GRU."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "gru", None, None, None,
                         None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [_state(self, batch_size)]
