"""Symbol operators (``+ - * / ** % == < ...``) and MXNet's fluent methods."""
from __future__ import annotations

import numbers

import numpy as np

from ..base import MXNetError, NotImplementedForSymbol

__all__ = ["SymbolOps", "NotImplementedForSymbol"]


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
    from ..ops.core.registry import has_op
    from . import op as sop
    names = (op_candidates,) if isinstance(op_candidates, str) else op_candidates
    kwargs = dict(kwargs)
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    for n in names:
        if has_op(n):
            return sop.call(n, args, kwargs, name=name, attr=attr, hint=hint)
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
