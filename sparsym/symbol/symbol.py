"""Symbol: a declarative graph handle (MXNet 1.x's Symbol API)."""
from __future__ import annotations

import json
import warnings

import numpy as np

from ..base import MXNetError, ShapeError, format_attr, parse_attr
from ..ops import rules
from ..storage import check_stype
from .graph import IndexedGraph, Node
from .naming import current_attr_scope, expand_attr

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json"]


class Symbol:
    """A list of graph output entries; compose symbols with ``mx.sym.*`` operators.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.sym.Variable('x')
    >>> y = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    >>> y.list_arguments()
    ['x', 'fc_weight', 'fc_bias']
    """

    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # ------------------------------------------------------------------ naming & listing
    @property
    def name(self):
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def __repr__(self):
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return "<Symbol group [" + ", ".join(_entry_name(e) for e in self._outputs) + "]>"

    __str__ = __repr__

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def _graph(self) -> IndexedGraph:
        return IndexedGraph(self._outputs)

    def list_arguments(self):
        """Names of the arguments (non-auxiliary variables) in graph order."""
        return [n.name for n in self._graph().arg_nodes]

    def list_outputs(self):
        """Output names (``<node>_output`` for ops, the name for variables)."""
        return [_entry_name(e) for e in self._outputs]

    def list_auxiliary_states(self):
        """Names of auxiliary states (e.g. BatchNorm's moving_mean)."""
        return [n.name for n in self._graph().aux_nodes]

    def list_inputs(self):
        """All variable names: arguments and auxiliary states."""
        return [n.name for n in self._graph().input_nodes]

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError(f"There is no output named {index!r}; outputs are {names}")
            if len(matches) > 1:
                raise ValueError(f"There are multiple outputs with name {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"Symbol index {index} out of range ({len(self._outputs)} outputs)")
        return Symbol([self._outputs[index]])

    def get_internals(self):
        """A group of every entry in the graph (inputs and every op output)."""
        g = self._graph()
        return Symbol([(n, i) for n in g.nodes for i in range(n.num_outputs())])

    def get_children(self):
        """The inputs of this symbol's (single) node, or None for a variable."""
        if len(self._outputs) != 1:
            return None
        node = self._outputs[0][0]
        return Symbol(list(node.inputs)) if node.inputs else None

    # ------------------------------------------------------------------ attributes
    def attr(self, key):
        """A string attribute of this symbol's node (None when absent)."""
        if len(self._outputs) != 1:
            return None
        node = self._outputs[0][0]
        if key in node.attr:
            return node.attr[key]
        if node.op is not None and key in node.params and node.params[key] is not None:
            return format_attr(node.params[key])
        return None

    def list_attr(self, recursive=False):
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        node = self._outputs[0][0]
        return _node_attrs(node)

    def attr_dict(self):
        """{node name: {attr: value}} over the graph, for nodes with attributes."""
        out = {}
        for n in self._graph().nodes:
            a = _node_attrs(n)
            if a:
                out[n.name] = a
        return out

    def _set_attr(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError("Set Attr only accepts string values")
            self._outputs[0][0].attr[k] = v

    # ------------------------------------------------------------------ inference
    def _known_by_name(self, args, kwargs, what):
        g = self._graph()
        names = [n.name for n in g.arg_nodes]
        known = {}
        if args:
            if len(args) > len(names):
                raise MXNetError(f"{what}: too many positional arguments ({len(args)}) for "
                                 f"{len(names)} arguments")
            for n, v in zip(g.arg_nodes, args):
                if v is not None:
                    known[g.eid(n)] = v
        by_name = {n.name: n for n in g.input_nodes}
        for k, v in kwargs.items():
            if k not in by_name:
                cands = "\n".join(f"\t[{i}]{n}" for i, n in enumerate(names))
                raise MXNetError(f"{what}Keyword argument name {k} not found.\n"
                                 f"Candidate arguments:\n{cands}")
            if v is not None:
                known[g.eid(by_name[k])] = v
        return g, known

    def infer_shape(self, *args, **kwargs):
        """Infer (arg_shapes, out_shapes, aux_shapes) from the given argument shapes.

        Returns (None, None, None) with a warning when some shapes cannot be decided.
        """
        res = self._infer_shape(False, args, kwargs)
        if res[0] is None:
            return res
        return res

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape`; unknown shapes come back as ``()``."""
        return self._infer_shape(True, args, kwargs)

    def _infer_shape(self, partial, args, kwargs):
        from ..passes.infer_shape import infer_shape
        g, known = self._known_by_name(args, kwargs, "InferShape")
        known = {e: tuple(s) for e, s in known.items()}
        shapes = infer_shape(g, known)
        conv = lambda s: tuple(0 if d is None else d for d in s) if s is not None else ()
        arg = [shapes[g.eid(n)] for n in g.arg_nodes]
        aux = [shapes[g.eid(n)] for n in g.aux_nodes]
        out = [shapes[g.eid(n, i)] for n, i in self._outputs]
        if not partial and not all(rules.known(s) for s in arg + aux + out):
            unknown = [n.name for n in g.input_nodes if not rules.known(shapes[g.eid(n)])]
            warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                          "unknown dimensions). Consider providing them as input:\n\t"
                          + "\n\t".join(f"{n}: {conv(shapes[g.eid(x)])}" for n, x in
                                        ((x.name, x) for x in g.input_nodes)
                                        if n in unknown), stacklevel=3)
            return None, None, None
        return [conv(s) for s in arg], [conv(s) for s in out], [conv(s) for s in aux]

    def infer_type(self, *args, **kwargs):
        """Infer (arg_types, out_types, aux_types) as numpy types."""
        return self._infer_type(False, args, kwargs)

    def infer_type_partial(self, *args, **kwargs):
        return self._infer_type(True, args, kwargs)

    def _infer_type(self, partial, args, kwargs):
        from ..passes.infer_type import infer_type
        g, known = self._known_by_name(args, kwargs, "InferType")
        types = infer_type(g, {e: np.dtype(t) for e, t in known.items()}, default=None)
        conv = lambda t: None if t is None else t.type
        arg = [conv(types[g.eid(n)]) for n in g.arg_nodes]
        aux = [conv(types[g.eid(n)]) for n in g.aux_nodes]
        out = [conv(types[g.eid(n, i)]) for n, i in self._outputs]
        if not partial and any(t is None for t in arg + aux + out):
            return None, None, None
        return arg, out, aux

    def infer_storage_type(self, *args, **kwargs):
        """Infer (arg_stypes, out_stypes, aux_stypes) — MXNet has no public equivalent.

        Examples
        --------
        >>> import sparsym as mx
        >>> x = mx.sym.Variable('x', stype='csr'); w = mx.sym.Variable('w')
        >>> mx.sym.dot(x, w, transpose_a=True).infer_storage_type()[1]
        ['row_sparse']
        """
        from ..passes.infer_storage import infer_storage
        g, known = self._known_by_name(args, kwargs, "InferStorageType")
        stypes, _ = infer_storage(g, {e: check_stype(s) for e, s in known.items()}, report=False)
        return ([stypes[g.eid(n)] for n in g.arg_nodes],
                [stypes[g.eid(n, i)] for n, i in self._outputs],
                [stypes[g.eid(n)] for n in g.aux_nodes])

    # ------------------------------------------------------------------ binding
    def simple_bind(self, ctx=None, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Infer shapes, types and stypes from ``kwargs`` (name=shape), allocate arrays and
        return an :class:`~sparsym.executor.Executor` (see MXNet 1.9's simple_bind)."""
        from ..executor.executor import simple_bind
        return simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, kwargs)

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """Bind given arrays (list in list_arguments order, or dict) into an Executor."""
        from ..executor.executor import bind
        return bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def eval(self, ctx=None, **kwargs):
        """Bind ``kwargs`` arrays, run forward and return the outputs."""
        exe = self.bind(ctx, kwargs, grad_req="null")
        return exe.forward()

    # ------------------------------------------------------------------ serialisation
    def tojson(self):
        """MXNet 1.x's JSON graph format."""
        return json.dumps(to_json_dict(self), indent=2)

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname`` (temp file + rename)."""
        from ..utils import atomic_write
        atomic_write(fname, self.tojson().encode())

    def __getstate__(self):
        return {"json": self.tojson()}

    def __setstate__(self, state):
        self._outputs = load_json(state["json"])._outputs

    def __deepcopy__(self, memo):
        return load_json(self.tojson())

    def __copy__(self):
        return Symbol(list(self._outputs))

    def debug_str(self):
        """A readable listing of the graph's nodes."""
        lines = [f"Symbol Outputs:\n\toutput[{i}]={n}" for i, n in enumerate(self.list_outputs())]
        for n in self._graph().nodes:
            if n.op is None:
                lines.append(f"Variable:{n.name}")
            else:
                lines.append("-" * 40 + f"\nOp:{n.op.name}, Name={n.name}\nInputs:")
                lines += [f"\targ[{i}]={c.name}({j})" for i, (c, j) in enumerate(n.inputs)]
                if n.params:
                    lines.append("Attrs:")
                    lines += [f"\t{k}={v}" for k, v in n.params.to_strings().items()]
        return "\n".join(lines)

    # ------------------------------------------------------------------ operators
    def _bin(self, other, name, scalar_name, reverse=False):
        from . import op as sop
        if isinstance(other, Symbol):
            a, b = (other, self) if reverse else (self, other)
            return sop.call(name, [a, b], {})
        if isinstance(other, (int, float, np.number)):
            return sop.call(scalar_name, [self], {"scalar": float(other)})
        raise TypeError(f"type {type(other).__name__} not supported")

    def __add__(self, o):
        return self._bin(o, "_plus", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, o):
        return self._bin(o, "_minus", "_minus_scalar")

    def __rsub__(self, o):
        return self._bin(o, "_minus", "_rminus_scalar", True)

    def __mul__(self, o):
        return self._bin(o, "_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._bin(o, "_div", "_div_scalar")

    def __rtruediv__(self, o):
        return self._bin(o, "_div", "_rdiv_scalar", True)

    def __pow__(self, o):
        return self._bin(o, "_power", "_power_scalar")

    def __rpow__(self, o):
        return self._bin(o, "_power", "_rpower_scalar", True)

    def __mod__(self, o):
        return self._bin(o, "_mod", "_mod_scalar")

    def __neg__(self):
        return self.__mul__(-1.0)

    def __eq__(self, o):
        return self._bin(o, "_equal", "_equal_scalar")

    def __ne__(self, o):
        return self._bin(o, "_not_equal", "_not_equal_scalar")

    def __gt__(self, o):
        return self._bin(o, "_greater", "_greater_scalar")

    def __ge__(self, o):
        return self._bin(o, "_greater_equal", "_greater_equal_scalar")

    def __lt__(self, o):
        return self._bin(o, "_lesser", "_lesser_scalar")

    def __le__(self, o):
        return self._bin(o, "_lesser_equal", "_lesser_equal_scalar")

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise NotImplementedError("The truth value of a Symbol is undefined")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        from . import op as sop
        from ..ops.registry import has_op
        if has_op(name):
            return lambda *args, **kw: sop.call(name, [self] + list(args), kw)
        raise AttributeError(f"'Symbol' object has no attribute '{name}'")


def _entry_name(entry):
    node, idx = entry
    if node.op is None:
        return node.name
    return f"{node.name}_{node.op.out_names(node.params)[idx]}"


def _node_attrs(node):
    out = dict(node.attr)
    if node.op is not None:
        out.update(node.params.to_strings())
    return out


# ---------------------------------------------------------------------- variables
def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
             stype=None, **kwargs):
    """Create a symbolic variable.

    Parameters
    ----------
    name : str
    attr : dict of str -> str, optional
    shape : tuple, optional (0 or None dims are unknown)
    lr_mult, wd_mult : float, optional
    dtype : str or numpy dtype, optional
    init : Initializer or str, optional (takes priority over the global initializer)
    stype : {'default', 'csr', 'row_sparse'}, optional

    Returns
    -------
    Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.sym.Variable('w', stype='row_sparse', shape=(10, 2)).attr('__storage_type__')
    'row_sparse'
    """
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    a = current_attr_scope().get(attr)
    a = expand_attr(a)
    if shape is not None:
        a["__shape__"] = format_attr(tuple(shape) if not isinstance(shape, int) else (shape,))
    if lr_mult is not None:
        a["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        a["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        from ..base import dtype_of
        from ..ndarray.dtypes import dtype_to_flag
        a["__dtype__"] = str(dtype_to_flag(dtype_of(dtype)))
    if init is not None:
        a["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        a["__storage_type__"] = check_stype(stype, f"Variable {name}: ")
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must "
                             "start and end with double underscores, e.g, __yourattr__")
        a[k] = str(v)
    return Symbol([(Node(None, name, None, a), 0)])


var = Variable


def Group(symbols):
    """Group symbols into one with all their outputs."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    return Symbol([e for s in symbols for e in s._outputs])


# ---------------------------------------------------------------------- JSON
def to_json_dict(sym):
    g = sym._graph()
    nodes = []
    for n in g.nodes:
        entry = {"op": "null" if n.op is None else n.op.name, "name": n.name}
        attrs = _node_attrs(n)
        if attrs:
            entry["attrs"] = attrs
        entry["inputs"] = [[g.node_id[id(c)], i, 0] for c, i in n.inputs]
        nodes.append(entry)
    row_ptr = list(g.entry_offset) + [g.num_entries]
    return {"nodes": nodes,
            "arg_nodes": [g.node_id[id(n)] for n in g.input_nodes],
            "node_row_ptr": row_ptr,
            "heads": [[g.node_id[id(n)], i, 0] for n, i in sym._outputs],
            "attrs": {"mxnet_version": ["int", 10901]}}


def load_json(json_str):
    """Rebuild a Symbol from MXNet 1.x JSON (files written by MXNet load here)."""
    from ..base import FormatError
    from ..ops.registry import get_op, has_op
    try:
        d = json.loads(json_str)
        raw_nodes = d["nodes"]
        heads = d["heads"]
    except (ValueError, KeyError, TypeError) as err:
        raise FormatError(f"load_json: not an MXNet symbol JSON document ({err})") from None
    built = []
    for k, rn in enumerate(raw_nodes):
        attrs = dict(rn.get("attrs", rn.get("attr", rn.get("param", {}))) or {})
        inputs = []
        for inp in rn.get("inputs", []):
            if inp[0] >= k:
                raise FormatError(f"load_json: node {k} ({rn.get('name')}) refers to a later "
                                  f"node {inp[0]}")
            inputs.append((built[inp[0]], inp[1]))
        if rn["op"] == "null":
            built.append(Node(None, rn["name"], None, attrs, inputs))
            continue
        if not has_op(rn["op"]):
            raise FormatError(f"load_json: node {rn['name']!r} uses operator {rn['op']!r}, which "
                              "sparsym does not implement")
        op = get_op(rn["op"])
        params = {k2: v for k2, v in attrs.items() if k2 in op.params.fields}
        rest = {k2: v for k2, v in attrs.items() if k2 not in op.params.fields}
        built.append(Node(op, rn["name"], op.params.parse(op.name, params), rest, inputs))
    return Symbol([(built[h[0]], h[1]) for h in heads])


def load(fname):
    """Load a symbol JSON file (``prefix-symbol.json``)."""
    with open(fname, encoding="utf-8") as f:
        return load_json(f.read())


def _shape_attr(s):
    return parse_attr(s)


__all__ += ["ShapeError"]
