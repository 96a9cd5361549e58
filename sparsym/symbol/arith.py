"""Symbol operators (``+ - * / ** % == < ...``) and MXNet's fluent methods."""
from __future__ import annotations

import numbers

import numpy as np

from ..base import MXNetError, NotImplementedForSymbol, ParamError
from ..graph import HIDDEN_KEYS, Node
from ..ops.core.registry import get_op, has_op
from .naming import current, current_attr_scope

__all__ = ["SymbolOps", "NotImplementedForSymbol", "compose"]


def _numeric(x):
    return isinstance(x, (numbers.Number, np.number)) and not isinstance(x, bool) or \
        isinstance(x, (bool, np.bool_))


# (binary op, scalar op, reversed scalar op, name hints as in MXNet's front end)
_BIN = {
    "add": ("elemwise_add", "_plus_scalar", "_plus_scalar", "_plus", "_plusscalar",
            "_plusscalar"),
    "sub": ("elemwise_sub", "_minus_scalar", "_rminus_scalar", "_minus", "_minusscalar",
            "_rminusscalar"),
    "mul": ("elemwise_mul", "_mul_scalar", "_mul_scalar", "_mul", "_mulscalar", "_mulscalar"),
    "div": ("elemwise_div", "_div_scalar", "_rdiv_scalar", "_div", "_divscalar",
            "_rdivscalar"),
    "mod": ("_mod", "_mod_scalar", "_rmod_scalar", "_mod", "_modscalar", "_rmodscalar"),
    "pow": ("_power", "_power_scalar", "_rpower_scalar", "_power", "_powerscalar",
            "_rpower_scalar"),
}
_CMP = {"eq": "_equal", "ne": "_not_equal", "gt": "_greater", "ge": "_greater_equal",
        "lt": "_lesser", "le": "_lesser_equal"}

# fluent method -> operator (MXNet 1.9's Symbol methods; the method name is the name hint)
_FLUENT = {
    "reshape": "Reshape", "reshape_like": "reshape_like", "astype": "Cast",
    "zeros_like": "zeros_like", "ones_like": "ones_like", "broadcast_axes": "broadcast_axis",
    "repeat": "repeat", "pad": "Pad", "swapaxes": "SwapAxis", "split": "SliceChannel",
    "split_v2": "_split_v2", "slice": "slice", "slice_axis": "slice_axis",
    "slice_like": "slice_like", "take": "take", "one_hot": "one_hot", "pick": "pick",
    "sort": "sort", "topk": "topk", "argsort": "argsort", "argmax": "argmax",
    "argmax_channel": "argmax_channel", "argmin": "argmin", "clip": "clip", "abs": "abs",
    "sign": "sign", "flatten": "Flatten", "shape_array": "shape_array",
    "size_array": "size_array", "expand_dims": "expand_dims", "broadcast_to": "broadcast_to",
    "broadcast_like": "broadcast_like", "tile": "tile", "transpose": "transpose",
    "flip": "reverse", "depth_to_space": "depth_to_space", "space_to_depth": "space_to_depth",
    "diag": "diag", "sum": "sum", "nansum": "nansum", "prod": "prod", "nanprod": "nanprod",
    "mean": "mean", "max": "max", "min": "min", "norm": "norm", "round": "round",
    "rint": "rint", "fix": "fix", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "arcsin", "arccos": "arccos",
    "arctan": "arctan", "degrees": "degrees", "radians": "radians", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "arcsinh": "arcsinh", "arccosh": "arccosh",
    "arctanh": "arctanh", "exp": "exp", "expm1": "expm1", "log": "log", "log10": "log10",
    "log2": "log2", "log1p": "log1p", "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt",
    "rcbrt": "rcbrt", "square": "square", "reciprocal": "reciprocal", "relu": "relu",
    "sigmoid": "sigmoid", "softmax": "softmax", "log_softmax": "log_softmax",
    "softmin": "softmin", "squeeze": "squeeze",
}
# NDArray-only methods MXNet's Symbol refuses
_NDARRAY_ONLY = ("as_in_context", "asnumpy", "asscalar", "backward", "copy", "detach",
                 "wait_to_read")


