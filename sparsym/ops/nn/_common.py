"""Helpers shared by the nn operator modules (not an op family: skipped by auto-import)."""
from __future__ import annotations

import numpy as np

from ...base import ParamError
from .. import rules
from ..params import Params

D, R, C = "default", "row_sparse", "csr"


class Checked(Params):
    """A schema whose parsed values also pass ``check(op_name, attrs)`` (range checks)."""

    def __init__(self, check, **fields):
        super().__init__(**fields)
        self.check = check

    def parse(self, op_name, kwargs):
        attrs = super().parse(op_name, kwargs)
        self.check(op_name, attrs)
        return attrs


def require(cond, op_name, msg):
    """Raise ParamError(``operator <op>: <msg>``) unless ``cond``."""
    if not cond:
        raise ParamError(f"operator {op_name}: {msg}")


def multi_bw(op_name, inputs, node, tag, n, **params):
    """Entries 0..n-1 of one new multi-output backward node."""
    from ...passes.gradient import make_node
    b = make_node(op_name, inputs, f"{node.name}_{tag}", **params)
    return [(b, i) for i in range(n)]


def kept(node):
    """The forward node's params as keyword arguments for its backward node."""
    return dict(node.params)


def grads_shaped_like(n_ograd, extra=None):
    """Backward shape rule: output i has the shape of forward input i (ins after ograds)."""
    def rule(attrs, ins, outs):
        fwd = ins[n_ograd:]
        for i in range(len(outs)):
            if i < len(fwd) and fwd[i] is not None:
                rules.set_shape(outs, i, fwd[i], "output")
        if extra is not None:
            extra(attrs, ins, outs)
        return ins, outs
    return rule


def grads_typed_like(n_ograd):
    """Backward dtype rule: output i has forward input i's dtype, else the ograd's."""
    def rule(attrs, ins, outs):
        fwd = ins[n_ograd:]
        for i in range(len(outs)):
            t = fwd[i] if i < len(fwd) and fwd[i] is not None else ins[0]
            if t is not None:
                rules.set_type(outs, i, t, "output")
        return ins, outs
    return rule


def prod(dims):
    """Product of dims, None if any is unknown."""
    if dims is None or any(d is None for d in dims):
        return None
    return int(np.prod(dims, dtype=np.int64))


def norm_axis(axis, ndim, op_name):
    """Normalise a possibly negative axis; ShapeError-compatible Conflict-free check."""
    from ...base import ShapeError
    a = int(axis)
    if a < 0:
        a += ndim
    if not 0 <= a < ndim:
        raise ShapeError(f"operator {op_name}: axis {axis} out of range for {ndim}-D input")
    return a
