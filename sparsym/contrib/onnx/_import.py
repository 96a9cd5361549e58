"""ONNX graph -> Symbol: one translation per ONNX operator (``_tables.IMPORTS``)."""
from __future__ import annotations

import numpy as np

from ...base import UnsupportedFeatureError
from ._tables import IMPORTS, ImportError_


def _onnx():
    try:
        import onnx
    except ImportError as err:
        raise ImportError("ONNX import needs the onnx package: pip install onnx (or pip "
                          "install sparsym[onnx])") from err
    return onnx


def _load(model_file):
    onnx = _onnx()
    from ...base import open_for_load
    with open_for_load(model_file) as f:          # a missing file names itself
        return onnx.load_model_from_string(f.read())


def imports():
    """ONNX operator name -> its translation (every translation module loaded)."""
    from . import _import_ops, _import_ops_tensor  # noqa: F401  (they register)
    return IMPORTS


class Graph:
    """The state of one import: ONNX tensor name -> Symbol, constants, known ranks."""

    def __init__(self, model):
        onnx = _onnx()
        from onnx import numpy_helper
        self.onnx, self.numpy_helper = onnx, numpy_helper
        self.opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                         default=13)
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - ranks are then only known where declared
            inferred = model
        g = inferred.graph
        self.graph = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.params = {}                 # consts used as variables -> value
        self.syms = {}
        self.shapes = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            tt = vi.type.tensor_type
            if tt.HasField("shape"):
                self.shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                                             for d in tt.shape.dim)

    # ------------------------------------------------------------------ tensors
    def sym(self, name):
        """The Symbol of an ONNX tensor (a constant becomes a parameter variable)."""
        from ... import symbol as S
        if name in self.syms:
            return self.syms[name]
        if name in self.consts:
            value = self.consts[name]
            self.params[name] = value
            self.syms[name] = S.var(name, shape=value.shape, dtype=value.dtype)
            return self.syms[name]
        raise ImportError_(f"ONNX tensor '{name}' is used before any node produces it")

    def const(self, name):
        """The value of a constant tensor (initializer or Constant node), else None."""
        return None if not name else self.consts.get(name)

    def param(self, value, name):
        """A new parameter variable holding ``value``."""
        from ... import symbol as S
        value = np.asarray(value)
        self.params[name] = value
        self.consts[name] = value
        self.syms[name] = S.var(name, shape=value.shape, dtype=value.dtype)
        return self.syms[name]

    def rank(self, name):
        if name in self.consts:
            return self.consts[name].ndim
        shape = self.shapes.get(name)
        return None if shape is None else len(shape)

    def shape(self, name):
        if name in self.consts:
            return self.consts[name].shape
        return self.shapes.get(name)

    def attrs(self, node):
        return {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}

    # ------------------------------------------------------------------ driver
    def convert(self):
        """(sym, arg_params, aux_params) of the whole graph."""
        from ... import ndarray as nd
        from ... import symbol as S
        IMPORTS = imports()
        inits = set(self.consts)
        self.inputs = []
        for vi in self.graph.input:
            if vi.name in inits:
                continue
            elem = vi.type.tensor_type.elem_type
            dtype = self.onnx.helper.tensor_dtype_to_np_dtype(elem) if elem else np.float32
            self.syms[vi.name] = S.var(vi.name, dtype=dtype)
            self.inputs.append(vi.name)
        for node in self.graph.node:
            if node.domain not in ("", "ai.onnx"):
                raise UnsupportedFeatureError(f"import_model: operator {node.domain}."
                                              f"{node.op_type} (node '{node.name}') is not "
                                              "in the ONNX domain sparsym reads")
            fn = IMPORTS.get(node.op_type)
            if fn is None:
                raise UnsupportedFeatureError(
                    f"import_model: no translation for ONNX operator {node.op_type} (node "
                    f"'{node.name or node.output[0]}'); supported: "
                    "mx.contrib.onnx.supported_onnx_ops()")
            outs = fn(self, node, self.attrs(node))
            for name, s in zip(node.output, outs):
                if not name:
                    continue
                if isinstance(s, np.ndarray):
                    self.consts[name] = s
                else:
                    self.syms[name] = s
        heads = [self.sym(o.name) for o in self.graph.output]
        sym = heads[0] if len(heads) == 1 else S.Group(heads)
        aux_names = set(sym.list_auxiliary_states())
        used = set(sym.list_inputs())
        arg = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items()
               if k in used and k not in aux_names}
        aux = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items() if k in aux_names}
        return sym, arg, aux

    def node_name(self, node):
        """The MXNet node name of an ONNX node: its first output's name."""
        return node.output[0] or node.name


def import_model(model_file):
    """Import an ONNX model file into a Symbol and its parameters.

    Parameters
    ----------
    model_file : str
        The ONNX file.

    Returns
    -------
    sym : Symbol
        The graph; its non-parameter inputs are the ONNX graph's inputs, by name.
    arg_params : dict of str to NDArray
        The parameters (the ONNX initializers the graph uses as tensors).
    aux_params : dict of str to NDArray
        The auxiliary states (BatchNormalization's running mean and variance).

    Raises
    ------
    UnsupportedFeatureError
        For an ONNX operator without a translation (named in the message).

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsym as mx
    >>> bn = mx.sym.BatchNorm(mx.sym.var("x"), fix_gamma=False, name="bn")
    >>> values = {k: mx.nd.ones((4,)) for k in ("bn_gamma", "bn_beta", "bn_moving_mean",
    ...                                         "bn_moving_var")}
    >>> out = os.path.join(tempfile.mkdtemp(), "bn.onnx")
    >>> sym, arg, aux = mx.contrib.onnx.import_model(
    ...     mx.onnx.export_model(bn, values, [(2, 4)], onnx_file_path=out))
    >>> sorted(arg), sorted(aux)
    (['bn_beta', 'bn_gamma'], ['bn_moving_mean', 'bn_moving_var'])
    """
    return Graph(_load(model_file)).convert()


def get_model_metadata(model_file):
    """Names and shapes of the inputs and outputs of the ONNX model in ``model_file``.

    Returns
    -------
    dict
        ``'input_tensor_data'``: a list of ``(name, shape, onnx_elem_type)`` for the inputs
        that are not initializers; ``'output_tensor_data'``: a list of ``(name, shape)``.
        A symbolic dimension is 0 (as MXNet gives).
    """
    model = _load(model_file)
    inits = {t.name for t in model.graph.initializer}

    def dims(vi):
        return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)

    return {"input_tensor_data": [(vi.name, dims(vi), vi.type.tensor_type.elem_type)
                                  for vi in model.graph.input if vi.name not in inits],
            "output_tensor_data": [(vi.name, dims(vi)) for vi in model.graph.output]}


def import_to_gluon(model_file, ctx):
    """Import the ONNX model in ``model_file`` into a Gluon ``SymbolBlock`` holding its
    parameters.

    Parameters
    ----------
    ctx : Context or list of Context
        Where the parameters live.

    Returns
    -------
    gluon.SymbolBlock
        Called with the model's inputs in the ONNX graph's order.
    """
    from ... import symbol as S
    from ...gluon import SymbolBlock
    graph = Graph(_load(model_file))
    sym, arg, aux = graph.convert()
    net = SymbolBlock(outputs=sym, inputs=[S.var(n) for n in graph.inputs])
    params = net.collect_params()
    for name, value in list(arg.items()) + list(aux.items()):
        if name in params:
            params[name].shape = value.shape
            params[name]._load_init(value, ctx)
    return net


def supported_onnx_ops():
    """The sorted ONNX operator names :func:`import_model` translates."""
    return sorted(imports())
