"""Modifier cells wrapping another cell: ModifierCell, ZoneoutCell, ResidualCell."""
from __future__ import annotations

from .. import symbol
from ..base import MXNetError
from ..symbol import Symbol
from .rnn_cell import (
    BaseRNNCell,
    BidirectionalCell,
    FusedRNNCell,
    SequentialRNNCell,
    _normalize_sequence,
)

__all__ = ["ModifierCell", "ZoneoutCell", "ResidualCell"]


class ModifierCell(BaseRNNCell):
    """Base class for cells that wrap another cell (its params and states are the base's)."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        if self._modified:
            raise MXNetError("After applying modifier cells the base cell cannot be called "
                             "directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout: randomly keep the previous output/state instead of the new one (training).

    Parameters
    ----------
    base_cell : BaseRNNCell (not fused, not bidirectional)
    zoneout_outputs, zoneout_states : float, default 0
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, FusedRNNCell):
            raise MXNetError("FusedRNNCell doesn't support zoneout. Please unfuse first.")
        if isinstance(base_cell, BidirectionalCell):
            raise MXNetError("BidirectionalCell doesn't support zoneout since it doesn't "
                             "support step. Please add ZoneoutCell to the cells underneath "
                             "instead.")
        if isinstance(base_cell, SequentialRNNCell) and any(
                isinstance(c, BidirectionalCell) for c in base_cell._cells):
            raise MXNetError("Bidirectional SequentialRNNCell doesn't support zoneout. Please "
                             "add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        cell, p_out, p_st = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = (symbol.where(mask(p_out, next_output), next_output, prev)
                  if p_out != 0. else next_output)
        states = ([symbol.where(mask(p_st, new), new, old)
                   for new, old in zip(next_states, states)] if p_st != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Add the input to the base cell's output (a residual connection).

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs)
        self.base_cell._modified = True
        merge_outputs = isinstance(outputs, Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual")
        else:
            outputs = [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                       for o, i in zip(outputs, inputs)]
        return outputs, states
