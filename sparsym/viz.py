"""Visualise a symbol (mx.viz): a graphviz drawing coloured by storage type, and a summary table.

MXNet 1.x draws the graph and prints layer shapes; sparsym adds what MXNet cannot show:
each node is filled with the colour of its output storage type and nodes that run through
the dense *fallback* are outlined in red, so the point where sparsity is lost is visible.
"""
from __future__ import annotations

import numpy as np

from .base import MXNetError
from .ops.core import rules
from .storage import check_stype

__all__ = ["plot_network", "print_summary", "STYPE_COLORS", "FALLBACK_COLOR"]

#: Fill colour of a node by its (first) output storage type.
STYPE_COLORS = {"default": "#d9d9d9", "csr": "#fdb462", "row_sparse": "#80b1d3"}
#: Outline colour of nodes dispatched to the dense fallback.
FALLBACK_COLOR = "#e31a1c"

# MXNet's hide_weights rule: parameters recognised by these name suffixes are not drawn
_PARAM_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                   "_running_var", "_running_mean")
# params worth showing in a node's label (MXNet's plot shows a few per op type)
_LABEL_PARAMS = ("num_hidden", "act_type", "kernel", "stride", "num_filter", "pool_type",
                 "output_dim", "axis", "transpose_a", "transpose_b", "forward_stype")


# ---------------------------------------------------------------------- graph annotation
class _Annotated:
    """Per-entry shapes/stypes and per-node dispatch modes of one forward graph."""

    def __init__(self, graph, shapes, stypes, modes):
        self.graph = graph
        self.shapes = shapes      # eid -> tuple or None
        self.stypes = stypes      # eid -> stype
        self.modes = modes        # node index -> 'dense' | 'sparse' | 'fallback' | None (vars)


def _check_names(graph, given, what):
    names = {n.name for n in graph.input_nodes}
    for k in given:
        if k not in names:
            raise MXNetError(f"viz: {what} names {k!r}, which is not an input of the symbol; "
                             f"inputs are {sorted(names)}")


def _annotate(symbol, shape=None, dtype=None, stype=None, executor=None) -> _Annotated:
    """Infer shapes and storage (or read them from a bound executor's plan)."""
    from .passes.infer_shape import infer_shape
    from .passes.infer_storage import infer_storage

    graph = symbol._graph()
    if executor is not None:
        group = getattr(executor, "_exec_group", None)      # a bound Module
        if not hasattr(executor, "plan") and group is not None and group.execs:
            executor = group.execs[0]
        if not hasattr(executor, "plan"):
            raise TypeError(f"viz: executor must be a bound Executor or Module, got "
                            f"{type(executor).__name__}")
        return _annotate_from_plan(graph, executor.plan)
    shape, stype = dict(shape or {}), dict(stype or {})
    _check_names(graph, shape, "shape")
    _check_names(graph, stype, "stype")
    by_name = {n.name: n for n in graph.input_nodes}
    known_shapes = {graph.eid(by_name[k]): tuple(int(d) for d in v) for k, v in shape.items()}
    shapes = infer_shape(graph, known_shapes)
    known_st = {graph.eid(by_name[k]): check_stype(v, f"viz: stype of {k}: ")
                for k, v in stype.items()}
    stypes, choice = infer_storage(graph, known_st, report=False)
    modes = [None if c is None else c[1] for c in choice]
    return _Annotated(graph, list(shapes), list(stypes), modes)


