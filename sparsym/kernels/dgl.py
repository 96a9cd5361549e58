"""Graph kernels on csr adjacency matrices (MXNet 1.9.1's DGL contrib operators).

Storage contract: ``CSR`` inputs in canonical form (sorted column indices per row, no
duplicates); results are new arrays.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..storage import CSR

__all__ = ["edge_id", "edge_id_dense", "adjacency", "neighbor_sample", "induced_subgraph",
           "compact"]


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



# ----------------------------------------------------------------------------- sampling
def _uniform_pick(n, k, rng):
    """Positions of ``k`` of a row's ``n`` neighbours, uniformly, ascending (all if n <= k)."""
    if n <= k:
        return np.arange(n)
    return np.sort(rng.choice(n, k, replace=False))


def _weighted_pick(weights, k, rng):
    """``k`` of the positions of ``weights`` (all if there are at most ``k``), drawn one by
    one without replacement, each in proportion to its weight among those left. The uniform
    draw takes MXNet's 100 levels in [0, 99/101]; once the weights left are all zero, the
    last positions left are taken."""
    n = len(weights)
    if n <= k:
        return np.arange(n)
    w = np.asarray(weights, np.float64).copy()
    taken = np.zeros(n, bool)
    out = np.empty(k, np.int64)
    for t in range(k):
        cs = np.cumsum(np.where(taken, 0.0, w))
        if cs[-1] <= 0:
            j = int(np.flatnonzero(~taken)[-1])
        else:
            xi = cs[-1] * (int(rng.integers(0, 100)) / 101.0)
            j = int(np.searchsorted(cs, xi, side="right"))
        out[t] = j
        taken[j] = True
    return out


def neighbor_sample(graph: CSR, seeds, num_hops, num_neighbor, max_num_vertices, rng,
                    probability=None):
    """MXNet's ``dgl_csr_neighbor_*_sample`` for one seed array.

    A breadth-first walk from the (deduplicated) seeds, in seed order: each vertex reached
    at a level below ``num_hops`` gets ``num_neighbor`` of its out-neighbours sampled
    (uniformly, or in proportion to ``probability[neighbour]``; all of them when it has no
    more), and the sampled neighbours not seen before join the walk one level further,
    until ``max_num_vertices`` vertices are reached. Edges to neighbours that did not fit
    stay in the sampled graph, as in MXNet.

    Returns ``(vertices, sub_csr, layers, sub_prob, truncated)``: ``vertices`` holds the
    reached vertex ids ascending, padded with zeros to ``max_num_vertices``, then their
    count (length ``max_num_vertices + 1``); ``sub_csr`` (``max_num_vertices`` x the
    graph's vertices) has in row ``i`` the sampled edges of ``vertices[i]`` (column: the
    neighbour's id, value: the edge id); ``layers[i]`` is the level at which
    ``vertices[i]`` was reached; ``sub_prob[i]`` is ``probability[vertices[i]]`` (None for
    uniform sampling); ``truncated`` says that vertices were left unexpanded because the
    limit was reached. Non-uniform sampling sorts a row's sampled neighbours and its
    sampled edge ids separately, as MXNet does (the same pairing when edge ids grow with
    the column within a row, as in graphs built edge by edge).
    """
    indptr, indices, data = graph.indptr, graph.indices, graph.data
    seen = {}
    order = []                      # (vertex, level) in discovery order
    for s in np.asarray(seeds, np.int64).tolist():
        if s not in seen:
            seen[s] = 0
            order.append((s, 0))
    rows = {}                       # vertex -> (neighbours, edge ids)
    idx = 0
    while idx < len(order) and len(seen) < max_num_vertices:
        v, level = order[idx]
        idx += 1
        if level >= num_hops:
            continue
        lo, hi = int(indptr[v]), int(indptr[v + 1])
        cols, eids = indices[lo:hi], data[lo:hi]
        if probability is None:
            pick = _uniform_pick(hi - lo, num_neighbor, rng)
            nbrs, edges = cols[pick], eids[pick]
        else:
            pick = _weighted_pick(probability[cols], num_neighbor, rng)
            nbrs, edges = cols[pick], eids[pick]
            if hi - lo > num_neighbor:
                nbrs, edges = np.sort(nbrs), np.sort(edges)
        rows[v] = (nbrs, edges)
        for u in nbrs.tolist():
            if len(seen) >= max_num_vertices:
                break
            if u not in seen:
                seen[u] = level + 1
                order.append((u, level + 1))
    truncated = any(level < num_hops for _, level in order[idx:])
    verts = np.array(sorted(seen), np.int64)
    n = len(verts)
    vertices = np.zeros(max_num_vertices + 1, np.int64)
    vertices[:n] = verts
    vertices[max_num_vertices] = n
    layers = np.zeros(max_num_vertices, np.int64)
    layers[:n] = [seen[v] for v in verts.tolist()]
    counts = np.zeros(max_num_vertices, np.int64)
    parts_c, parts_e = [], []
    for i, v in enumerate(verts.tolist()):
        if v in rows:
            counts[i] = len(rows[v][0])
            parts_c.append(rows[v][0])
            parts_e.append(rows[v][1])
    sub_indptr = np.zeros(max_num_vertices + 1, np.int64)
    np.cumsum(counts, out=sub_indptr[1:])
    cat = (lambda ps, dt: np.concatenate(ps).astype(dt) if ps else np.zeros(0, dt))
    sub = CSR(cat(parts_e, data.dtype), cat(parts_c, np.int64), sub_indptr,
              (max_num_vertices, graph.shape[1]))
    sub_prob = None
    if probability is not None:
        sub_prob = np.zeros(max_num_vertices, np.float32)
        sub_prob[:n] = probability[verts]
    return vertices, sub, layers, sub_prob, truncated


