"""Shared shape and type rules. Shapes are tuples whose dims may be None (unknown);
a whole shape may be None. Rules take (attrs, in_shapes, out_shapes) and return them
completed; conflicts raise ShapeError/DTypeError through :func:`merge`."""
from __future__ import annotations

import numpy as np

from ...base import DTypeError, ShapeError


class Conflict(Exception):
    """Internal: two values disagree; the pass re-raises it with the node's name."""

    def __init__(self, kind, index, side, expected, got):
        super().__init__(kind, index, side, expected, got)
        self.kind, self.index, self.side, self.expected, self.got = kind, index, side, expected, got


def known(shape) -> bool:
    """A shape is known when it and every dim are known."""
    return shape is not None and all(d is not None for d in shape)


def merge_shape(a, b):
    """Combine two partial shapes; raise ValueError when they disagree."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise ValueError
    out = []
    for x, y in zip(a, b):
        if x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise ValueError
    return tuple(out)


def set_shape(shapes, i, value, side="input"):
    """Merge ``value`` into ``shapes[i]`` in place; a disagreement raises Conflict."""
    try:
        shapes[i] = merge_shape(shapes[i], None if value is None else tuple(value))
    except ValueError:
        raise Conflict("shape", i, side, shapes[i], tuple(value)) from None


def set_type(types, i, value, side="input"):
    """Merge a dtype into ``types[i]`` in place."""
    if value is None:
        return
    if types[i] is None:
        types[i] = value
    elif types[i] != value:
        raise Conflict("dtype", i, side, types[i], value)


# ----------------------------------------------------------------------------- shape rules
def merged_shape(shapes, side="input", cur=None, first=0):
    """The one shape that ``shapes`` (and ``cur``) share, None while all are unknown; a
    disagreement raises Conflict naming entry ``first + i`` on ``side``."""
    for i, s in enumerate(shapes):
        try:
            cur = merge_shape(cur, s)
        except ValueError:
            raise Conflict("shape", first + i, side, cur, s) from None
    return cur


def same_shape(attrs, ins, outs):
    """Every input and output has one shape (elementwise ops)."""
    cur = merged_shape(outs, "output", merged_shape(ins))
    for i in range(len(ins)):
        ins[i] = cur
    for i in range(len(outs)):
        outs[i] = cur
    return ins, outs


def first_input_shape(attrs, ins, outs):
    """Outputs take input 0's shape; other inputs are free (label-like)."""
    if ins[0] is not None:
        for i in range(len(outs)):
            set_shape(outs, i, ins[0], "output")
    elif outs and outs[0] is not None:
        set_shape(ins, 0, outs[0])
    return ins, outs


def _grad_sources(n_ograd, sources, attrs, ins, n_out):
    """(forward inputs, per output the index of the forward input it is the gradient of)."""
    fwd = ins[(n_ograd(attrs) if callable(n_ograd) else n_ograd):]
    src = tuple(range(n_out)) if sources is None else tuple(sources)
    return fwd, [src[i] if i < len(src) and src[i] < len(fwd) else None for i in range(n_out)]


def grads_like_inputs(n_ograd=1, sources=None, then=None):
    """Backward shape rule for ops laid out as (ograds..., forward inputs...): gradient i has
    the shape of forward input ``sources[i]`` (default: input i).

    ``n_ograd`` may be ``f(attrs)``; ``then(attrs, ins, outs)`` completes gradients that
    have no forward input of their own (a bias the backward op does not take).
    """
    def rule(attrs, ins, outs):
        fwd, src = _grad_sources(n_ograd, sources, attrs, ins, len(outs))
        for i, j in enumerate(src):
            if j is not None and fwd[j] is not None:
                set_shape(outs, i, fwd[j], "output")
        if then is not None:
            then(attrs, ins, outs)
        return ins, outs
    return rule


def bias_grad_shape(size_param):
    """``then`` step of :func:`grads_like_inputs` for layers whose backward op does not take
    the bias: gradient 2 is ``(attrs.<size_param>,)`` unless ``no_bias``."""
    def then(attrs, ins, outs):
        if not attrs.no_bias:
            set_shape(outs, 2, (getattr(attrs, size_param),), "output")
    return then


def same_type(attrs, ins, outs):
    """Every input and output has one dtype (the first known; MXNet's ElemwiseType, whose
    conflict reads "expected <that dtype>, got <the other>")."""
    cur = next((t for t in list(ins) + list(outs) if t is not None), None)
    if cur is None:
        return ins, outs
    for side, vals in (("input", ins), ("output", outs)):
        for i, t in enumerate(vals):
            if t is None:
                vals[i] = cur
            elif t != cur:
                raise Conflict("dtype", i, side, cur, t)
    return ins, outs


