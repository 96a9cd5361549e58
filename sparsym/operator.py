"""Operators written in Python (mx.operator): CustomOp, CustomOpProp and register.

A ``CustomOpProp`` subclass describes an operator (its arguments, outputs, auxiliary
states, shape/dtype/storage inference, backward dependencies) and creates the
``CustomOp`` that computes it. ``register(name)`` makes it available as
``mx.nd.Custom(..., op_type=name)`` and ``mx.sym.Custom(..., op_type=name)``; it runs
imperatively, in executors and Modules, and with sparse inputs and gradients when the
prop declares storage types.

Examples
--------
>>> import numpy as np
>>> import sparsym as mx
>>> class Sqr(mx.operator.CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * in_data[0])
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])
>>> @mx.operator.register("doc_sqr")
... class SqrProp(mx.operator.CustomOpProp):
...     def create_operator(self, ctx, shapes, dtypes):
...         return Sqr()
>>> mx.nd.Custom(mx.nd.array([1, 2, 3]), op_type="doc_sqr").asnumpy()
array([1., 4., 9.], dtype=float32)
"""
from __future__ import annotations

import collections
import ctypes

import numpy as np

from . import profiler as _profiler
from .base import MXNetError, NDArrayHandle
from .context import current_context as _current_context
from .ndarray.ndarray import NDArray
from .ndarray.ndarray import wrap as _wrap
from .ops.control import custom as _custom
from .ops.core.registry import all_ops

_custom.HOOKS.wrap = _wrap
_custom.HOOKS.current_context = _current_context
_custom.HOOKS.scope = _profiler.custom_op_scope

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments", "PythonOp", "NumpyOp", "NDArrayOp",
           # names MXNet's operator module carries, which `from mxnet.operator import *` gives
           # to callback code (ctypes.cast(arr, NDArrayHandle); NDArray(handle))
           "ctypes", "NDArrayHandle", "NDArray"]


class CustomOp:
    """Base class of operators implemented in Python: override forward and backward."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute the outputs.

        Parameters
        ----------
        is_train : bool
            Whether this is a training pass.
        req : list of str
            How to write each output: 'null', 'write', 'inplace' or 'add'
            (:meth:`assign` applies it).
        in_data, out_data, aux : list of NDArray
            Inputs, outputs to fill, and auxiliary states (updated in place).
        """

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute the input gradients.

        Parameters
        ----------
        req : list of str
            How to write each input gradient.
        out_grad, in_data, out_data, in_grad, aux : list of NDArray
            Head gradients, forward inputs and outputs, gradients to fill, auxiliary states.
        """

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says ('null' skips, 'add' accumulates)."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise MXNetError(f"assign: unknown req {req!r}; expected 'null', 'write', "
                             "'inplace' or 'add'")


def _require_default(stypes, method, what, kind):
    """MXNet's assertion (and text) when a default storage rule meets a sparse stype."""
    for i, stype in enumerate(stypes):
        assert stype == "default", (
            f"Default {method} implementation doesnt allow non default stypes: found non "
            f"default stype '{stype}' for {what}[{i}]. Please implement infer_storage_type and "
            f"infer_storage_type_backward interface in your custom operator if you have "
            f"non-default {kind} stypes")


class CustomOpProp:
    """Base class of the property (description) of a Python operator.

    Parameters
    ----------
    need_top_grad : bool
        Whether backward needs the head gradients (False for loss layers); read by the
        default :meth:`declare_backward_dependency`.
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(input shapes, output shapes[, aux shapes]): by default every output has the
        first input's shape and there are no auxiliary states."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(input dtypes, output dtypes[, aux dtypes]): by default the first input's."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """(input stypes, output stypes[, aux stypes]) of the forward pass. The default
        accepts only 'default' inputs and makes 'default' outputs."""
        _require_default(in_stype, "infer_storage_type", "in_stype", "input/output")
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Storage types of the backward pass: (ograd, in, out, igrad, aux) lists. The
        default accepts only 'default' head gradients and makes 'default' gradients."""
        _require_default(ograd_stype, "infer_storage_type_backward", "ograd_stype",
                         "output gradient")
        _require_default(["default" if s == "undefined" else s for s in igrad_stype],
                         "infer_storage_type_backward", "igrad_stype", "input gradient")
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        for lst in lists:
            lst[:] = ["default"] * len(lst)
        return tuple(lists)

    def list_outputs(self):
        """Output names (default ['output'])."""
        return ["output"]

    def list_arguments(self):
        """Argument names (default ['data'])."""
        return ["data"]

    def list_auxiliary_states(self):
        """Auxiliary state names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs backward needs: head gradients (when need_top_grad), inputs
        and outputs."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The CustomOp computing this operator for these input shapes and dtypes."""
        return CustomOp()


def register(reg_name):
    """Class decorator registering a CustomOpProp subclass as ``op_type=reg_name``.

    Registering a name again replaces the earlier class (as in MXNet).
    """
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError(f"register({reg_name!r}): expected a CustomOpProp subclass, got "
                             f"{prop_cls!r}")
        _custom.PROPS[reg_name] = prop_cls
        _custom._PROP_CACHE.clear()
        _custom._OP_CACHE.clear()
        return prop_cls
    return do_register


def get_all_registered_operators():
    """Names of every registered operator (with aliases), sorted."""
    return sorted(all_ops())


OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])


_KIND_TYPES = {"int": "int", "float": "float", "bool": "boolean", "str": "string",
               "shape": "Shape(tuple)", "dtype": "string", "floats": "tuple of <float>",
               "any": "string"}


def _type_text(field):
    """MXNet's type text of a parameter: "int, required", "boolean, optional, default=0",
    "{'a', 'b'},optional, default='a'"."""
    if field.choices:
        names = ", ".join(f"'{c}'" for c in sorted(str(c) for c in field.choices
                                                   if c is not None))
        kind = "{" + names + "}"
        sep = ","
    else:
        base = field.kind.replace("_or_none", "")
        kind = _KIND_TYPES.get(base, base)
        if field.kind.endswith("_or_none"):
            kind += " or None"
        sep = ", "
    if field.required:
        return f"{kind}, required"
    d = field.default
    if isinstance(d, bool):
        shown = str(int(d))
    elif isinstance(d, tuple):
        shown = "[" + ",".join(str(v) for v in d) + "]"
    elif isinstance(d, str) or field.choices:
        shown = f"'{d}'"
    else:
        shown = str(d)
    return f"{kind}{sep}optional, default={shown}"


def get_operator_arguments(op_name):
    """The arguments of operator ``op_name`` as MXNet lists them: its inputs
    ('NDArray-or-Symbol', or 'NDArray-or-Symbol[]' for a variadic op), then its parameters
    with their type texts. Returns OperatorArguments(narg, names, types)."""
    from .ops.core.registry import get_op
    from .ops.core.signature import declared_inputs
    op = get_op(op_name)
    if op.key_var_num_args:
        names, types = ["args"], ["NDArray-or-Symbol[]"]
        fields = {k: f for k, f in op.params.fields.items() if k != op.key_var_num_args}
    else:
        names = list(declared_inputs(op))
        types = ["NDArray-or-Symbol"] * len(names)
        fields = op.params.fields
    names += list(fields)
    types += [_type_text(f) for f in fields.values()]
    return OperatorArguments(len(names), names, types)


class PythonOp:
    """MXNet's legacy Python operator interface (deprecated there in favour of CustomOp),
    run here on the Custom machinery: subclass :class:`NumpyOp` or :class:`NDArrayOp`,
    override forward/backward (and infer_shape, list_arguments, list_outputs), and call
    ``get_symbol`` (or the instance) on input symbols.

    Parameters
    ----------
    need_top_grad : bool
        What the default :meth:`need_top_grad` returns (False for loss layers).
    """

    def __init__(self, need_top_grad=True):
        import warnings
        warnings.warn(f"{type(self).__name__} has been deprecated. Please use CustomOp",
                      stacklevel=2)
        self.info_ = None
        self.need_top_grad_ = need_top_grad

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A symbol running this operator on the input symbols."""
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data):
        """Fill ``out_data`` from ``in_data`` (default: copy the first input)."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Fill ``in_grad`` (default, as MXNet: ones)."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """(input shapes, output shapes): by default one output shaped like input 0."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Output names (default ['output'])."""
        return ["output"]

    def list_arguments(self):
        """Argument names (default ['data'])."""
        return ["data"]

    def need_top_grad(self):
        """Whether backward reads the head gradients."""
        return self.need_top_grad_

    def _custom_symbol(self, as_numpy, args, kwargs):
        """A Custom symbol over a CustomOpProp registered for this instance."""
        from . import symbol
        reg_name = f"_legacy_{type(self).__name__}_{id(self)}"
        register(reg_name)(_legacy_prop(self, as_numpy))
        return symbol.Custom(*args, op_type=reg_name, **kwargs)


class NumpyOp(PythonOp):
    """Legacy operator whose forward/backward get NumPy arrays to fill in place."""

    def get_symbol(self, *args, **kwargs):
        return self._custom_symbol(True, args, kwargs)


class NDArrayOp(PythonOp):
    """Legacy operator whose forward/backward get NDArrays to fill in place."""

    def get_symbol(self, *args, **kwargs):
        return self._custom_symbol(False, args, kwargs)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs backward needs (head gradients when need_top_grad, inputs,
        outputs)."""
        return ((list(out_grad) if self.need_top_grad() else []) + list(in_data)
                + list(out_data))


def _legacy_prop(pyop, as_numpy):
    """The CustomOpProp class running the legacy operator ``pyop``."""
    class _Op(CustomOp):
        def _run(self, fn, reqs, outs, **lists):
            if not as_numpy:
                fn(**lists)
                return
            bufs = [np.zeros(o.shape, o.dtype) for o in outs]
            lists = {k: (bufs if v is outs else [x.asnumpy() for x in v])
                     for k, v in lists.items()}
            fn(**lists)
            for dst, req, src in zip(outs, reqs, bufs):
                self.assign(dst, req, src)

        def forward(self, is_train, req, in_data, out_data, aux):
            self._run(pyop.forward, req, out_data, in_data=in_data, out_data=out_data)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self._run(pyop.backward, req, in_grad, out_grad=out_grad, in_data=in_data,
                      out_data=out_data, in_grad=in_grad)

    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=pyop.need_top_grad())

        def list_arguments(self):
            return pyop.list_arguments()

        def list_outputs(self):
            return pyop.list_outputs()

        def infer_shape(self, in_shape):
            res = pyop.infer_shape(in_shape)
            return res[0], res[1], ()

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            if isinstance(pyop, NDArrayOp):
                return pyop.declare_backward_dependency(out_grad, in_data, out_data)
            return super().declare_backward_dependency(out_grad, in_data, out_data)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Op()

    return _Prop