def _annotate_from_plan(graph, plan) -> _Annotated:
    """Take stypes and modes from the executor's frozen plan (what actually runs)."""
    pg = plan.graph
    p_nodes = {n.name: n for n in pg.nodes}
    step_mode = {s.name: s.mode for s in plan.forward_steps}
    shapes = [None] * graph.num_entries
    stypes = ["default"] * graph.num_entries
    modes = [None] * len(graph.nodes)
    for k, n in enumerate(graph.nodes):
        pn = p_nodes.get(n.name)
        if pn is None and k < len(pg.nodes) and pg.nodes[k].op is n.op:
            pn = pg.nodes[k]  # cached plan of a same-structure symbol (other generated names)
        if pn is None:
            raise MXNetError(f"viz: node {n.name!r} is not part of the executor's plan; pass "
                             "the symbol the executor was bound from")
        for i, e in enumerate(graph.out_eids(k)):
            pe = pg.eid(pn, i)
            shapes[e], stypes[e] = plan.shapes[pe], plan.stypes[pe]
        if n.op is not None:
            modes[k] = step_mode.get(pn.name)
    return _Annotated(graph, shapes, stypes, modes)


def _is_hidden_param(node, stype):
    # sparse parameters stay visible: their storage is the point of the drawing
    return node.op is None and node.name.endswith(_PARAM_SUFFIXES) and stype == "default"


def _fmt_dims(shape):
    if shape is None:
        return ""
    return "x".join("?" if d is None else str(d) for d in shape)


def _node_label(node):
    if node.op is None:
        return node.name
    lines = [node.op.name, node.name]
    strs = node.params.to_strings() if node.params else {}
    fields = node.op.params.fields
    # only parameters set away from their default say something about this node
    extra = [f"{k}={strs[k]}" for k in _LABEL_PARAMS
             if k in strs and (k not in fields or node.params[k] != fields[k].default)]
    if extra:
        lines.append(", ".join(extra))
    return "\n".join(lines)


