"""Generated ``sym.*`` front ends: compose a Node from an op record."""
from __future__ import annotations

from ..ops.core.registry import all_ops
from ..ops.core.signature import front_end_doc, front_end_signature
from .arith import compose
from .symbol import Symbol

__all__ = ["call", "make_function", "populate"]


def call(op_name: str, args, kwargs: dict, name: str | None = None, attr: dict | None = None,
         hint: str | None = None) -> Symbol:
    """Create ``op_name`` applied to Symbols ``args`` (positional) and ``kwargs`` (see
    ``arith.compose``, which builds the node)."""
    return compose(op_name, args, kwargs, Symbol, name=name, attr=attr, hint=hint)


def make_function(op_name, op, hint=None):
    """Build ``sym.<op_name>`` (signature and doc from the record; no exec)."""
    hint = hint or op_name.lower()

    def fn(*args, name=None, attr=None, **kwargs):
        kwargs.pop("out", None)  # MXNet's symbol front ends accept and ignore ``out``
        return call(op_name, args, kwargs, name=name, attr=attr, hint=hint)

    fn.__name__ = op_name
    fn.__qualname__ = op_name
    fn.__signature__ = front_end_signature(op, ("name", "attr", "out"))
    fn.__doc__ = front_end_doc(op_name, op, fn.__signature__)
    return fn


def populate(namespace: dict, sparse: bool = False):
    for key, op in all_ops().items():
        pub = key[len("_sparse_"):] if sparse and key.startswith("_sparse_") else key
        if pub not in namespace or pub != key:
            namespace[pub] = make_function(key, op, hint=pub.lower())
