"""RNN checkpoints: save/load with cell weights in their unpacked (per-gate) form."""
from __future__ import annotations

import warnings

from .. import checkpoint, symbol
from .rnn_cell import BaseRNNCell

__all__ = ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint", "rnn_unroll"]


def _cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """Save a checkpoint with the cells' weights unpacked (MXNet's layout on disk).

    Parameters
    ----------
    cells : BaseRNNCell or list of them
    prefix : str
    epoch : int
    symbol : Symbol
    arg_params, aux_params : dict of str -> NDArray
    """
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    checkpoint.save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """Load a checkpoint saved by :func:`save_rnn_checkpoint`, packing the cells' weights.

    Returns
    -------
    (symbol, arg_params, aux_params)
    """
    sym, arg, aux = checkpoint.load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback calling :func:`save_rnn_checkpoint` every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated: ``cell.unroll(length, inputs, begin_state, layout)``.

    Without ``inputs`` the steps read variables ``<input_prefix>t<i>_data`` (what the old
    API made; MXNet 1.9.1's own version fails passing ``input_prefix`` to ``unroll``).
    """
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.",
                  DeprecationWarning, stacklevel=2)
    if inputs is None:
        inputs = [symbol.Variable(f"{input_prefix}t{i}_data") for i in range(length)]
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)
