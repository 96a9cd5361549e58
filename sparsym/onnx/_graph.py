"""Symbol -> ONNX graph: reads the graph through ``Symbol.tojson()`` and infer_shape/type,
folds parameter-only subgraphs into initializers and hands each operator node to its
translation (``_tables.TRANSLATIONS``)."""
from __future__ import annotations

import json
import logging

import numpy as np

from ..base import UnsupportedFeatureError, parse_attr
from ._tables import TRANSLATIONS

OPSET = 17
# loss heads: at inference they pass their data on; their label inputs are not graph inputs
LOSS_LABEL = {"SoftmaxOutput": 1, "LinearRegressionOutput": 1, "LogisticRegressionOutput": 1,
              "MAERegressionOutput": 1, "SVMOutput": 1, "Softmax": 1}
# operators never folded into constants: they draw random numbers
_RANDOM = ("_random", "_sample", "random_", "_npi_random")


def require_onnx():
    """The onnx package, or ImportError saying how to get it."""
    try:
        import onnx
    except ImportError as err:
        raise ImportError("ONNX export/import needs the onnx package: pip install onnx "
                          "(or pip install sparsym[onnx])") from err
    return onnx


def translations():
    """MXNet operator name -> its ONNX translation (every translation module loaded)."""
    from . import _translations, _translations_rnn, _translations_tensor  # noqa: F401
    return TRANSLATIONS


def attrs_of(node):
    """A node's attributes as Python values (MXNet's strings parsed), hidden ones dropped."""
    return {k: parse_attr(v) for k, v in (node.get("attrs") or {}).items()
            if not k.startswith("__")}


class Converter:
    """The state of one export: ONNX nodes so far, constants, shapes and dtypes per entry."""

    def __init__(self, onnx, nodes, shapes, dtypes, consts, names):
        self.onnx, self.helper = onnx, onnx.helper
        self.json_nodes = nodes
        self.shapes, self.dtypes = shapes, dtypes   # (nid, idx) -> tuple / np.dtype
        self.consts = consts                         # tensor name -> np.ndarray
        self.names = names                           # (nid, idx) -> tensor name
        self.nodes, self.used, self.taken = [], set(), set(names.values()) | set(consts)
        self.node_names = set()
        self.opset = OPSET
        self.dynamic = False
        self.nid = None                              # the JSON node being translated

    # ------------------------------------------------------------------ entries
    def name(self, entry):
        """The tensor name of an input entry ``[nid, idx, ver]`` (marks constants used)."""
        n = self.names[(entry[0], entry[1])]
        if n in self.consts:
            self.used.add(n)
        return n

    def value(self, entry):
        """The constant value of an entry, or None when it depends on graph inputs."""
        return self.consts.get(self.names[(entry[0], entry[1])])

    def shape(self, entry):
        return self.shapes[(entry[0], entry[1])]

    def dtype(self, entry):
        return self.dtypes[(entry[0], entry[1])]

    def source_op(self, entry):
        return self.json_nodes[entry[0]]["op"]

    # ------------------------------------------------------------------ building
    def unique(self, hint):
        name, i = hint, 0
        while name in self.taken:
            i += 1
            name = f"{hint}_{i}"
        self.taken.add(name)
        return name

    def const(self, value, hint, dtype=None):
        """A new initializer holding ``value``; returns its name."""
        name = self.unique(hint)
        self.consts[name] = np.asarray(value, dtype=dtype)
        self.used.add(name)
        return name

    def ints(self, values, hint):
        return self.const(np.asarray(values, dtype=np.int64), hint)

    def add(self, op_type, inputs, outputs=None, name=None, **attrs):
        """Append one ONNX node; returns its output names (fresh ones when not given)."""
        base = name or (outputs[0] if outputs else op_type.lower())
        node_name, i = base if name else f"{base}__{op_type}", 0
        while node_name in self.node_names:
            i += 1
            node_name = f"{base}__{op_type}_{i}"
        self.node_names.add(node_name)
        if outputs is None:
            outputs = [self.unique(f"{base}__{op_type.lower()}")]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), list(outputs),
                                                name=node_name, **attrs))
        return outputs

    def tensor_type(self, dtype):
        return self.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _load_params(params):
    """{name: NDArray} from a dict, an [arg, aux] pair or a .params file ('arg:'/'aux:'
    prefixes dropped)."""
    from .. import ndarray as nd
    if isinstance(params, str):
        params = nd.load(params)
    if isinstance(params, (list, tuple)):
        if len(params) != 2 or not all(isinstance(p, dict) for p in params):
            raise ValueError("params: expected a dict, [arg_params, aux_params] or a file path")
        merged = dict(params[0])
        merged.update(params[1])
        params = merged
    if not isinstance(params, dict):
        raise ValueError("Input sym and params should either be files or objects")
    out = {}
    for k, v in params.items():
        key = k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k
        out[key] = v if isinstance(v, np.ndarray) else v.asnumpy()
    return out