# ----------------------------------------------------------------------------- subgraphs
def induced_subgraph(graph: CSR, vertices) -> tuple:
    """The subgraph induced by the sorted vertex ids ``vertices``: ``(new, original)``, two
    csr matrices of ``len(vertices)`` squared with the same structure (row and column ``i``
    stand for ``vertices[i]``); ``new`` numbers the edges 0, 1, ... in row order,
    ``original`` holds their ids in ``graph``. A vertex listed twice maps to its last place.
    """
    vs = np.asarray(vertices, np.int64)
    n = len(vs)
    where = np.full(graph.shape[1], -1, np.int64)
    where[vs] = np.arange(n)
    lo, hi = graph.indptr[vs], graph.indptr[vs + 1]
    lens = (hi - lo).astype(np.int64)
    pos = np.repeat(lo - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + np.arange(
        int(lens.sum()))
    cols = where[graph.indices[pos]] if len(pos) else np.zeros(0, np.int64)
    keep = cols >= 0
    row_of = np.repeat(np.arange(n), lens)[keep]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(row_of, minlength=n), out=indptr[1:])
    cols = cols[keep]
    new = CSR(np.arange(len(cols), dtype=graph.data.dtype), cols, indptr, (n, n))
    orig = CSR(graph.data[pos[keep]].copy(), cols.copy(), indptr.copy(), (n, n))
    return new, orig


def compact(graph: CSR, vertices, size: int) -> CSR:
    """MXNet's ``dgl_graph_compact`` of one sampled graph: its first ``size`` rows, columns
    renumbered by the place of their vertex id among ``vertices[:size]``, edges numbered
    0, 1, ... in row order. Returns None when a column's vertex is not among them."""
    vs = np.asarray(vertices, np.int64)[:size]
    nnz = int(graph.indptr[size])
    cols = graph.indices[:nnz].astype(np.int64)
    order = np.argsort(vs, kind="stable")
    k = np.searchsorted(vs[order], cols)
    k = np.minimum(k, max(size - 1, 0))
    if nnz and (size == 0 or not np.array_equal(vs[order][k], cols)):
        return None
    new_cols = order[k] if nnz else np.zeros(0, np.int64)
    return CSR(np.arange(nnz, dtype=np.int64), new_cols.astype(np.int64),
               graph.indptr[:size + 1].astype(np.int64).copy(), (size, size))