# ---------------------------------------------------------------------- plot_network
def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None, node_attrs=None,
                 hide_weights=True, stype=None, executor=None, legend=True):
    """Draw ``symbol`` as a graphviz graph, coloured by storage type when anything is sparse.

    A graph whose every entry is dense (and no ``stype`` or ``executor`` given) is drawn as
    MXNet 1.x draws it: nodes named after the symbol's nodes and filled by op kind, edges
    from each operator back to its inputs, labelled with shapes (and dtypes). Otherwise:

    Every node is filled with the colour of its output storage type (``STYPE_COLORS``:
    grey ``default``, orange ``csr``, blue ``row_sparse``). Operators that run through the
    dense fallback get a thick red outline (``FALLBACK_COLOR``), a ``[fallback]`` line in
    their label and a tooltip naming the input storage types; these are the nodes where
    sparsity is lost. Edges are labelled with the shape (when known) and the stype of the
    entry when it is not ``default``.

    Parameters
    ----------
    symbol : Symbol
        The graph to draw.
    title : str
        Name of the graphviz graph (and default file name when rendering).
    save_format : str
        Output format used by ``Digraph.render`` (``pdf``, ``png``, ``svg``...).
    shape : dict of str -> tuple, optional
        Input shapes, as for ``simple_bind``; used to label edges.
    dtype : dict, optional
        Accepted for MXNet compatibility; dtypes are not drawn.
    node_attrs : dict, optional
        Extra graphviz attributes for every node (e.g. ``{"fontsize": "10"}``).
    hide_weights : bool
        Hide dense parameters (names ending in ``_weight``, ``_bias``...), as MXNet does.
        Sparse parameters are always drawn.
    stype : dict of str -> str, optional
        Input storage types (as ``stype_dict`` in ``simple_bind``); variables' own
        ``stype=`` attributes are used otherwise.
    executor : Executor or Module, optional
        A bound executor of ``symbol`` (or a bound Module, whose first executor is used);
        its plan's shapes, stypes and dispatch modes are drawn (exactly what runs)
        instead of inferring them again.
    legend : bool
        Add a small legend cluster mapping colours to storage types.

    Returns
    -------
    graphviz.Digraph
        Call ``.render()``/``.pipe()`` (needs the graphviz ``dot`` binary) or read
        ``.source``.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.sym.Variable('x', stype='csr')
    >>> w = mx.sym.Variable('w', stype='row_sparse')
    >>> g = mx.viz.plot_network(mx.sym.dot(x, w, name='dot'), shape={'x': (4, 10), 'w': (10, 2)})
    >>> 'dot' in g.source and mx.viz.STYPE_COLORS['csr'] in g.source
    True
    """
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("mx.viz.plot_network needs the graphviz Python package: "
                          "pip install graphviz (and the graphviz 'dot' binary to render, "
                          "e.g. apt-get install graphviz)") from None
    from .symbol.symbol import Symbol
    if not isinstance(symbol, Symbol):
        raise TypeError(f"plot_network: symbol must be a Symbol, got {type(symbol).__name__}")
    ann = _annotate(symbol, shape, dtype, stype, executor)
    if stype is None and executor is None and all(st in (None, "default") for st in ann.stypes):
        # nothing sparse to show: MXNet's own drawing, so dense scripts see what MXNet draws
        return _plot_mxnet_layout(Digraph, symbol, title, save_format, shape, dtype,
                                  node_attrs, hide_weights)
    g = ann.graph
    dot = Digraph(name=title, format=save_format)
    dot.attr(rankdir="BT")
    base = {"shape": "box", "fixedsize": "false", "style": "filled", "fontname": "Helvetica"}
    base.update(node_attrs or {})
    hidden = set()
    for k, node in enumerate(g.nodes):
        out_st = ann.stypes[g.out_eids(k)[0]]
        if _is_hidden_param(node, out_st) and hide_weights:
            hidden.add(k)
            continue
        attrs = dict(base)
        attrs["fillcolor"] = STYPE_COLORS.get(out_st, "#ffffff")
        label = _node_label(node)
        if node.op is None:
            attrs["shape"] = "oval"
            label += f"\n{out_st}"
        mode = ann.modes[k]
        if mode == "fallback":
            ins = [ann.stypes[e] for e in g.in_eids(k)]
            attrs.update(color=FALLBACK_COLOR, penwidth="3", style="filled,bold",
                         tooltip=f"dense fallback: {node.op.name} has no kernel for input "
                                 f"storage types {ins}")
            label += "\n[fallback]"
        elif mode is not None:
            attrs["tooltip"] = f"{mode} dispatch"
        dot.node(name=f"n{k}", label=label, **attrs)
    for k, node in enumerate(g.nodes):
        if node.op is None or k in hidden:
            continue
        for e, (child, _idx) in zip(g.in_eids(k), node.inputs):
            ck = g.node_id[id(child)]
            if ck in hidden:
                continue
            parts = [_fmt_dims(ann.shapes[e])]
            if ann.stypes[e] != "default":
                parts.append(ann.stypes[e])
            lab = "\n".join(p for p in parts if p)
            dot.edge(f"n{ck}", f"n{k}", label=lab) if lab else dot.edge(f"n{ck}", f"n{k}")
    if legend:
        with dot.subgraph(name="cluster_legend") as lg:
            lg.attr(label="storage type", fontname="Helvetica")
            for st, colour in STYPE_COLORS.items():
                lg.node(f"legend_{st}", label=st, shape="box", style="filled",
                        fillcolor=colour, fontname="Helvetica")
            lg.node("legend_fallback", label="fallback", shape="box", style="filled,bold",
                    fillcolor="#ffffff", color=FALLBACK_COLOR, penwidth="3",
                    fontname="Helvetica")
    return dot


# MXNet's node fill colours, by op kind (plot_network of MXNet 1.x)
_MX_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
              "#fccde5")


