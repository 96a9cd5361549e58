"""SymbolBlock: a HybridBlock made from a Symbol graph (MXNet exports, Module checkpoints)."""
from __future__ import annotations

import copy

import numpy as np

from .. import symbol as _symbol
from ..dtype_flags import flag_to_dtype
from ..ndarray.ndarray import NDArray
from ..symbol.symbol import Symbol
from .block import HybridBlock, _flatten, _regroup
from .parameter import DeferredInitializationError, ParameterDict

__all__ = ["SymbolBlock"]


def _common_prefix(names):
    """The longest common prefix of ``names`` ending at an underscore."""
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _infer_param_types(in_params, out_params, arg_params, aux_params, default=np.float32):
    """Parameter dtypes of a graph inferred from its inputs' declared dtypes."""
    dtypes = {}
    for p in in_params:
        d = p.attr("__dtype__")
        if d is not None:
            dtypes[p.name] = flag_to_dtype(int(d)) if d.lstrip("-").isdigit() else np.dtype(d)
    try:
        arg_types, _, aux_types = out_params.infer_type_partial(**dtypes)
    except Exception:  # noqa: BLE001  (MXNet falls back to the default dtype too)
        arg_types = aux_types = None
    if arg_types is None or len(arg_types) != len(arg_params):
        arg_types = [default] * len(arg_params)
    if aux_types is None or len(aux_types) != len(aux_params):
        aux_types = [default] * len(aux_params)
    return ([t if t is not None else default for t in arg_types],
            [t if t is not None else default for t in aux_types])


class SymbolBlock(HybridBlock):
    """A HybridBlock made from a Symbol graph (e.g. an exported or MXNet-trained model).

    Parameters
    ----------
    outputs : Symbol or list of Symbol
    inputs : Symbol or list of Symbol
        The input variables; every other argument becomes a Parameter.
    params : ParameterDict, optional
        Parameters to share.

    Examples
    --------
    >>> import sparsym as mx
    >>> data = mx.sym.var('data')
    >>> net = mx.gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), data)
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 4))).shape
    (3, 2)
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """Load ``prefix-symbol.json`` (and a ``.params`` file) written by ``export``.

        Parameters
        ----------
        symbol_file : str
        input_names : str or list of str
        param_file : str, optional
        ctx : Context or list of Context, optional
        """
        sym = _symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [_symbol.var(i, dtype=np.float32) for i in input_names]
        else:
            inputs = [_symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __repr__(self):
        inputs, out = self._cached_graph
        return (f"{self.__class__.__name__}(\n{out} : {len(inputs)} -> "
                f"{len(out.list_outputs())}\n)")

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        input_names = set()
        for i in syms:
            assert len(i.get_internals().list_outputs()) == 1, \
                f"Input symbols must be variable, but {i} is an output of operators"
            input_names.add(i.name)
        for i in out:
            for name, attrs in i.attr_dict().items():
                assert attrs.get("__storage_type__") not in ("1", "row_sparse"), \
                    (f"SymbolBlock doesn't support Parameter '{name}' because its storage "
                     "type is 'row_sparse'.")
        out = _symbol.Group(out) if len(out) > 1 else out[0]
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_params, aux_params)
        for i, arg in enumerate(arg_params):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=arg_types[i])
        for i, aux in enumerate(aux_params):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True,
                                dtype=aux_types[i])
        self._cached_graph = syms, out
        len_prefix = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        assert isinstance(x, Symbol), ("HybridBlock requires the first argument to forward be "
                                       f"either Symbol or NDArray, but got {type(x)}")
        flat, in_fmt = _flatten([x] + list(args), "input")
        assert in_fmt == self._in_format, "Invalid input format"
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        outs = [ret[i] for i in range(len(ret.list_outputs()))]
        return _regroup(outs, self._out_format)[0]

    def _call_cached_op(self, *args):
        flat, fmt = _flatten(args, "input")
        if fmt != self._in_format and [fmt] != self._in_format:
            raise ValueError("Invalid input format")
        if self._cached_op is None:
            from ..cached_op import CachedGraph
            inputs, out = self._cached_graph
            self._cached_op = CachedGraph(out, {d.name: i for i, d in enumerate(inputs)},
                                          self.collect_params(), self._flags)
        data = [a for a in flat if a is not None]
        try:
            out = self._cached_op(data)
        except DeferredInitializationError:
            self._infer_symbol_shapes(data)
            for p in self._cached_op.params:
                p._finish_deferred_init()
            out = self._cached_op(data)
        return _regroup(out, self._out_format)[0]

    def _infer_symbol_shapes(self, data):
        inputs, out = self._cached_graph
        known = {i.name: d.shape for i, d in zip(inputs, data)}
        try:
            arg_shapes, _, aux_shapes = out.infer_shape_partial(**known)
        except Exception as e:
            raise ValueError("Deferred initialization failed because shape cannot be "
                             f"inferred. {e}") from e
        sdict = dict(zip(out.list_arguments(), arg_shapes))
        sdict.update(zip(out.list_auxiliary_states(), aux_shapes))
        for p in self.collect_params().values():
            if sdict.get(p.name) is not None:
                p.shape = tuple(0 if d is None else d for d in sdict[p.name])

    def _clear_cached_op(self):
        tmp = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = tmp

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)
        if np.dtype(dtype).name == "float16":
            # BatchNorm's statistics and scale stay float32 (MXNet's rule)
            names = self._cached_graph[1].list_inputs()
            for node in names:
                for stat in ("running_var", "moving_var"):
                    if node.endswith(stat):
                        prefix = node[:-len(stat)]
                        sibs = [prefix + t for t in (stat.replace("var", "mean"), "gamma",
                                                     "beta")]
                        if all(p in names for p in sibs):
                            self.params.get(node).cast("float32")
                            for sib in sibs:
                                self.params.get(sib).cast("float32")

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError
