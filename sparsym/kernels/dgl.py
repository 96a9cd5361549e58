"""Graph kernels on csr adjacency matrices (MXNet 1.9.1's DGL contrib operators).

Storage contract: ``CSR`` inputs in canonical form (sorted column indices per row, no
duplicates); results are new arrays.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..storage import CSR

__all__ = ["edge_id", "edge_id_dense", "adjacency"]


@njit(cache=True)
def _edge_id(indptr, indices, data, u, v, out):
    n = indptr.shape[0] - 1
    for i in range(u.shape[0]):
        r, c = u[i], v[i]
        out[i] = -1
        if r < 0 or r >= n:
            continue
        lo, hi = indptr[r], indptr[r + 1]
        k = lo + np.searchsorted(indices[lo:hi], c)
        if k < hi and indices[k] == c:
            out[i] = data[k]


def edge_id(graph: CSR, u, v) -> np.ndarray:
    """``graph[u[i], v[i]]`` where that edge is stored, else -1 (the graph's dtype)."""
    out = np.empty(len(u), np.float64)
    _edge_id(graph.indptr, graph.indices, graph.data.astype(np.float64),
             np.asarray(u).astype(np.int64), np.asarray(v).astype(np.int64), out)
    return out.astype(graph.data.dtype)


def edge_id_dense(graph: np.ndarray, u, v) -> np.ndarray:
    """:func:`edge_id` of a dense graph: its non-zero entries are the edges."""
    u, v = np.asarray(u).astype(np.int64), np.asarray(v).astype(np.int64)
    n, m = graph.shape
    ok = (u >= 0) & (u < n) & (v >= 0) & (v < m)
    out = np.full(len(u), -1, graph.dtype)
    vals = graph[u[ok], v[ok]]
    out[ok] = np.where(vals != 0, vals, -1)
    return out


def adjacency(graph: CSR) -> CSR:
    """The graph's structure with every stored edge 1.0 (float32)."""
    return CSR(np.ones(len(graph.indices), np.float32), graph.indices.copy(),
               graph.indptr.copy(), graph.shape)
