"""The graph IR shared by symbol, autograd, the passes and the executor: nodes (defined
with the ops, ``ops/core/node.py``), MXNet's hidden attribute keys, topological order and the
indexed view the passes work on (``graph.py``)."""
from .graph import (  # noqa: F401
    HIDDEN_KEYS,
    IndexedGraph,
    Node,
    bump_epoch,
    current_epoch,
    entry_name,
    node_lines,
    storage_key,
    topo_order,
)
