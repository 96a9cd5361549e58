"""Helpers shared by the operator families: the storage-type names of dispatch rows, checked
parameter schemas, ``require`` and axis/size helpers."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ParamError, normalize_axis
from .params import Params

# storage-type names as dispatch rows spell them (MXNet's kernel suffixes: dns, rsp, csr)
DNS, RSP, CSR = st.DEFAULT, st.ROW_SPARSE, st.CSR_STYPE


class Checked(Params):
    """A schema whose parsed values also pass ``check(op_name, attrs)`` (range checks)."""

    def __init__(self, check, **fields):
        super().__init__(**fields)
        self.check = check

    def parse(self, op_name, kwargs):
        attrs = super().parse(op_name, kwargs)
        self.check(op_name, attrs)
        return attrs


def require(cond: object, op_name: str, msg: str) -> None:
    """Raise ParamError(``operator <op>: <msg>``) unless ``cond``."""
    if not cond:
        raise ParamError(f"operator {op_name}: {msg}")


def prod(dims) -> int | None:
    """Product of dims, None if any is unknown."""
    if dims is None or any(d is None for d in dims):
        return None
    return int(np.prod(dims, dtype=np.int64))


def norm_axis(axis: int, ndim: int, op_name: str) -> int:
    """Operator ``op_name``'s axis in [0, ndim) (ShapeError if out of range)."""
    return normalize_axis(axis, ndim, f"operator {op_name}")