def _mx_label_and_color(node):
    """MXNet's label and fill colour of one JSON node."""
    op, attrs = node["op"], node.get("attrs", {})

    def dims(key, default):
        return "x".join(str(d) for d in _attr_tuple(attrs[key])) if key in attrs else default

    if op == "null":
        return node["name"], _MX_COLORS[0]
    if op == "Convolution":
        return (f"Convolution\n{dims('kernel', '')}/{dims('stride', '1')}, "
                f"{attrs['num_filter']}"), _MX_COLORS[1]
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs['num_hidden']}", _MX_COLORS[1]
    if op == "BatchNorm":
        return node["name"], _MX_COLORS[3]
    if op == "Activation":
        return f"Activation\n{attrs['act_type']}", _MX_COLORS[2]
    if op == "LeakyReLU":
        return f"LeakyReLU\n{attrs.get('act_type', 'Leaky')}", _MX_COLORS[2]
    if op == "Pooling":
        return (f"Pooling\n{attrs['pool_type']}, {dims('kernel', '[]')}/"
                f"{dims('stride', '1')}"), _MX_COLORS[4]
    if op in ("Concat", "Flatten", "Reshape"):
        return node["name"], _MX_COLORS[5]
    if op == "Softmax":
        return node["name"], _MX_COLORS[6]
    return (attrs["op_type"] if op == "Custom" else node["name"]), _MX_COLORS[7]


def _attr_tuple(text):
    return tuple(int(d) for d in text.strip("()[] ").replace(" ", "").split(",") if d)


def _plot_mxnet_layout(Digraph, symbol, title, save_format, shape, dtype, node_attrs,
                       hide_weights):
    """The graph as MXNet 1.x's plot_network draws it: nodes named after the symbol's
    nodes, coloured by op kind, edges from each op back to its inputs labelled with the
    input's shape without the batch axis (and dtype when ``dtype`` is given)."""
    import json
    internals = symbol.get_internals()
    shape_of = type_of = None
    if shape is not None:
        _, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError("Input shape is incomplete")
        shape_of = dict(zip(internals.list_outputs(), out_shapes))
    if dtype is not None:
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError("Input type is incomplete")
        type_of = dict(zip(internals.list_outputs(), out_types))
    nodes = json.loads(symbol.tojson())["nodes"]
    attrs = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
             "style": "filled"}
    attrs.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        if node["op"] == "null" and node["name"].endswith(_PARAM_SUFFIXES):
            # MXNet never draws parameter nodes; with hide_weights their edges go too
            if hide_weights:
                hidden.add(node["name"])
            continue
        label, color = _mx_label_and_color(node)
        node_attr = dict(attrs, fillcolor=color)
        if node["op"] == "null":
            node_attr["shape"] = "oval"
        dot.node(name=node["name"], label=label, **node_attr)
    for node in nodes:
        if node["op"] == "null":
            continue
        for item in node["inputs"]:
            src = nodes[item[0]]
            if src["name"] in hidden:
                continue
            key = src["name"]
            if src["op"] != "null":
                n_out = int(src.get("attrs", {}).get("num_outputs", 1))
                key += "_output" + (str(n_out - 1) if "num_outputs" in src.get("attrs", {})
                                    else "")
            edge = {"dir": "back", "arrowtail": "open", "label": ""}
            if shape_of is not None:
                edge["label"] = "x".join(str(d) for d in shape_of[key][1:])
            if type_of is not None:
                edge["label"] += f"({type_of[key].__name__})"
            dot.edge(tail_name=node["name"], head_name=src["name"], **edge)
    return dot


# ---------------------------------------------------------------------- print_summary
def _param_inputs(graph, k, data_names):
    """Variable inputs of node ``k`` that are parameters (not data, labels or aux states)."""
    node = graph.nodes[k]
    names = node.op.input_names(node.params)
    aux_ids = {id(n) for n in graph.aux_nodes}
    out = []
    for (child, _), slot in zip(node.inputs, list(names) + [None] * len(node.inputs)):
        if child.op is not None or child.name in data_names:
            continue
        if slot == "label" or child.name.endswith("label"):
            continue
        out.append((child, id(child) in aux_ids))
    return out


