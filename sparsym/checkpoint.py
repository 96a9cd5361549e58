"""Checkpoint files: ``prefix-symbol.json`` and ``prefix-%04d.params`` (``mx.model``'s
``save_checkpoint`` / ``load_checkpoint`` / ``load_params``; MXNet 1.x files load too)."""
from __future__ import annotations

import logging

from .base import FormatError
from .ndarray.utils import load, save
from .symbol import Symbol
from .symbol import load as symbol_load

__all__ = ["save_checkpoint", "load_checkpoint", "load_params"]


def save_checkpoint(prefix: str, epoch: int, symbol: Symbol | None, arg_params: dict,
                    aux_params: dict,
                    remove_amp_cast: bool = True) -> None:
    """Write a checkpoint; each file goes to a temp name and is renamed into place."""
    if symbol is not None:
        symbol.save("%s-symbol.json" % prefix)
    d = {("arg:%s" % k): v for k, v in arg_params.items()}
    d.update({("aux:%s" % k): v for k, v in aux_params.items()})
    name = "%s-%04d.params" % (prefix, epoch)
    save(name, d)
    logging.getLogger("sparsym").info('Saved checkpoint to "%s"', name)


def load_params(prefix: str, epoch: int) -> tuple[dict, dict]:
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    fname = "%s-%04d.params" % (prefix, epoch)
    loaded = load(fname)
    if not isinstance(loaded, dict):
        raise FormatError(f"{fname}: expected named arrays (arg:/aux: keys), got a list")
    arg, aux = {}, {}
    for k, v in loaded.items():
        tp, _, name = k.partition(":")
        if tp == "arg":
            arg[name] = v
        elif tp == "aux":
            aux[name] = v
        else:
            raise FormatError(f"{fname}: key {k!r} is not prefixed with arg: or aux:")
    return arg, aux


def load_checkpoint(prefix: str, epoch: int) -> tuple[Symbol, dict, dict]:
    """(symbol, arg_params, aux_params) of a checkpoint (MXNet 1.x files load too)."""
    symbol = symbol_load("%s-symbol.json" % prefix)
    arg, aux = load_params(prefix, epoch)
    return symbol, arg, aux