def _call(op_candidates, args, kwargs, hint):
    names = (op_candidates,) if isinstance(op_candidates, str) else op_candidates
    kwargs = dict(kwargs)
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    for n in names:
        if has_op(n):
            return compose(n, args, kwargs, SymbolOps.symbol_class, name=name, attr=attr,
                           hint=hint)
    raise MXNetError(f"operator {names[0]!r} is not registered (needed by Symbol.{hint})")


def _fluent(method, op_name):
    def fn(self, *args, **kwargs):
        return _call(op_name, [self] + list(args), kwargs, method)
    fn.__name__ = method
    fn.__doc__ = f"Fluent form of ``mx.sym.{op_name}(self, ...)``."
    return fn


def _refuse(method):
    def fn(self, *args, **kwargs):
        raise NotImplementedForSymbol(method)
    fn.__name__ = method
    fn.__doc__ = "NDArray only: raises NotImplementedForSymbol."
    return fn


class SymbolOps:
    """Arithmetic, comparison and fluent methods of :class:`Symbol` (no broadcasting:
    use ``broadcast_*``). Names follow MXNet (``x + y`` is ``_plus0``)."""

    __slots__ = ()
    # the Symbol class (symbol.py), set when it is defined: the operators build Symbols
    # without this module importing the one built on it
    symbol_class: type | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if SymbolOps in cls.__bases__:
            SymbolOps.symbol_class = cls

    def _binary(self, other, kind, reverse=False):
        op, sop_, rsop, hint, shint, rshint = _BIN[kind]
        if isinstance(other, SymbolOps):
            a, b = (other, self) if reverse else (self, other)
            return _call(op, [a, b], {}, hint)
        if _numeric(other):
            if reverse:
                return _call(rsop, [self], {"scalar": other}, rshint)
            return _call(sop_, [self], {"scalar": other}, shint)
        raise TypeError(f"type {type(other)} not supported")

    def __add__(self, o):
        return self._binary(o, "add")

    def __radd__(self, o):
        return self._binary(o, "add")

    def __sub__(self, o):
        return self._binary(o, "sub")

    def __rsub__(self, o):
        return self._binary(o, "sub", True)

    def __mul__(self, o):
        return self._binary(o, "mul")

    def __rmul__(self, o):
        return self._binary(o, "mul")

    def __truediv__(self, o):
        return self._binary(o, "div")

    def __rtruediv__(self, o):
        return self._binary(o, "div", True)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, o):
        return self._binary(o, "mod")

    def __rmod__(self, o):
        return self._binary(o, "mod", True)

    def __pow__(self, o):
        return self._binary(o, "pow")

    def __rpow__(self, o):
        return self._binary(o, "pow", True)

    def __neg__(self):
        return self.__mul__(-1.0)

    def __abs__(self):
        return _call("abs", [self], {}, "abs")

    def _compare(self, other, kind):
        base = _CMP[kind]
        if isinstance(other, SymbolOps):
            return _call(base, [self, other], {}, base)
        if _numeric(other):
            return _call(base + "_scalar", [self], {"scalar": other}, base + "_scalar")
        raise TypeError(f"type {type(other)} not supported")

    def __eq__(self, o):
        return self._compare(o, "eq")

    def __ne__(self, o):
        return self._compare(o, "ne")

    def __gt__(self, o):
        return self._compare(o, "gt")

    def __ge__(self, o):
        return self._compare(o, "ge")

    def __lt__(self, o):
        return self._compare(o, "lt")

    def __le__(self, o):
        return self._compare(o, "le")

    # in-place operators exist only for NDArray
    def __iadd__(self, o):
        raise NotImplementedForSymbol("__iadd__", "+=", o, 1)

    def __isub__(self, o):
        raise NotImplementedForSymbol("__isub__", "-=", o)

    def __imul__(self, o):
        raise NotImplementedForSymbol("__imul__", "*=", o)

    def __itruediv__(self, o):
        raise NotImplementedForSymbol("__itruediv__", "/=", o)

    __idiv__ = __itruediv__

    def tostype(self, stype):
        """``cast_storage(self, stype=stype)`` (sparsym extension; MXNet's Symbol lacks it)."""
        return _call("cast_storage", [self], {"stype": stype}, "cast_storage")


