"""MXNet 1.9.1's DGL graph operators on csr adjacency matrices: ``_contrib_edge_id`` and
``_contrib_dgl_adjacency`` (kernels/dgl.py). A dense graph (its non-zero entries as the
edges) works too, where MXNet refuses it."""
from __future__ import annotations

import numpy as np

from ...base import DTypeError, ShapeError
from ...kernels import dgl as kd
from ..core import rules
from ..core.grad import no_grad
from ..core.helpers import CSR, DNS
from ..core.params import Params
from ..core.registry import Dispatch, OpDef, register

D, C = "default", "csr"


def _edge_id_shape(attrs, ins, outs):
    g, u, v = ins
    if g is not None and len(g) != 2:
        raise ShapeError(f"edge_id: the graph must be 2-D, got shape {g}")
    if u is not None and v is not None and u[0] != v[0]:
        raise ShapeError(f"edge_id: u and v must have the same length, got {u[0]} and {v[0]}")
    n = u if u is not None else v
    if n is not None:
        rules.set_shape(ins, 1, n)
        rules.set_shape(ins, 2, n)
        rules.set_shape(outs, 0, n, "output")
    return ins, outs


register(OpDef(
    "_contrib_edge_id", params=Params(), inputs=("data", "u", "v"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), lambda a, xs: (kd.edge_id_dense(*xs),)),
              Dispatch((CSR, DNS, DNS), (DNS,), lambda a, xs: (kd.edge_id(*xs),))),
    infer_shape=_edge_id_shape,
    infer_type=lambda a, ins, outs: (ins, [ins[0] if outs[0] is None else outs[0]]),
    gradient=no_grad, aliases=("edge_id",),
    doc="""The id (stored value) of each edge ``(u[i], v[i])`` of a csr graph, -1 where the
    graph has no such edge.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1, 0, 0], [0, 2, 0], [0, 0, 3]]).tostype('csr')
    >>> u = mx.nd.array([0, 0, 1, 1, 2, 2], dtype='int64')
    >>> v = mx.nd.array([0, 1, 1, 2, 0, 2], dtype='int64')
    >>> mx.nd.contrib.edge_id(x, u, v).asnumpy()
    array([ 1., -1.,  2., -1., -1.,  3.], dtype=float32)
    """))


def _adjacency_type(attrs, ins, outs):
    if ins[0] is not None and np.dtype(ins[0]) != np.int64:
        raise DTypeError(f"dgl_adjacency: the graph's edge ids must be int64, got {ins[0]}")
    rules.set_type(ins, 0, np.dtype(np.int64))
    rules.set_type(outs, 0, np.dtype(np.float32), "output")
    return ins, outs


register(OpDef(
    "_contrib_dgl_adjacency", params=Params(), inputs=("data",),
    dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: ((xs[0] != 0).astype(np.float32),)),
              Dispatch((CSR,), (CSR,), lambda a, xs: (kd.adjacency(xs[0]),))),
    infer_shape=rules.same_shape,
    infer_type=_adjacency_type, gradient=no_grad, aliases=("dgl_adjacency",),
    doc="""The adjacency matrix of a csr graph whose values are edge ids (int64): the same
    structure with every stored value 1.0 (float32, csr)."""))
