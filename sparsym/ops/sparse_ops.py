"""Sparse-specific operators: retain, square_sum, getnnz."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..kernels import rsp as krsp
from . import rules
from .elemwise import bw
from .params import Field, Params
from .registry import Dispatch, OpDef, register

D, R, C = "default", "row_sparse", "csr"


def _retain_shape(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_shape(outs, 0, ins[0], "output")
    return ins, outs


def _retain_grad(node, og):
    return [bw("_backward_sparse_retain", [og[0], node.inputs[1]], node, "backward"), None]


register(OpDef(
    "_sparse_retain", inputs=("data", "indices"),
    dispatch=(Dispatch((R, D), (R,), lambda a, xs: (krsp.retain(
        xs[0], np.asarray(xs[1]).astype(np.int64).ravel()),)),),
    infer_shape=_retain_shape, infer_type=rules.first_input_type, gradient=_retain_grad,
    aliases=("retain",),
    doc="Keep only the rows of a row_sparse array listed in ``indices``."))
register(OpDef(
    "_backward_sparse_retain", inputs=("ograd", "indices"),
    dispatch=(Dispatch((D, D), (R,), lambda a, xs: (krsp.retain(
        st.dense_to_rsp_all(xs[0]) if hasattr(st, "dense_to_rsp_all") else
        st.RSP(xs[0], np.arange(xs[0].shape[0], dtype=np.int64), xs[0].shape),
        np.asarray(xs[1]).astype(np.int64).ravel()),)),),
    infer_shape=rules.first_input_shape, infer_type=rules.first_input_type))