for _m, _o in _FLUENT.items():
    setattr(SymbolOps, _m, _fluent(_m, ("reshape", _o) if _m == "reshape" else _o))
for _m in _NDARRAY_ONLY:
    setattr(SymbolOps, _m, _refuse(_m))
SymbolOps.astype = _fluent("astype", ("Cast", "cast"))
SymbolOps.split = _fluent("split", ("split", "SliceChannel"))
SymbolOps.flip = _fluent("flip", ("flip", "reverse"))
SymbolOps.flatten = _fluent("flatten", ("Flatten", "flatten"))
SymbolOps.swapaxes = _fluent("swapaxes", ("swapaxes", "SwapAxis"))


def _sym_binary(name, sym_op, scalar_op, rscalar_op, py_op):
    """``mx.sym.<name>(left, right)``: Symbols, or a Symbol and a scalar (MXNet's symbol.py)."""
    def fn(left, right):
        l_sym, r_sym = isinstance(left, SymbolOps), isinstance(right, SymbolOps)
        if l_sym and r_sym:
            return _call(sym_op, [left, right], {}, sym_op)
        if l_sym or r_sym:
            sym, scalar = (left, right) if l_sym else (right, left)
            if not _numeric(scalar):
                raise TypeError(f"{name}: type {type(scalar)} not supported")
            op = scalar_op if l_sym else rscalar_op
            return _call(op, [sym], {"scalar": scalar}, op.replace("_scalar", "scalar"))
        if _numeric(left) and _numeric(right):
            return py_op(left, right)
        raise TypeError(f"{name}: types ({type(left)}, {type(right)}) not supported")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Element-wise ``{name}`` of two Symbols, or of a Symbol and a scalar "
                  "(two scalars: the Python result).\n\nParameters\n----------\n"
                  "left, right : Symbol or scalar\n\nReturns\n-------\nSymbol\n")
    return fn


maximum = _sym_binary("maximum", "_maximum", "_maximum_scalar", "_maximum_scalar", max)
minimum = _sym_binary("minimum", "_minimum", "_minimum_scalar", "_minimum_scalar", min)
power = _sym_binary("power", "_power", "_power_scalar", "_rpower_scalar", pow)
pow = _sym_binary("pow", "_power", "_power_scalar", "_rpower_scalar", pow)  # noqa: A001
hypot = _sym_binary("hypot", "_hypot", "_hypot_scalar", "_hypot_scalar",
                    lambda a, b: float(np.hypot(a, b)))


# ----------------------------------------------------------------------------- composing
def _entry(sym, op_name, what):
    if not isinstance(sym, SymbolOps):
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


def compose(op_name: str, args, kwargs: dict, sym_cls: type, name: str | None = None,
            attr: dict | None = None, hint: str | None = None):
    """Create ``op_name`` applied to Symbols ``args`` (positional) and ``kwargs``, as a
    ``sym_cls`` (the Symbol class, defined on this module).

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
        elif isinstance(v, SymbolOps):
            sym_kwargs[k] = kw.pop(k)
        elif k in HIDDEN_KEYS:
            node_attr[f"__{k}__"] = str(kw.pop(k))
        elif k.startswith("__") and k.endswith("__"):
            node_attr[k] = str(kw.pop(k))
    positional = list(args)
    if len(positional) == 1 and isinstance(positional[0], (list, tuple)) \
            and all(isinstance(s, SymbolOps) for s in positional[0]):
        positional = list(positional[0])
    # MXNet's ``f(input1=None, ..., param1=_Null, ...)``: None in an input slot skips that
    # input (``BilinearResize2D(data, None, scale_height=2)``), as the nd front end does
    n_slots = len(positional) if callable(op.inputs) else len(op.inputs)
    n_sym = 0
    while n_sym < len(positional) and (isinstance(positional[n_sym], SymbolOps) or (
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
    return sym_cls([(node, i) for i in range(op.n_visible(params))])
