"""Gradient expressions: write a backward graph as arithmetic on entries.

Higher-order gradients need the gradients of the backward ops themselves, built from
differentiable registered ops (so that they can be differentiated once more). ``Ex``
wraps a graph entry; its operators append nodes of the elementwise ops:

>>> # d/dx of _backward_tan(ograd, x) = ograd * 2 tan(x) (1 + tan(x)^2)
>>> # t = x.op("tan"); rule = g * ograd * 2 * t * (1 + t * t)
"""
from __future__ import annotations

import itertools
import numbers

__all__ = ["Ex"]

_ids = itertools.count()


def _node(op_name, inputs, **params):
    from .node import make_node
    return (make_node(op_name, inputs, f"_grad_expr{next(_ids)}_{op_name}", **params), 0)


class Ex:
    """A graph entry with arithmetic building elementwise nodes (same-shape operands)."""

    __slots__ = ("entry",)

    def __init__(self, entry):
        self.entry = entry

    def op(self, name, **params):
        """``name(self)`` for a registered unary op."""
        return Ex(_node(name, [self.entry], **params))

    def __mul__(self, o):
        if isinstance(o, numbers.Number):
            return Ex(_node("_mul_scalar", [self.entry], scalar=float(o)))
        return Ex(_node("elemwise_mul", [self.entry, o.entry]))

    __rmul__ = __mul__

    def __add__(self, o):
        if isinstance(o, numbers.Number):
            return Ex(_node("_plus_scalar", [self.entry], scalar=float(o)))
        return Ex(_node("elemwise_add", [self.entry, o.entry]))

    __radd__ = __add__

    def __sub__(self, o):
        if isinstance(o, numbers.Number):
            return Ex(_node("_minus_scalar", [self.entry], scalar=float(o)))
        return Ex(_node("elemwise_sub", [self.entry, o.entry]))

    def __rsub__(self, o):
        return Ex(_node("_rminus_scalar", [self.entry], scalar=float(o)))

    def __truediv__(self, o):
        if isinstance(o, numbers.Number):
            return Ex(_node("_div_scalar", [self.entry], scalar=float(o)))
        return Ex(_node("elemwise_div", [self.entry, o.entry]))

    def __rtruediv__(self, o):
        return Ex(_node("_rdiv_scalar", [self.entry], scalar=float(o)))

    def __pow__(self, p):
        return Ex(_node("_power_scalar", [self.entry], scalar=float(p)))

    def __neg__(self):
        return Ex(_node("negative", [self.entry]))
