"""The imperative tape: autograd's per-thread state and the graph nodes recorded calls become.

Under ``autograd.record()`` every operator call that reads an array already on the tape
(a marked variable or the output of a recorded call) becomes a :class:`TapeNode` of the same
op, holding the raw values of its outputs; its inputs are graph entries, so a tape is an
ordinary graph the gradient pass and the executor work on. Calls that read nothing on the
tape are not recorded (MXNet's rule).
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from ..base import MXNetError
from ..graph import Node
from ..ops.core.params import Attrs

__all__ = ["STATE", "TapeNode", "variable", "record", "mark", "AUTOGRAD", "install_autograd"]


class _State(threading.local):
    """Per-thread recording and training flags (MXNet keeps them thread-local too)."""

    recording = False
    training = False


STATE = _State()


def _autograd_missing(*args, **kwargs):
    raise MXNetError("autograd is not installed: import sparsym (its autograd module installs "
                     "NDArray.attach_grad and NDArray.backward)")


class _AutogradHooks:
    """What ``NDArray.attach_grad`` and ``NDArray.backward`` call. The autograd layer
    (``sparsym/autograd.py``) installs its functions when it is imported, so the array
    layer never imports the layer above it."""

    __slots__ = ("mark_variables", "backward")

    def __init__(self):
        self.mark_variables = self.backward = _autograd_missing


AUTOGRAD = _AutogradHooks()


def install_autograd(mark_variables: Callable, backward: Callable) -> None:
    """Install autograd's ``mark_variables(variables, gradients, grad_reqs)`` and
    ``backward(heads, head_grads, retain_graph, train_mode)``."""
    AUTOGRAD.mark_variables = mark_variables
    AUTOGRAD.backward = backward
_var_ids = itertools.count()
_EMPTY = Attrs()


class TapeNode(Node):
    """A recorded call (``op`` set) or a tape variable (``op is None``).

    ``values``: raw outputs (None once a backward pass without retain_graph freed them);
    variables also carry the gradient buffer, its grad_req and MXNet's fresh-grad flag.
    """

    __slots__ = ("values", "grad", "grad_req", "fresh")


def _given(attrs):
    """MXNet's string form of the parameters, kept on the (immutable) Attrs: a layer or a
    hybridized block records the same Attrs every step. Callers never mutate it."""
    try:
        return attrs._strs
    except AttributeError:
        g = attrs.to_strings()
    try:
        attrs._strs = g
    except AttributeError:  # not an Attrs (no slot for it)
        pass
    return g


def variable(raw, grad=None, grad_req="null"):
    """A tape variable holding ``raw`` (a marked array, or a constant read by a call)."""
    n = TapeNode.__new__(TapeNode)
    n.op = None
    n.name = f"var{next(_var_ids)}"
    n.params = _EMPTY
    n.attr = {}
    n.inputs = []
    n.given = {}
    n.nout = 1
    n.values = [raw]
    n.grad = grad
    n.grad_req = grad_req
    n.fresh = False
    return n


def mark(array, grad, grad_req):
    """Make ``array`` a variable whose gradient goes to ``grad`` (mark_variables)."""
    node = variable(array._raw, grad, grad_req)
    array._ag = (node, 0)
    return node


def record(op, attrs, inputs, values, outputs):
    """Append one call to the tape if any input is on it; ``values`` are all raw outputs
    (hidden ones included), ``outputs`` the NDArrays handed to the caller."""
    on_tape = False
    for x in inputs:
        e = x._ag
        if e is not None and (e[0].values is not None or e[0].op is None):
            on_tape = True
            break
    if not on_tape:
        return
    entries = []
    for x in inputs:
        e = x._ag
        # an output of a graph a backward pass freed is a constant now (MXNet clears its
        # autograd info)
        if e is None or (e[0].values is None and e[0].op is not None):
            e = x._ag = (variable(x._raw), 0)
        elif e[0].op is None:
            e[0].values[0] = x._raw  # a variable is read at its value when the call ran
        entries.append(e)
    n = TapeNode.__new__(TapeNode)
    n.op = op
    n.name = op.name
    n.params = attrs
    n.attr = {}
    n.inputs = entries
    n.given = _given(attrs)
    n.nout = len(values)
    n.values = values
    n.grad = None
    for i, o in enumerate(outputs):
        o._ag = (n, i)
