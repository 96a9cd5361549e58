"""Generated ``sym.*`` front ends: compose a Node from an op record."""
from __future__ import annotations

import inspect

from ..base import MXNetError, ParamError
from ..ops.registry import all_ops, get_op
from .graph import Node
from .naming import current, current_attr_scope, expand_attr
from .symbol import Symbol, Variable


def _entry(sym, op_name, what):
    if not isinstance(sym, Symbol):
        raise ParamError(f"{op_name}: input {what} must be a Symbol, got {type(sym).__name__}")
    if len(sym._outputs) != 1:
        raise MXNetError(f"{op_name}: input {what} is a group of {len(sym._outputs)} outputs; "
                         "pass a single output")
    return sym._outputs[0]


def call(op_name, args, kwargs, name=None, attr=None):
    """Create ``op_name`` applied to Symbols ``args`` (positional) and kwargs."""
    op = get_op(op_name)
    kwargs = dict(kwargs)
    # hidden / user attributes (dunder names) are kept as node attrs
    extra = {k: str(kwargs.pop(k)) for k in list(kwargs) if k.startswith("__") and k.endswith("__")}
    sym_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], Symbol)}
    positional = list(args)
    if len(positional) == 1 and isinstance(positional[0], (list, tuple)):
        positional = list(positional[0])
    if op.key_var_num_args and op.key_var_num_args not in kwargs:
        kwargs[op.key_var_num_args] = len(positional) + len(sym_kwargs)
    params = op.params.parse(op_name, kwargs)
    hint = op.name.lower().lstrip("_")
    name = current().get(name, hint)
    in_names = op.input_names(params)
    inputs = []
    if callable(op.inputs) and op.key_var_num_args:
        for i, s in enumerate(positional + list(sym_kwargs.values())):
            inputs.append(_entry(s, op_name, f"{i}"))
    else:
        unknown = set(sym_kwargs) - set(in_names)
        if unknown:
            raise ParamError(f"{op_name}: unknown input(s) {sorted(unknown)}; inputs are "
                             f"{list(in_names)}")
        for nm in in_names:
            if nm in sym_kwargs:
                inputs.append(_entry(sym_kwargs[nm], op_name, nm))
            elif positional:
                inputs.append(_entry(positional.pop(0), op_name, nm))
            else:
                # MXNet auto-creates missing inputs as variables named <node>_<input>
                inputs.append(Variable(f"{name}_{nm}")._outputs[0])
        if positional:
            raise ParamError(f"{op_name}: got {len(positional)} extra positional inputs; inputs "
                             f"are {list(in_names)}")
    a = expand_attr(current_attr_scope().get(attr))
    a.update(extra)
    return Symbol([(Node(op, name, params, a, inputs), i) for i in range(op.n_visible(params))])


def make_function(op_name, op):
    """Build ``sym.<op_name>`` (signature and doc from the record; no exec)."""
    def fn(*args, name=None, attr=None, **kwargs):
        return call(op_name, args, kwargs, name=name, attr=attr)

    fn.__name__ = op_name
    fn.__qualname__ = op_name
    fn.__doc__ = op.doc or f"{op.name} operator.\n\nParameters\n----------\n{op.params.doc()}"
    params = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
               for k in op.params.fields]
    params += [inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None),
               inspect.Parameter("attr", inspect.Parameter.KEYWORD_ONLY, default=None)]
    fn.__signature__ = inspect.Signature(params)
    return fn


def populate(namespace: dict, sparse: bool = False):
    for key, op in all_ops().items():
        pub = key[len("_sparse_"):] if sparse and key.startswith("_sparse_") else key
        if pub not in namespace or pub != key:
            namespace[pub] = make_function(key, op)
