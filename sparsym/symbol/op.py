"""Generated ``sym.*`` front ends: compose a Node from an op record."""
from __future__ import annotations

import numpy as np

from ..base import MXNetError, ParamError
from ..graph import HIDDEN_KEYS, Node
from ..ops.core.registry import all_ops, get_op
from ..ops.core.signature import front_end_doc, front_end_signature
from .naming import current, current_attr_scope
from .symbol import Symbol

__all__ = ["call", "make_function", "populate"]


def _entry(sym, op_name, what):
    if not isinstance(sym, Symbol):
        raise ParamError(f"{op_name}: input {what} must be a Symbol, got {type(sym).__name__}")
    if len(sym._outputs) != 1:
        raise MXNetError(f"{op_name}: input {what} is a group of {len(sym._outputs)} outputs; "
                         "pass a single output")
    return sym._outputs[0]


def _given_str(key, value):
    """The string MXNet's front end stores for a parameter value (``str(v)``)."""
    if key == "dtype" and value is not None and not isinstance(value, str):
        return np.dtype(value).name
    return value if isinstance(value, str) else str(value)


def call(op_name, args, kwargs, name=None, attr=None, hint=None):
    """Create ``op_name`` applied to Symbols ``args`` (positional) and ``kwargs``.

    As in MXNet, the AttrScope's attributes and ``attr`` join the keyword arguments:
    hidden keys (``ctx_group``, ``lr_mult``...) and ``__dunder__`` keys become node
    attributes, Symbols become inputs, everything else is an operator parameter.
    Positional non-Symbols after the inputs fill parameters in declaration order.
    """
    op = get_op(op_name)
    kw = dict(kwargs)
    scope = current_attr_scope().get(attr)
    if scope:
        kw.update(scope)
    node_attr, sym_kwargs = {}, {}
    for k in list(kw):
        v = kw[k]
        if v is None and not op.params.accepts(k):
            del kw[k]  # MXNet's front ends skip an input given as None (sequence_length=None)
        elif isinstance(v, Symbol):
            sym_kwargs[k] = kw.pop(k)
        elif k in HIDDEN_KEYS:
            node_attr[f"__{k}__"] = str(kw.pop(k))
        elif k.startswith("__") and k.endswith("__"):
            node_attr[k] = str(kw.pop(k))
    positional = list(args)
    if len(positional) == 1 and isinstance(positional[0], (list, tuple)) \
            and all(isinstance(s, Symbol) for s in positional[0]):
        positional = list(positional[0])
    # MXNet's ``f(input1=None, ..., param1=_Null, ...)``: None in an input slot skips that
    # input (``BilinearResize2D(data, None, scale_height=2)``), as the nd front end does
    n_slots = len(positional) if callable(op.inputs) else len(op.inputs)
    n_sym = 0
    while n_sym < len(positional) and (isinstance(positional[n_sym], Symbol) or (
            positional[n_sym] is None and n_sym < n_slots and not op.key_var_num_args)):
        n_sym += 1
    pos_params = positional[n_sym:]
    positional = [p for p in positional[:n_sym] if p is not None]
    if pos_params:
        if op.key_var_num_args:  # MXNet's ``f(*data, **kwargs)`` takes no positional params
            raise ParamError(f"{op_name}: positional arguments must be Symbols (its inputs), "
                             f"got {type(pos_params[0]).__name__}; pass parameters by keyword")
        kw = op.params.positional(op_name, pos_params, kw)
    if op.key_var_num_args and op.key_var_num_args not in kw:
        kw[op.key_var_num_args] = len(positional) + len(sym_kwargs)
    params = op.params.parse(op_name, kw)
    given = {k: _given_str(k, v) for k, v in kw.items()}
    name = current().get(name, hint or op_name.lower())
    in_names = op.input_names(params)
    inputs = []
    if callable(op.inputs) and op.key_var_num_args:
        for i, s in enumerate(positional + list(sym_kwargs.values())):
            inputs.append(_entry(s, op_name, f"{i}"))
        for nm in in_names[len(inputs):]:  # e.g. bilinear UpSampling's weight, as MXNet
            var_attr = {**given, **node_attr}
            init = dict(op.input_init).get(nm)
            if init is not None:
                var_attr["__init__"] = init
            inputs.append((Node(None, f"{name}_{nm}", None, var_attr), 0))
    else:
        unknown = set(sym_kwargs) - set(in_names)
        if unknown and in_names:  # MXNet ignores Symbol keywords of ops without inputs
            raise ParamError(f"{op_name}: unknown input(s) {sorted(unknown)}; inputs are "
                             f"{list(in_names)}")
        for nm in in_names:
            if nm in sym_kwargs:
                inputs.append(_entry(sym_kwargs[nm], op_name, nm))
            elif positional:
                inputs.append(_entry(positional.pop(0), op_name, nm))
            else:
                # MXNet auto-creates missing inputs as variables named <node>_<input>; they
                # carry the operator's attributes (visible in attr_dict and JSON)
                var_attr = dict(given)
                var_attr.update(node_attr)
                init = dict(op.input_init).get(nm)
                if init is not None:
                    var_attr["__init__"] = init
                inputs.append((Node(None, f"{name}_{nm}", None, var_attr), 0))
        if positional:
            raise ParamError(f"{op_name}: got {len(positional)} extra positional inputs; inputs "
                             f"are {list(in_names)}")
    node = Node(op, name, params, node_attr, inputs, given)
    return Symbol([(node, i) for i in range(op.n_visible(params))])


def make_function(op_name, op, hint=None):
    """Build ``sym.<op_name>`` (signature and doc from the record; no exec)."""
    hint = hint or op_name.lower()

    def fn(*args, name=None, attr=None, **kwargs):
        kwargs.pop("out", None)  # MXNet's symbol front ends accept and ignore ``out``
        return call(op_name, args, kwargs, name=name, attr=attr, hint=hint)

    fn.__name__ = op_name
    fn.__qualname__ = op_name
    fn.__signature__ = front_end_signature(op, ("name", "attr", "out"))
    fn.__doc__ = front_end_doc(op_name, op, fn.__signature__)
    return fn


def populate(namespace: dict, sparse: bool = False):
    for key, op in all_ops().items():
        pub = key[len("_sparse_"):] if sparse and key.startswith("_sparse_") else key
        if pub not in namespace or pub != key:
            namespace[pub] = make_function(key, op, hint=pub.lower())
