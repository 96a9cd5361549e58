"""MXNet 1.x symbol JSON: writing (MXNet 1.9.1 loads it) and reading (MXNet's files load)."""
from __future__ import annotations

import json

from ..base import FormatError, MXNetError
from ..graph import IndexedGraph, Node, storage_key
from .arith import SymbolOps

__all__ = ["to_json", "to_json_dict", "load_heads"]

MXNET_VERSION = 10901


def _subgraph_keys(node):
    """The parameters of ``node`` holding subgraphs (control-flow ops), in JSON order."""
    return getattr(node.op.params, "subgraphs", ()) if node.op is not None else ()


def _nodes_doc(order, heads):
    """nodes / arg_nodes / node_row_ptr / heads of a graph whose nodes are ``order``."""
    index = {id(n): k for k, n in enumerate(order)}
    nodes, offsets, total = [], [], 0
    for n in order:
        entry = {"op": "null" if n.op is None else n.op.name, "name": n.name}
        subs = _subgraph_keys(n)
        attrs = {k: v for k, v in n.all_attrs().items() if k not in subs}
        if attrs:
            entry["attrs"] = {k: str(v) for k, v in attrs.items()}
        entry["inputs"] = [[index[id(c)], i, 0] for c, i in n.inputs]
        if subs:
            entry["subgraphs"] = [_subgraph_doc(n.params[k]) for k in subs]
        nodes.append(entry)
        offsets.append(total)
        total += n.num_outputs()
    return {"nodes": nodes,
            "arg_nodes": [k for k, n in enumerate(order) if n.op is None],
            "node_row_ptr": offsets + [total],
            "heads": [[index[id(n)], i, 0] for n, i in heads]}


def _subgraph_doc(sub):
    """A control-flow body: its input variables first, in the order of the node's inputs
    (the node's locs parameters count in that order), then its operator nodes."""
    g = IndexedGraph(sub.heads)
    seen = {id(n) for n in sub.inputs}
    order = list(sub.inputs) + [n for n in g.nodes if n.op is None and id(n) not in seen] + \
        [n for n in g.nodes if n.op is not None]
    return _nodes_doc(order, sub.heads)


def to_json_dict(sym: SymbolOps) -> dict:
    """The JSON document of ``sym`` as a dict (nodes in MXNet's DFS order)."""
    doc = _nodes_doc(sym._graph().nodes, sym._outputs)
    doc["attrs"] = _graph_attrs()
    return doc


def _graph_attrs():
    """The document's graph attributes: MXNet's version, and ``is_np_shape`` when written
    under NumPy-shape semantics (its readers then take 0 dims as real sizes)."""
    from ..util import is_np_shape
    attrs = {"mxnet_version": ["int", MXNET_VERSION]}
    if is_np_shape():
        attrs["is_np_shape"] = ["int", 1]
    return attrs


def _legacy_shape(raw):
    """A legacy ``__shape__`` string with its unknown 0 dims written as -1 (NumPy shapes)."""
    from ..base import parse_attr
    s = parse_attr(raw)
    if not isinstance(s, tuple):
        return raw
    return str(tuple(-1 if d == 0 else d for d in s))


def to_json(sym: SymbolOps) -> str:
    return json.dumps(to_json_dict(sym), indent=2)


def _entry(raw, k, built, where):
    if not isinstance(raw, (list, tuple)) or len(raw) < 2:
        raise FormatError(f"load_json: {where}: an entry must be [node, index(, version)], "
                          f"got {raw!r}")
    nid, idx = int(raw[0]), int(raw[1])
    if not 0 <= nid < k:
        raise FormatError(f"load_json: {where} refers to node {nid}, which is not an earlier "
                          f"node (0..{k - 1})")
    node = built[nid]
    if not 0 <= idx < node.num_outputs():
        raise FormatError(f"load_json: {where} uses output {idx} of node {node.name!r}, which "
                          f"has {node.num_outputs()} outputs")
    return node, idx


