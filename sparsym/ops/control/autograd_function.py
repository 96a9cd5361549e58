"""Graph nodes for ``autograd.Function``: user Python code as the backward of a recorded call.

The forward ran imperatively (the tape holds its outputs); the node only records the call
so that the gradient pass can place ``_backward_CustomFunction``, whose kernel hands the
head gradients to the Function's ``backward``. ``function`` is the Function object; it
must offer ``_backward_raw(ograds) -> raw gradients`` (one per forward input); with a true
``skips_unused`` attribute it is called as ``_backward_raw(ograds, unused)`` when the
executor reads none of the gradients at positions ``unused``, which may then be None.
"""
from __future__ import annotations

from ...base import MXNetError
from ..core import rules
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_P = Params(num_inputs=Field("int", doc="number of forward inputs"),
            num_outputs=Field("int", doc="number of forward outputs"),
            function=Field("any", None, doc="the autograd.Function object"),
            out_shapes=Field("any", (), doc="shapes of the forward outputs"),
            out_dtypes=Field("any", (), doc="dtypes of the forward outputs"))


def _inputs(attrs):
    return tuple(f"data{i}" for i in range(attrs.num_inputs))


def _fwd_shape(attrs, ins, outs):
    for i, s in enumerate(attrs.out_shapes):
        rules.set_shape(outs, i, s, "output")
    return ins, outs


def _fwd_type(attrs, ins, outs):
    import numpy as np
    for i, t in enumerate(attrs.out_dtypes):
        rules.set_type(outs, i, np.dtype(t), "output")
    return ins, outs


def _fwd_kernel(attrs, xs):
    raise MXNetError("autograd.Function runs imperatively only: its forward cannot be "
                     "executed from a graph (get_symbol / bind)")


def _grad(node, og):
    from ..core.grad import bw_node
    n_in = node.params.num_inputs
    b = bw_node("_backward_CustomFunction", list(og) + list(node.inputs), node, "backward",
                num_inputs=n_in, num_outputs=node.params.num_outputs,
                function=node.params.function)
    return [(b, i) for i in range(n_in)]


def _bwd_inputs(attrs):
    return tuple(f"ograd{i}" for i in range(attrs.num_outputs)) + _inputs(attrs)


def _bwd_shape(attrs, ins, outs):
    return rules.grads_like_inputs(attrs.num_outputs)(attrs, ins, outs)


def _bwd_type(attrs, ins, outs):
    return rules.grads_like_inputs_type(attrs.num_outputs)(attrs, ins, outs)


def _bwd_kernel(attrs, xs):
    fn = attrs.function
    ograds = list(xs[:attrs.num_outputs])
    unused = attrs.get("__unused__", ())
    if unused and getattr(fn, "skips_unused", False):
        # the executor reads none of these gradients (an input without grad_req, such as a
        # hybridized block's data): the function may leave them out (None)
        return tuple(fn._backward_raw(ograds, unused))
    return tuple(fn._backward_raw(ograds))


CUSTOM_FUNCTION = register(OpDef(
    "_CustomFunction", params=_P, inputs=_inputs, num_outputs=lambda a: a.num_outputs,
    output_names=lambda a: tuple(f"output{i}" for i in range(a.num_outputs)),
    dispatch=(Dispatch(("default", "..."), ("default",), _fwd_kernel),),
    infer_shape=_fwd_shape, infer_type=_fwd_type, gradient=_grad,
    doc="A recorded autograd.Function call (imperative only)."))

def _bwd_stypes(attrs, in_stypes):
    """Gradient stypes: the function's own (a hybridized block's row_sparse gradient of a
    sparse_grad Embedding stays row_sparse), dense by default."""
    own = getattr(attrs.function, "grad_stypes", None)
    return own() if own is not None else ("default",) * attrs.num_inputs


register(OpDef(
    "_backward_CustomFunction", params=_P, inputs=_bwd_inputs,
    num_outputs=lambda a: a.num_inputs,
    output_names=lambda a: tuple(f"output{i}" for i in range(a.num_inputs)),
    dispatch=(Dispatch(("default", "..."), ("default",), _bwd_kernel,
                       infer_stypes=_bwd_stypes),),
    infer_shape=_bwd_shape, infer_type=_bwd_type, skips_unused_outputs=True,
    doc="Gradient of a recorded autograd.Function: calls its backward."))
