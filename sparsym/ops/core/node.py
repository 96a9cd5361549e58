"""Graph nodes: an operator application or a variable, and ``make_node`` for the nodes that
gradient rules build. It lives with the op records so that ops can build backward nodes
without importing the symbol or pass layers (which import it from here)."""
from __future__ import annotations

from .params import Attrs, is_plain
from .registry import get_op

__all__ = ["Node", "make_node"]


class Node:
    """An operator application or a variable (``op is None``).

    ``params``: typed op parameters (defaults filled in); ``given``: the parameters the
    user passed, as MXNet's strings (what JSON and ``list_attr`` show); ``attr``: other
    string attributes (``__shape__``, ``__storage_type__``, ``__ctx_group__``, user keys);
    ``inputs``: list of (Node, output index) entries.
    """

    __slots__ = ("op", "name", "params", "attr", "inputs", "given", "nout", "__weakref__")

    def __init__(self, op, name, params=None, attr=None, inputs=(), given=None):
        self.op = op
        self.name = name
        self.params = params if params is not None else Attrs()
        self.attr = dict(attr) if attr else {}
        self.inputs = list(inputs)
        if given is None:
            given = {} if op is None else self.params.to_strings()
        self.given = given
        self.nout = 1 if op is None else op.n_outputs(self.params)

    @property
    def is_variable(self) -> bool:
        return self.op is None

    def num_outputs(self) -> int:
        return self.nout

    def num_visible(self) -> int:
        """Outputs a Symbol exposes (hidden ones feed the backward op only)."""
        return 1 if self.op is None else self.op.n_visible(self.params)

    def all_attrs(self) -> dict:
        """MXNet's ``attrs.dict``: the given parameters and the string attributes."""
        if not self.given:
            return dict(self.attr)
        out = dict(self.given)
        out.update(self.attr)
        return out

    def copy(self):
        """A shallow copy (same inputs list contents, own dicts)."""
        return Node(self.op, self.name, self.params, self.attr, self.inputs, dict(self.given))

    def __repr__(self):
        return f"Node({self.op.name if self.op else 'var'}, {self.name!r})"


_PARSED: dict = {}


def make_node(op_name: str, inputs: list, name: str, **params) -> Node:
    """Create a backward/helper node of a registered op (params given as Python values).

    Parsed parameters are shared between nodes with equal parameters (they are never
    mutated), which keeps the gradient pass cheap on long unrolled graphs.
    """
    op = get_op(op_name)
    try:
        key = (op_name, tuple(sorted(params.items())))
        hit = _PARSED.get(key)
    except TypeError:  # unhashable parameter values
        key = hit = None
    if hit is None:
        attrs = op.params.parse(op_name, params)
        hit = (attrs, {k: str(v) for k, v in params.items()})
        # plain values only: a memo keyed by a Function (autograd.Function's backward
        # node) would keep its saved arrays, and a hybridized block's executor, alive
        if key is not None and len(_PARSED) < 4096 and all(is_plain(v)
                                                            for v in params.values()):
            _PARSED[key] = hit
    return Node(op, name, hit[0], {}, inputs, hit[1])