def print_summary(symbol, shape=None, line_length=120, positions=None, stype=None):
    """Print a table of layers: name (op), output shape, storage type, parameters, inputs.

    Parameters are the variable inputs of each operator that are not data (``shape`` keys),
    labels or auxiliary states (BatchNorm's moving statistics, which MXNet does not count
    either); each is counted once, by the first operator using it.

    Parameters
    ----------
    symbol : Symbol
    shape : dict of str -> tuple, optional
        Input shapes (``data`` and friends); without them shapes and counts stay empty.
    line_length : int
        Total width of the table.
    positions : sequence of float, optional
        Right edge of each column, as fractions of ``line_length``. Four edges give MXNet's
        layout; five add a Storage column after Output Shape. By default MXNet's layout
        (``[.44, .64, .74, 1.]``) is used when every output is dense, and
        ``[.36, .54, .66, .76, 1.]`` (with Storage) when any is sparse.
    stype : dict of str -> str, optional
        Input storage types, as in :func:`plot_network`.

    Examples
    --------
    >>> import sparsym as mx
    >>> fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    >>> mx.viz.print_summary(fc, shape={'data': (2, 4)})  # doctest: +ELLIPSIS
    ______...
    Layer (type)...Output Shape...Param #...Previous Layer...
    ...
    fc(FullyConnected)...3...15...data...
    ...
    Total params: 15
    ...
    """
    from .symbol.symbol import Symbol
    if not isinstance(symbol, Symbol):
        raise TypeError(f"print_summary: symbol must be a Symbol, got {type(symbol).__name__}")
    ann = _annotate(symbol, shape, None, stype)
    g = ann.graph
    if positions is None:
        sparse = any(st not in (None, "default") for st in ann.stypes)
        positions = (.36, .54, .66, .76, 1.) if sparse else (.44, .64, .74, 1.)
    if len(positions) not in (4, 5):
        raise ValueError(f"print_summary: positions needs 5 column edges (4 for MXNet's "
                         f"layout without the Storage column), got {len(positions)}")
    with_storage = len(positions) == 5
    data_names = set(shape or {})
    cols = [int(line_length * p) if p <= 1 else int(p) for p in positions]

    def row(fields):
        if not with_storage:
            fields = fields[:2] + fields[3:]
        line = ""
        for f, edge in zip(fields, cols):
            # MXNet's rows: each field cut at its column's edge, then padded up to it
            line = (line + str(f))[:edge]
            line += " " * (edge - len(line))
        print(line)

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Storage", "Param #", "Previous Layer"])
    print("=" * line_length)
    counted, total = set(), 0
    # MXNet lists the operators and, of the variables, only the graph's first node; an input
    # variable counts as a previous layer when its node id is in MXNet's set of the first
    # head's (node id, output index, version) -- in practice the first node
    hn, hi = g.heads[0]
    head_ids = {g.node_id[id(hn)], hi, 0}
    shown = [k for k, n in enumerate(g.nodes) if n.op is not None or k == 0]
    for j, k in enumerate(shown):
        node = g.nodes[k]
        e = g.out_eids(k)[0]
        shp = ann.shapes[e]
        # MXNet prints shapes without the batch axis
        out_shape = _fmt_dims(shp[1:]) if shp is not None and len(shp) > 1 else _fmt_dims(shp)
        n_params = 0
        prev = []
        if node.op is not None:
            for child, is_aux in _param_inputs(g, k, data_names):
                if id(child) in counted:
                    continue
                counted.add(id(child))
                cs = ann.shapes[g.eid(child)]
                if not is_aux and rules.known(cs):
                    n_params += int(np.prod(cs, dtype=np.int64))
                elif not is_aux and child.name.endswith("_bias") and \
                        node.op.name in ("FullyConnected", "Convolution"):
                    # unshaped: MXNet's count still has the bias (num_hidden / num_filter)
                    n_params += int(node.params.get("num_hidden", None)
                                    or node.params.get("num_filter", 0))
            prev = [c.name for c, _ in node.inputs
                    if c.op is not None or g.node_id[id(c)] in head_ids]
        total += n_params
        label = f"{node.name}({node.op.name if node.op else 'null'})"
        row([label, out_shape, ann.stypes[e], n_params, prev[0] if prev else ""])
        for p in prev[1:]:
            row(["", "", "", "", p])
        print(("=" if j == len(shown) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)
