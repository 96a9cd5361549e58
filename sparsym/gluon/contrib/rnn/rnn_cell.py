"""VariationalDropoutCell (one dropout mask per sequence, Gal and Ghahramani 2016) and
dynamic_unroll (a cell stepped by ``contrib.foreach``, one graph node for any length)."""
from __future__ import annotations

from ...parameter import tensor_types
from ...rnn.rnn_cell import (
    BidirectionalCell,
    ModifierCell,
    _as_list,
    _format_sequence,
    _get_begin_state,
    _mask_sequence_variable_length,
)

__all__ = ["VariationalDropoutCell", "dynamic_unroll"]


class VariationalDropoutCell(ModifierCell):
    """Dropout on inputs, the first state and outputs with masks fixed over the time steps.

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs, drop_states, drop_outputs : float
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        assert not drop_states or not isinstance(base_cell, BidirectionalCell), (
            "BidirectionalCell doesn't support variational state dropout. Please add "
            "VariationalDropoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _initialize_input_masks(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)

    def _initialize_output_mask(self, F, output):
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)

    def hybrid_forward(self, F, inputs, states):
        self._initialize_input_masks(F, inputs, states)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask  # h is always the first state
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        self._initialize_output_mask(F, next_output)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self):
        return (f"{self.__class__.__name__}(p_out = {self.drop_outputs}, "
                f"p_state = {self.drop_states})")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        # without state dropout, input and output dropout apply to whole sequences at once
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge_outputs = isinstance(outputs, tensor_types) if merge_outputs is None \
            else merge_outputs
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, states


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Unroll ``cell`` over the time axis of ``inputs`` with ``contrib.foreach``.

    Unlike ``cell.unroll``, the graph holds one loop whatever the sequence length, so a
    hybridized block serves every length.

    Parameters
    ----------
    cell : RecurrentCell
        The cell stepped over the sequence.
    inputs : NDArray or Symbol
        (length, batch, ...) for layout 'TNC', (batch, length, ...) for 'NTC'.
    begin_state : list of NDArray or Symbol
        The cell's initial states.
    drop_inputs, drop_outputs : float
        Dropout rates of the inputs and of the outputs (one mask per time axis).
    layout : {'TNC', 'NTC'}
    valid_length : NDArray or Symbol, optional
        (batch,) lengths of the sequences: a sequence's states stop changing after its
        last valid step, which they return, and its padded outputs read 0.

    Returns
    -------
    outputs : NDArray or Symbol
        In ``layout``.
    states : list of NDArray or Symbol
        The states after the last (valid) step.

    Examples
    --------
    >>> import sparsym as mx
    >>> cell = mx.gluon.rnn.GRUCell(4)
    >>> cell.initialize()
    >>> x = mx.nd.ones((3, 2, 5))
    >>> out, states = mx.gluon.contrib.rnn.dynamic_unroll(
    ...     cell, x, cell.begin_state(batch_size=2), valid_length=mx.nd.array([1, 3]))
    >>> out.shape, float(out[2, 0].abs().sum())
    ((3, 2, 4), 0.0)
    """
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    if axis != 0:
        inputs = F.swapaxes(inputs, dim1=0, dim2=axis)
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    states = list(_as_list(begin_state))
    if valid_length is None:
        def body(x, st):
            return cell(x, st)
    else:
        states.append(F.zeros((1,)))  # the step number rides along as the last state

        def body(x, st):
            out, new = cell(x, st[:-1])
            step = st[-1]
            alive = F.broadcast_greater(valid_length, step)
            new = [F.where(alive, n, old) for n, old in zip(new, st[:-1])]
            return out, new + [step + 1]
    outputs, states = F.contrib.foreach(body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axis != 0:
        outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
    if valid_length is None:
        return outputs, states
    outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True,
                             axis=axis)
    return outputs, states[:-1]
