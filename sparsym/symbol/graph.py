"""Graph nodes and the indexed (topologically ordered) view the passes work on."""
from __future__ import annotations

from ..ops.params import Attrs


class Node:
    """An operator application or a variable (``op is None``).

    ``params``: typed op parameters; ``attr``: user/dunder string attributes
    (``__shape__``, ``__storage_type__``, ``ctx_group``, ``lr_mult``...);
    ``inputs``: list of (Node, output index) entries.
    """

    __slots__ = ("op", "name", "params", "attr", "inputs", "__weakref__")

    def __init__(self, op, name, params=None, attr=None, inputs=()):
        self.op = op
        self.name = name
        self.params = params if params is not None else Attrs()
        self.attr = dict(attr or {})
        self.inputs = list(inputs)

    @property
    def is_variable(self) -> bool:
        return self.op is None

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.n_outputs(self.params)

    def __repr__(self):
        return f"Node({self.op.name if self.op else 'var'}, {self.name!r})"


class IndexedGraph:
    """Nodes in topological order; entry ids ``entry_id[(nid, idx)]`` index per-entry values."""

    __slots__ = ("nodes", "node_id", "entry_offset", "num_entries", "heads", "arg_nodes",
                 "aux_nodes", "input_nodes", "_in_eids", "_out_eids")

    def __init__(self, heads):
        self.heads = list(heads)
        order, seen = [], set()
        # iterative DFS keeps deep unrolled RNNs clear of the recursion limit
        for head, _ in self.heads:
            if id(head) in seen:
                continue
            stack = [(head, 0)]
            while stack:
                node, i = stack.pop()
                if i == 0 and id(node) in seen:
                    continue
                if i < len(node.inputs):
                    stack.append((node, i + 1))
                    child = node.inputs[i][0]
                    if id(child) not in seen:
                        stack.append((child, 0))
                else:
                    seen.add(id(node))
                    order.append(node)
        self.nodes = order
        self.node_id = {id(n): i for i, n in enumerate(order)}
        offs, total = [], 0
        for n in order:
            offs.append(total)
            total += n.num_outputs()
        self.entry_offset = offs
        self.num_entries = total
        aux_ids = set()
        for n in order:
            if n.op is not None and n.op.aux:
                names = n.op.input_names(n.params)
                for (child, _), nm in zip(n.inputs, names):
                    if nm in n.op.aux and child.op is None:
                        aux_ids.add(id(child))
        self.input_nodes = [n for n in order if n.op is None]
        self.arg_nodes = [n for n in self.input_nodes if id(n) not in aux_ids]
        self.aux_nodes = [n for n in self.input_nodes if id(n) in aux_ids]
        self._in_eids = [[self.eid(c, i) for c, i in n.inputs] for n in order]
        self._out_eids = [list(range(offs[k], offs[k] + n.num_outputs()))
                          for k, n in enumerate(order)]

    def eid(self, node, index=0) -> int:
        return self.entry_offset[self.node_id[id(node)]] + index

    def in_eids(self, k):
        return self._in_eids[k]

    def out_eids(self, k):
        return self._out_eids[k]

    def head_eids(self):
        return [self.eid(n, i) for n, i in self.heads]
