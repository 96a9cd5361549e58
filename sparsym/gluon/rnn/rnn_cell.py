"""Gluon recurrent cells: one time step as a Block, unrolled over a sequence."""
from __future__ import annotations

from ... import ndarray
from ... import symbol as _symbol
from ..block import Block, HybridBlock
from ..nn.activations import LeakyReLU
from ..parameter import _indent, tensor_types

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell", "LSTMPCell"]


def _check_unmodified(cell):
    """A cell wrapped by a modifier (ZoneoutCell...) is used through the modifier only."""
    assert not cell._modified, (
        "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
        "directly. Call the modifier cell instead.")


def _cells_state_info(cells, batch_size):
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    """``begin_state`` or zeros on the inputs' context."""
    if begin_state is None:
        if F is ndarray:
            ctx = inputs.context if isinstance(inputs, tensor_types) else inputs[0].context
            with ctx:
                begin_state = cell.begin_state(func=F.zeros, batch_size=batch_size)
        else:
            begin_state = cell.begin_state(func=F.zeros, batch_size=batch_size)
    return begin_state


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """(inputs as one tensor or a per-step list, time axis, F, batch size)."""
    assert inputs is not None, ("unroll(inputs=None) has been deprecated. Please create input "
                                "variables outside unroll.")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    batch_size = 0
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, _symbol.Symbol):
        F = _symbol
        if merge is False:
            assert len(inputs.list_outputs()) == 1, (
                "unroll doesn't allow grouped symbol as input. Please convert to list with "
                "list(inputs) first or let unroll handle splitting.")
            inputs = list(_symbol.split(inputs, axis=in_axis, num_outputs=length,
                                        squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            assert length is None or length == inputs.shape[in_axis]
            inputs = _as_list(ndarray.split(inputs, axis=in_axis,
                                            num_outputs=inputs.shape[in_axis],
                                            squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        if isinstance(inputs[0], _symbol.Symbol):
            F = _symbol
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]  # per-step tensors: the batch comes first
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, tensor_types) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zero the steps past each sequence's valid length."""
    assert valid_length is not None
    if not isinstance(data, tensor_types):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                   squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    """Reverse a per-step list (each sequence within its valid length)."""
    F = _symbol if isinstance(sequences[0], _symbol.Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    if unroll_step > 1 or F is _symbol:
        return list(F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))
    return [rev[0]]


class RecurrentCell(Block):
    """Base class of recurrent cells: ``cell(inputs, states) -> (output, states)``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step counters (before a new unroll)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """Shapes and layouts of the states."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states made by ``func`` (``nd.zeros`` by default)."""
        _check_unmodified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run ``length`` steps over ``inputs``; returns (outputs, final states)."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele_list, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for ele_list in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation) if isinstance(activation, str) else None
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is a ``hybrid_forward``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """i2h/h2h weights and biases of ``gates`` gates of ``hidden_size``."""

    _gates = 1
    _num_states = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        n = self._gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(n, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(n, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(n,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(n,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}
                for _ in range(self._num_states)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        # MXNet shows the i2h weight's rows: gates * hidden units
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        act = f", {self._activation}" if hasattr(self, "_activation") and self._gates == 1 \
            else ""
        return f"{self.__class__.__name__}({mapping}{act})"

    def _i2h_h2h(self, F, inputs, state, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        n = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=state, weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        return i2h, h2h


class RNNCell(_GatedCell):
    """Elman cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation

    def _alias(self):
        return "rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                 h2h_bias, prefix)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + "plus0"),
                                      self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    """Long short-term memory cell (gates in MXNet's order: in, forget, cell, out)."""

    _gates = 4
    _num_states = 2

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                 h2h_bias, prefix)
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        sl = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        rec = self._recurrent_activation
        in_gate = self._get_activation(F, sl[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, sl[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, sl[2], self._activation, name=prefix + "c")
        out_gate = self._get_activation(F, sl[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=self._activation,
                                                       name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """Gated recurrent unit (gates in MXNet's order: reset, update, new)."""

    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        prev_h = states[0]
        i2h, h2h = self._i2h_h2h(F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias,
                                 h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
                                  act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
                                   act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = F.Activation(F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h,
                                                                     name=prefix + "mul0"),
                                                 name=prefix + "plus2"),
                                  act_type="tanh", name=prefix + "h_act")
        ones = F.ones_like(update_gate, name=prefix + "ones_like0")
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate, name=prefix + "minus0"),
                           next_h_tmp, name=prefix + "mul1"),
            F.elemwise_mul(update_gate, prev_h, name=prefix + "mul20"), name=prefix + "out")
        return next_h, [next_h]


def _seq_repr(cell):
    modstr = "\n".join([f"({i}): {_indent(repr(m), 2)}" for i, m in cell._children.items()])
    return f"{cell.__class__.__name__}(\n{modstr}\n)"


def _seq_step(cell, inputs, states):
    cell._counter += 1
    next_states, p = [], 0
    assert all(not isinstance(c, BidirectionalCell) for c in cell._children.values())
    for c in cell._children.values():
        n = len(c.state_info())
        state = states[p:p + n]
        p += n
        inputs, state = c(inputs, state)
        next_states.append(state)
    return inputs, sum(next_states, [])


def _seq_unroll(cell, length, inputs, begin_state, layout, merge_outputs, valid_length):
    cell.reset()
    inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
    num_cells = len(cell._children)
    begin_state = _get_begin_state(cell, F, begin_state, inputs, batch_size)
    p, next_states = 0, []
    for i, c in enumerate(cell._children.values()):
        n = len(c.state_info())
        states = begin_state[p:p + n]
        p += n
        inputs, states = c.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                  merge_outputs=None if i < num_cells - 1 else merge_outputs,
                                  valid_length=valid_length)
        next_states.extend(states)
    return inputs, next_states


class _SeqCell:
    """Methods the sequential cells share: children stepped or unrolled in order."""

    def __repr__(self):
        return _seq_repr(self)

    def add(self, cell):
        """Append a cell."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        return _seq_unroll(self, length, inputs, begin_state, layout, merge_outputs,
                           valid_length)

    def __call__(self, inputs, states):
        return _seq_step(self, inputs, states)

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_SeqCell, RecurrentCell):
    """Stack recurrent cells: each step's output feeds the next cell."""


class HybridSequentialRNNCell(_SeqCell, HybridRecurrentCell):
    """Stack hybrid recurrent cells."""

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (no states)."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        assert isinstance(rate, (int, float)), "rate must be a number"
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f"{self.__class__.__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, tensor_types):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base of cells that wrap another cell (zoneout, residual...)."""

    def __init__(self, base_cell):
        assert not base_cell._modified, \
            f"Cell {base_cell.name} is already modified. One cell cannot be modified twice"
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=ndarray.zeros, **kwargs):
        _check_unmodified(self)
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=func, **kwargs)
        self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_cell})"


class ZoneoutCell(ModifierCell):
    """Randomly keep the previous output/states instead of the new ones (training only)."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        assert not isinstance(base_cell, BidirectionalCell), (
            "BidirectionalCell doesn't support zoneout since it doesn't support step. Please "
            "add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"{self.__class__.__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = F.where(mask(p_outputs, next_output), next_output, prev_output) \
            if p_outputs != 0. else next_output
        states = [F.where(mask(p_states, new_s), new_s, old_s)
                  for new_s, old_s in zip(next_states, states)] \
            if p_states != 0. else next_states
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Add the cell's input to its output."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd")
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                begin_state=begin_state, layout=layout,
                                                merge_outputs=merge_outputs,
                                                valid_length=valid_length)
        self.base_cell._modified = True
        merge_outputs = isinstance(outputs, tensor_types) if merge_outputs is None \
            else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Run one cell forward and another backward in time; concatenate their outputs."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return (f"{self.__class__.__name__}(forward={self._children['l_cell']}, "
                f"backward={self._children['r_cell']})")

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, tensor_types)
        l_outputs, _, _, _ = _format_sequence(length, l_outputs, layout, merge_outputs)
        reversed_r_outputs, _, _, _ = _format_sequence(length, reversed_r_outputs, layout,
                                                       merge_outputs)
        if merge_outputs:
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2,
                               name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")



class LSTMPCell(HybridRecurrentCell):
    """LSTM with a projection of the hidden state (Sak et al., 2014): states are the
    projected output r (``projection_size``) and the cell c (``hidden_size``)."""

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(4 * hidden_size, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight",
                                          shape=(4 * hidden_size, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(4 * hidden_size,),
                                        init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(4 * hidden_size,),
                                        init=h2h_bias_initializer, allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        proj = self.h2r_weight.shape
        return (f"{self.__class__.__name__}({shape[1] if shape[1] else None} -> {shape[0]} "
                f"-> {proj[0]})")

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = f"t{self._counter}_"
        n = self._hidden_size * 4
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        sl = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(sl[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(sl[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(sl[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(sl[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]
