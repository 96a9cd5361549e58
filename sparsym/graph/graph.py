"""Graph nodes and the indexed (topologically ordered) view the passes work on."""
from __future__ import annotations

from ..ops.core.node import Node  # noqa: F401  (the graph's node type; defined with the ops)

# MXNet's hidden attribute keys: stored as ``__key__``, listed under both spellings
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
               "profiler_scope")

# bumped by every in-place mutation of nodes (attribute set, composition) so that
# graphs and signatures cached on Symbols are never stale
_epoch = [0]


def bump_epoch() -> None:
    """Invalidate every cached graph view (a node's attrs or inputs changed)."""
    _epoch[0] += 1


def current_epoch() -> int:
    """The number of node mutations so far (graph views cache against it)."""
    return _epoch[0]


def storage_key(key: str) -> str:
    """The key MXNet stores an attribute under (``lr_mult`` -> ``__lr_mult__``)."""
    return f"__{key}__" if key in HIDDEN_KEYS else key


def topo_order(heads) -> list:
    """Nodes reachable from ``heads`` in MXNet's DFS post-order (inputs before users)."""
    order = []
    seen = set()
    add = seen.add
    push = order.append
    # iterative DFS keeps deep unrolled RNNs clear of the recursion limit
    for head, _ in heads:
        if id(head) in seen:
            continue
        add(id(head))
        nodes, pos = [head], [0]
        while nodes:
            node = nodes[-1]
            ins = node.inputs
            i = pos[-1]
            n = len(ins)
            while i < n:
                child = ins[i][0]
                i += 1
                if id(child) not in seen:
                    add(id(child))
                    pos[-1] = i
                    nodes.append(child)
                    pos.append(0)
                    break
            else:
                nodes.pop()
                pos.pop()
                push(node)
    return order


class IndexedGraph:
    """Nodes in topological order; entry ids ``entry_id[(nid, idx)]`` index per-entry values."""

    __slots__ = ("nodes", "node_id", "entry_offset", "num_entries", "heads", "arg_nodes",
                 "aux_nodes", "input_nodes", "_in_eids", "_out_eids", "_signature")

    def __init__(self, heads):
        self.heads = list(heads)
        order = topo_order(self.heads)
        self.nodes = order
        node_id = self.node_id = {id(n): i for i, n in enumerate(order)}
        offs, total = [], 0
        out_eids = []
        aux_ids = set()
        for n in order:
            offs.append(total)
            k = n.nout
            out_eids.append(range(total, total + k))
            total += k
            op = n.op
            if op is not None and op.aux:
                names = op.input_names(n.params)
                aux = op.aux_names(n.params)
                for (child, _), nm in zip(n.inputs, names):
                    if nm in aux and child.op is None:
                        aux_ids.add(id(child))
        self.entry_offset = offs
        self.num_entries = total
        self.input_nodes = [n for n in order if n.op is None]
        self.arg_nodes = [n for n in self.input_nodes if id(n) not in aux_ids]
        self.aux_nodes = [n for n in self.input_nodes if id(n) in aux_ids]
        self._in_eids = [[offs[node_id[id(c)]] + i for c, i in n.inputs] for n in order]
        self._out_eids = out_eids
        self._signature = None

    def eid(self, node, index=0) -> int:
        return self.entry_offset[self.node_id[id(node)]] + index

    def in_eids(self, k):
        return self._in_eids[k]

    def out_eids(self, k):
        return self._out_eids[k]

    def head_eids(self):
        return [self.eid(n, i) for n, i in self.heads]

    def signature(self) -> tuple:
        """Structure of the graph: ops, given params, plan-relevant attrs, wiring, and the
        variable names (operator node names are left out).

        Two graphs with equal signatures bind to the same plan (the plan cache key).
        """
        if self._signature is None:
            sig = []
            app = sig.append
            for n, ins in zip(self.nodes, self._in_eids):
                if n.op is None:
                    a = n.attr
                    app((n.name, a.get("__shape__"), a.get("__dtype__"),
                         a.get("__storage_type__"), a.get("__ctx_group__")))
                else:
                    # op names are cosmetic (generated names differ between two builds of
                    # one model); executors rename steps from their own symbol
                    g = n.given
                    app((n.op.name, tuple(ins),
                         tuple(sorted(g.items())) if len(g) > 1 else tuple(g.items()),
                         n.attr.get("__ctx_group__")))
            app(tuple(self.head_eids()))
            self._signature = tuple(sig)
        return self._signature


def node_lines(n: Node, rename=None) -> list[str]:
    """One node in MXNet's debug_str layout (``rename`` maps node names for display)."""
    nm = rename or (lambda x: x)
    if n.op is None:
        return [f"Variable:{n.name}"]
    out = ["-" * 20, f"Op:{n.op.name}, Name={nm(n.name)}", "Inputs:"]
    for i, (c, j) in enumerate(n.inputs):
        out.append(f"\targ[{i}]={nm(c.name)}({j})" + (" version=0" if c.op is None else ""))
    attrs = n.all_attrs()
    if attrs:
        out.append("Attrs:")
        out += [f"\t{k}={attrs[k]}" for k in sorted(attrs)]
    return out


def entry_name(entry: tuple) -> str:
    """MXNet's name of a graph entry: a variable's name, or ``<node>_<output name>``."""
    node, idx = entry
    if node.op is None:
        return node.name
    return f"{node.name}_{node.op.out_names(node.params)[idx]}"