def _entry_names(sym, nodes):
    """(nid, idx) -> the internal output's name (``Symbol.get_internals()`` order: a
    node's visible outputs follow each other, named ``<name>_output``, ``<name>_output<i>``,
    or the RNN and BatchNorm extras)."""
    outs = sym.get_internals().list_outputs()
    table, k = {}, 0
    for nid, node in enumerate(nodes):
        if node["op"] == "null":
            table[(nid, 0)] = outs[k]
            k += 1
            continue
        name = node["name"]
        extras = {f"{name}_{s}" for s in ("state_output", "statecell_output", "mean", "var")}
        idx = 0
        while k < len(outs) and (outs[k].startswith(name + "_") if idx == 0 else
                                 outs[k] == f"{name}_output{idx}" or outs[k] in extras):
            table[(nid, idx)] = outs[k]
            k += 1
            idx += 1
    return table


def build_graph(sym, params, in_shapes, in_types, dynamic, dynamic_input_shapes, verbose):
    """The ONNX ModelProto of ``sym`` with ``params`` (see :func:`export_model`)."""
    onnx = require_onnx()
    from .. import symbol as _sym
    TRANSLATIONS = translations()
    if isinstance(sym, str):
        sym = _sym.load(sym)
    if not isinstance(sym, _sym.Symbol):
        raise ValueError("Input sym and params should either be files or objects")
    params = _load_params(params)
    graph = json.loads(sym.tojson())
    nodes = graph["nodes"]

    # graph inputs: variables without a value that are not the label of a loss head
    labels = set()
    for node in nodes:
        pos = LOSS_LABEL.get(node["op"])
        if pos is not None and len(node["inputs"]) > pos:
            src = nodes[node["inputs"][pos][0]]
            if src["op"] == "null":
                labels.add(src["name"])
    data_names = [n for n in sym.list_inputs() if n not in params and n not in labels]
    in_shapes = [tuple(s) for s in (in_shapes or [])]
    if len(in_shapes) != len(data_names):
        raise ValueError(f"export_model: in_shapes has {len(in_shapes)} shape(s) for the "
                         f"graph's {len(data_names)} input(s) {data_names} (parameters and "
                         "loss labels are not inputs)")
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise ValueError("The lengths of in_types and in_shapes must equal")
    in_types = [np.dtype(t) for t in in_types]
    if dynamic_input_shapes is not None and not dynamic:
        raise ValueError("dynamic_input_shapes is specified. Please set dynamic=True to "
                         "enable dynamic input shapes")

    # shapes and dtypes of every internal output
    internals = sym.get_internals()
    shape_kw = dict(zip(data_names, in_shapes))
    type_kw = dict(zip(data_names, in_types))
    for n in sym.list_inputs():
        if n in params:
            shape_kw[n], type_kw[n] = params[n].shape, params[n].dtype
    _, out_shapes, _ = internals.infer_shape_partial(**shape_kw)
    _, out_types, _ = internals.infer_type(**type_kw)
    entry_out = _entry_names(sym, nodes)
    index = {n: i for i, n in enumerate(internals.list_outputs())}
    shapes, dtypes, names = {}, {}, {}
    for key, oname in entry_out.items():
        i = index[oname]
        shapes[key] = tuple(out_shapes[i]) if out_shapes[i] is not None else None
        dtypes[key] = np.dtype(out_types[i]) if out_types[i] is not None else np.dtype("float32")
        nid, idx = key
        names[key] = nodes[nid]["name"] if idx == 0 else f"{nodes[nid]['name']}{idx}"

    consts = {}
    conv = Converter(onnx, nodes, shapes, dtypes, consts, names)
    conv.dynamic = bool(dynamic)
    inputs = []
    for nid, node in enumerate(nodes):
        op, name = node["op"], node["name"]
        if op == "null":
            if name in params:
                consts[name] = params[name]
            continue
        if verbose:
            logging.info("Converting idx: %d, op: %s, name: %s", nid, op, name)
        if _fold(conv, nid, node):
            continue
        fn = TRANSLATIONS.get(op)
        if fn is None:
            raise UnsupportedFeatureError(
                f"export_model: no ONNX translation for operator {op} (node '{name}'); "
                "supported: mx.onnx.get_operator_support()")
        outs = [names[k] for k in sorted(k for k in names if k[0] == nid)]
        conv.nid = nid
        fn(conv, node, attrs_of(node), node["inputs"], outs)

    for i, (name, shp, typ) in enumerate(zip(data_names, in_shapes, in_types)):
        if dynamic:
            shp = (tuple(dynamic_input_shapes[i]) if dynamic_input_shapes is not None
                   else (None,) * len(shp))
            if len(shp) != len(in_shapes[i]):
                raise ValueError("The dimensionality of each shape must match.")
        inputs.append(onnx.helper.make_tensor_value_info(name, conv.tensor_type(typ), shp))
    outputs = []
    for h in graph["heads"]:
        key = (h[0], h[1])
        tname = names[key]
        shp = shapes[key]
        if dynamic and shp is not None:
            shp = (None,) * len(shp)
        if tname in consts:                      # an output that folded to a constant
            tname = conv.add("Identity", [conv.name(h)], [conv.unique(tname + "_out")])[0]
        outputs.append(onnx.helper.make_tensor_value_info(tname, conv.tensor_type(dtypes[key]),
                                                          shp))
    inits = [onnx.numpy_helper.from_array(np.ascontiguousarray(v), k)
             for k, v in consts.items() if k in conv.used]
    g = onnx.helper.make_graph(conv.nodes, "mxnet_converted_model", inputs, outputs, inits)
    model = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", OPSET)],
                                   producer_name="sparsym")
    model.ir_version = min(model.ir_version, 8)   # readable by older runtimes (opset 17)
    onnx.checker.check_model(model)
    return model


def _fold(conv, nid, node):
    """Evaluate a node whose inputs are all constants (parameter-only subgraphs such as the
    fused RNN's packed parameters); True when folded."""
    op = node["op"]
    if op.startswith(_RANDOM) or op in ("Dropout",):
        return False
    values = [conv.value(e) for e in node["inputs"]]
    if any(v is None for v in values):
        return False
    if op in ("_zeros", "_ones", "_full") or not values:
        shape = conv.shapes.get((nid, 0))
        if shape is None or any(d == 0 for d in shape):
            return False
    from .. import ndarray as nd
    from ..ndarray.op import invoke
    attrs = {k: v for k, v in (node.get("attrs") or {}).items() if not k.startswith("__")}
    if op in ("_zeros", "_ones", "_full"):
        attrs["shape"] = str(conv.shapes[(nid, 0)])
    try:
        outs = invoke(op, [nd.array(v, dtype=v.dtype) for v in values], attrs)
    except Exception:  # noqa: BLE001 - not foldable here: the translation handles it
        return False
    for i, o in enumerate(outs):
        key = (nid, i)
        if key in conv.names:
            conv.consts[conv.names[key]] = o.asnumpy()
    return True