def floating_input(rule):
    """``rule`` for ops that MXNet runs on floating-point data only (softmax family,
    Activation): an integer input raises MXNet's "only support floating point types"."""
    def checked(attrs, ins, outs):
        t = ins[0]
        if t is not None and np.dtype(t).kind not in "fc":
            raise DTypeError("This operation only support floating point types, not "
                             f"{np.dtype(t).name}")
        return rule(attrs, ins, outs)
    return checked


def shape_of_input(i):
    """Shape rule: output 0 has input ``i``'s shape (once it is known)."""
    def rule(attrs, ins, outs):
        if ins[i] is not None:
            set_shape(outs, 0, ins[i], "output")
        return ins, outs
    return rule


def type_of_input(i, n_out=1, fixed=None):
    """Type rule: outputs ``0..n_out-1`` take input ``i``'s dtype (``i`` a tuple: the first
    known of those inputs); ``fixed`` maps an output index to a dtype it always has."""
    cands = (i,) if isinstance(i, int) else tuple(i)

    def rule(attrs, ins, outs):
        t = next((ins[j] for j in cands if ins[j] is not None), None)
        for k in range(n_out):
            if fixed and k in fixed:
                set_type(outs, k, np.dtype(fixed[k]), "output")
            elif t is not None:
                set_type(outs, k, t, "output")
        return ins, outs
    return rule


def first_input_type(attrs, ins, outs):
    """Outputs take input 0's dtype; other inputs default to it when unknown."""
    cur = ins[0] if ins[0] is not None else (outs[0] if outs else None)
    if cur is None:
        return ins, outs
    for i in range(len(ins)):
        if ins[i] is None:
            ins[i] = cur
    set_type(ins, 0, cur)
    for i in range(len(outs)):
        set_type(outs, i, cur, "output")
    return ins, outs


def grads_like_inputs_type(n_ograd=1, sources=None):
    """Backward dtype rule matching :func:`grads_like_inputs`: gradient i has forward input
    ``sources[i]``'s dtype; one without a forward input has forward input 0's (else the
    head gradient's)."""
    def rule(attrs, ins, outs):
        fwd, src = _grad_sources(n_ograd, sources, attrs, ins, len(outs))
        for i, j in enumerate(src):
            t = fwd[j] if j is not None else (fwd[0] if fwd and fwd[0] is not None else ins[0])
            if t is not None:
                set_type(outs, i, t, "output")
        return ins, outs
    return rule


def broadcast_shapes(a, b):
    """NumPy broadcasting of two known shapes (MXNet's broadcast_* rule)."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError
    return tuple(out)


def broadcast_shape(attrs, ins, outs):
    """Binary broadcasting; output known once both inputs are."""
    if known(ins[0]) and known(ins[1]):
        try:
            out = broadcast_shapes(ins[0], ins[1])
        except ValueError:
            raise Conflict("shape", 1, "input", ins[0], ins[1]) from None
        set_shape(outs, 0, out, "output")
    return ins, outs


def fmt_shape(s) -> str:
    """MXNet's shape text: ``[2,3]``; unknown dims are -1, an unknown shape None."""
    if s is None:
        return "None"
    if isinstance(s, str):  # a rule's description of what it expected ("4-D data")
        return s
    if isinstance(s, (int, np.integer)):  # one dim
        return str(s)
    return "[" + ",".join("-1" if d is None else str(d) for d in s) + "]"


def fmt_value(kind, v) -> str:
    """A shape (``kind == 'shape'``) or a dtype as MXNet prints it."""
    if kind == "shape":
        return fmt_shape(v)
    return "None" if v is None else getattr(v, "name", str(v))


def raise_conflict(c: Conflict, node_name, op_name, in_names=None, out_names=None, hint=""):
    """Raise the public error for a disagreement: MXNet's greppable "Incompatible attr in
    node X at i-th input: expected A, got B", with the op, the input's name and ``hint``.

    The same text whether the op ran from ``nd.*`` or in a bound graph.
    """
    names = in_names if c.side == "input" else out_names
    label = f" {names[c.index]!r}" if names and c.index < len(names) else ""
    what = "Shape" if c.kind == "shape" else "Type"
    raise (ShapeError if c.kind == "shape" else DTypeError)(
        f"Error in operator {node_name} ({op_name}): {what} inconsistent: Incompatible attr "
        f"in node {node_name} at {c.index}-th {c.side}{label}: expected "
        f"{fmt_value(c.kind, c.expected)}, got {fmt_value(c.kind, c.got)}{hint}") from None
