"""Gradient rules' building blocks: backward nodes named after the forward node, and the
common gradients (none, identity). Every op module builds its ``gradient`` from these."""
from __future__ import annotations

from typing import Any

from .node import Node, make_node

Entry = tuple  # (Node, output index)

__all__ = ["bw", "bw_node", "multi_bw", "kept", "no_grad", "identity_grad"]


def bw_node(op_name: str, inputs: list, node: Node, tag: str, **params: Any) -> Node:
    """A new backward node named ``<forward node>_<tag>`` (multi-output ops: use (node, i))."""
    return make_node(op_name, inputs, f"{node.name}_{tag}", **params)


def bw(op_name: str, inputs: list, node: Node, tag: str, **params: Any) -> Entry:
    """Entry 0 of a new backward node named after the forward node."""
    return (bw_node(op_name, inputs, node, tag, **params), 0)


def multi_bw(op_name: str, inputs: list, node: Node, tag: str, n: int,
             **params: Any) -> list[Entry]:
    """Entries 0..n-1 of one new multi-output backward node."""
    b = bw_node(op_name, inputs, node, tag, **params)
    return [(b, i) for i in range(n)]


def kept(node: Node) -> dict:
    """The forward node's params as keyword arguments for its backward node."""
    return dict(node.params)


def no_grad(node: Node, og: list) -> list:
    """No gradient flows to any input."""
    return [None] * len(node.inputs)


def identity_grad(node: Node, og: list) -> list:
    """The head gradient passes through unchanged (one input)."""
    return [og[0]]