def load_heads(json_str: str) -> list:
    """The head entries of the graph in MXNet JSON (1.x ``attrs``, and the legacy
    ``attr``/``param``); ``Symbol(heads)`` is the symbol (symbol.load_json)."""
    try:
        d = json.loads(json_str)
        d["nodes"], d["heads"]
    except (ValueError, KeyError, TypeError) as err:
        raise FormatError(f"load_json: not an MXNet symbol JSON document ({err})") from None
    except RecursionError:   # json's decoder recurses per bracket
        raise FormatError("load_json: not an MXNet symbol JSON document (nested too deeply "
                          "to be a symbol graph)") from None
    from ..util import is_np_shape
    # a document written without NumPy shapes, read with them on: its 0 dims mean unknown
    upgrade = is_np_shape() and not _graph_flag(d, "is_np_shape")
    out, _ = _load_graph(d, upgrade, "")
    if not out:
        raise FormatError("load_json: the document has no heads")
    return out


def _load_graph(d, upgrade, where):
    """(head entries, variables in ``arg_nodes`` order) of a (sub)graph document."""
    from ..ops.core.registry import get_op, has_op
    try:
        raw_nodes, heads = d["nodes"], d["heads"]
    except (KeyError, TypeError) as err:
        raise FormatError(f"load_json: {where}not a graph document ({err})") from None
    for key, v in (("nodes", raw_nodes), ("heads", heads)):
        if not isinstance(v, list):
            raise FormatError(f"load_json: {where}'{key}' must be a list, got "
                              f"{type(v).__name__}")
    built = []
    for k, rn in enumerate(raw_nodes):
        if not isinstance(rn, dict) or "op" not in rn or "name" not in rn:
            raise FormatError(f"load_json: {where}node {k} must have 'op' and 'name', got "
                              f"{rn!r}")
        attrs = {}
        for key in ("param", "attr", "attrs"):
            for a, v in (rn.get(key) or {}).items():
                attrs[storage_key(a)] = str(v)
        name = rn["name"]
        inputs = [_entry(e, k, built, f"{where}input {j} of node {k} ({name!r})")
                  for j, e in enumerate(rn.get("inputs", []))]
        if rn["op"] == "null":
            if upgrade and "__shape__" in attrs:
                attrs["__shape__"] = _legacy_shape(attrs["__shape__"])
            built.append(Node(None, name, None, attrs, inputs))
            continue
        if not has_op(rn["op"]):
            raise FormatError(f"load_json: node {name!r} uses operator {rn['op']!r}, which "
                              "sparsym does not implement")
        op = get_op(rn["op"])
        given = {a: v for a, v in attrs.items() if op.params.accepts(a)}
        rest = {a: v for a, v in attrs.items() if not op.params.accepts(a)}
        try:
            if hasattr(op.params, "attach"):  # control flow: the node carries subgraphs
                graphs = [_load_graph(sd, upgrade, f"{where}subgraph {j} of node {name!r}: ")
                          for j, sd in enumerate(rn.get("subgraphs") or [])]
                params, order, given = op.params.attach(op.name, name, given, graphs)
                if len(order) == len(inputs):
                    inputs = [inputs[p] for p in order]
            else:
                params = op.params.parse(op.name, given)
        except MXNetError as err:
            raise type(err)(f"load_json: node {name!r} ({op.name}): {err}") from None
        node = Node(op, name, params, rest, inputs, given)
        n_in = len(op.input_names(params))
        if n_in != len(inputs):
            raise FormatError(f"load_json: node {name!r} ({op.name}) has {len(inputs)} inputs, "
                              f"the operator takes {n_in}")
        built.append(node)
    out = [_entry(h, len(built), built, f"{where}head {j}") for j, h in enumerate(heads)]
    args = d.get("arg_nodes")
    if args is None:
        variables = [n for n in built if n.op is None]
    else:
        variables = [_entry([k, 0], len(built), built, f"{where}arg_nodes")[0] for k in args]
    return out, variables


def _graph_flag(doc, key):
    """An ``["int", v]`` graph attribute of a JSON document as bool."""
    v = (doc.get("attrs") or {}).get(key)
    try:
        return bool(int(v[1] if isinstance(v, (list, tuple)) else v))
    except (TypeError, ValueError, IndexError):
        return False
