"""MXNet 1.9.1's DGL graph operators on csr adjacency matrices whose values are edge ids
(kernels/dgl.py): ``_contrib_edge_id``, ``_contrib_dgl_adjacency``, the neighbour samplers
``_contrib_dgl_csr_neighbor_uniform_sample`` / ``..._non_uniform_sample``, the induced
subgraph ``_contrib_dgl_subgraph`` and ``_contrib_dgl_graph_compact``. A dense graph (its
non-zero entries as the edges) works for edge_id and dgl_adjacency, where MXNet refuses it.

The samplers draw from ``mx.random.seed``'s generator, so a seeded run repeats (MXNet seeds
them from the clock)."""
from __future__ import annotations

import logging

import numpy as np

from ... import _rng
from ...base import DTypeError, IndexOutOfRange, MXNetError, ShapeError, StorageError
from ...kernels import dgl as kd
from ...storage import CSR as RawCSR
from ..core import rules
from ..core.grad import no_grad
from ..core.helpers import CSR, DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


class GraphValueError(MXNetError, ValueError):
    """A vertex array the DGL operators cannot use (unsorted, or not matching its graph)."""


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


# ----------------------------------------------------------------------------- sampling
def _stypes_check(op, n_graphs):
    """``check_fallback``: the first ``n_graphs(attrs)`` inputs csr, the rest dense (MXNet
    has no dense form of these ops)."""
    def check(attrs, in_stypes):
        n = n_graphs(attrs)
        for i, st in enumerate(in_stypes):
            want = CSR if i < n else DNS
            if st != want:
                raise StorageError(f"{op}: input {i} must have storage type {want!r}, got "
                                   f"{st!r}")
    return check


_I64 = np.dtype(np.int64)
_log = logging.getLogger("sparsym")


def _sample_check(op, a):
    low = 3 if "non_uniform" in op else 2
    require(a.num_args >= low, op, f"num_args must be at least {low}, got {a.num_args}")
    require(a.num_hops >= 0, op, f"num_hops must be >= 0, got {a.num_hops}")
    require(a.num_neighbor >= 0, op, f"num_neighbor must be >= 0, got {a.num_neighbor}")
    require(a.max_num_vertices >= 1, op,
            f"max_num_vertices must be positive, got {a.max_num_vertices}")


_SAMPLE = Checked(_sample_check,
                  num_args=Field("int", doc="number of inputs (the graph, [probability,] "
                                            "the seed arrays)"),
                  num_hops=Field("int", 1, doc="levels of neighbours to sample"),
                  num_neighbor=Field("int", 2, doc="neighbours sampled per vertex"),
                  max_num_vertices=Field("int", 100, doc="vertices per sampled graph"))


def _sample_shape(fixed):
    def rule(attrs, ins, outs):
        k = attrs.num_args - fixed
        g = ins[0]
        if g is not None and (len(g) != 2 or g[0] != g[1]):
            raise ShapeError(f"dgl neighbor sampling: the graph must be a square 2-D csr "
                             f"matrix, got shape {g}")
        for i, s in enumerate(ins[1:], 1):
            if s is not None and len(s) != 1:
                name = "probability" if i < fixed else f"seed array {i - fixed}"
                raise ShapeError(f"dgl neighbor sampling: the {name} must be 1-D, got "
                                 f"shape {s}")
        m = attrs.max_num_vertices
        for i in range(k):
            rules.set_shape(outs, i, (m + 1,), "output")
            rules.set_shape(outs, k + i, None if g is None else (m, g[1]), "output")
            for j in range(2, 2 + fixed):
                rules.set_shape(outs, j * k + i, (m,), "output")
        return ins, outs
    return rule


def _sample_type(fixed):
    def rule(attrs, ins, outs):
        k = attrs.num_args - fixed
        if ins[0] is not None and np.dtype(ins[0]) != _I64:
            raise DTypeError(f"dgl neighbor sampling: the graph's edge ids must be int64, "
                             f"got {np.dtype(ins[0])}")
        if fixed == 2 and ins[1] is not None and np.dtype(ins[1]) != np.float32:
            raise DTypeError(f"dgl neighbor sampling: the probability must be float32, got "
                             f"{np.dtype(ins[1])}")
        for i in range(k):
            t = ins[fixed + i]
            if t is not None and np.dtype(t) != _I64:
                raise DTypeError(f"dgl neighbor sampling: seed array {i} must be int64, got "
                                 f"{np.dtype(t)}")
            rules.set_type(outs, i, _I64, "output")
            rules.set_type(outs, k + i, _I64, "output")
            rules.set_type(outs, (1 + fixed) * k + i, _I64, "output")
            if fixed == 2:
                rules.set_type(outs, 2 * k + i, np.dtype(np.float32), "output")
        return ins, outs
    return rule


def _sample_kernel(fixed):
    def kernel(a, xs):
        graph = xs[0]
        prob = np.asarray(xs[1], np.float32) if fixed == 2 else None
        n = graph.shape[0]
        if prob is not None and len(prob) < n:
            raise ShapeError(f"dgl_csr_neighbor_non_uniform_sample: the probability needs "
                             f"one entry per vertex ({n}), got {len(prob)}")
        outs = []
        for seeds in xs[fixed:]:
            seeds = np.asarray(seeds)
            if len(seeds) > a.max_num_vertices:
                raise ShapeError(f"dgl neighbor sampling: {len(seeds)} seeds do not fit in "
                                 f"max_num_vertices={a.max_num_vertices}")
            if len(seeds) and (seeds.min() < 0 or seeds.max() >= n):
                raise IndexOutOfRange(f"dgl neighbor sampling: seed vertex "
                                      f"{int(seeds.max() if seeds.max() >= n else seeds.min())}"
                                      f" isn't in a graph of {n} vertices")
            res = kd.neighbor_sample(graph, seeds, a.num_hops, a.num_neighbor,
                                     a.max_num_vertices, _rng.rng(), prob)
            if res[4]:
                _log.warning("The sampling is truncated because we have reached the max "
                             "number of vertices\nPlease use a smaller number of seeds or a "
                             "small neighborhood")
            outs.append(res)
        cols = [[r[0] for r in outs], [r[1] for r in outs]]
        if fixed == 2:
            cols.append([r[3] for r in outs])
        cols.append([r[2] for r in outs])
        return tuple(x for c in cols for x in c)
    return kernel


def _sample_stypes(fixed):
    def stypes(attrs, in_stypes):
        k = attrs.num_args - fixed
        return (DNS,) * k + (CSR,) * k + (DNS,) * (fixed * k)
    return stypes


_SAMPLE_DOC = """Sample a neighbourhood of each seed array from a csr graph whose values are
    edge ids (int64){how}.

    From each seed array's vertices, a breadth-first walk samples ``num_neighbor``
    out-neighbours of every vertex it reaches at a level below ``num_hops`` (all of them
    when it has fewer), until ``max_num_vertices`` vertices are reached (a warning says when
    that cut the walk short). Draws come from ``mx.random.seed``'s generator.

    Parameters
    ----------
    csr_matrix : NDArray (csr, int64), square{prob}
    seed_arrays : NDArrays (int64, 1-D), one sampled graph each
    num_hops : int, default 1
    num_neighbor : int, default 2
    max_num_vertices : int, default 100

    Returns
    -------
    For ``k`` seed arrays, ``{n}k`` arrays, grouped by kind: ``k`` vertex arrays
    (``max_num_vertices + 1``, int64: the reached vertex ids ascending, zero padding, their
    count last), ``k`` sampled graphs (csr, ``max_num_vertices`` x the graph's vertices: row
    ``i`` holds the sampled edges of vertex ``i`` of the vertex array, columns are the
    neighbours' ids, values the edge ids){pout}, ``k`` layer arrays (``max_num_vertices``,
    int64: the level at which each vertex was reached, 0 for seeds).

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> a = mx.nd.sparse.csr_matrix((np.arange(1, 7), [1, 2, 0, 2, 0, 1], [0, 2, 4, 6]),
    ...                             shape=(3, 3), dtype=np.int64)
    >>> seed = mx.nd.array([0], dtype=np.int64)
    >>> out = mx.nd.contrib.dgl_csr_neighbor_{name}_sample({args}seed, num_hops=1,
    ...                                                   num_neighbor=2, max_num_vertices=3)
    >>> out[0].asnumpy()
    array([0, 1, 2, 3])
    """

for _name, _fixed, _ins in (
        ("uniform", 1, lambda a: ("csr_matrix",)
         + tuple(f"seed_array{i}" for i in range(a.num_args - 1))),
        ("non_uniform", 2, lambda a: ("csr_matrix", "probability")
         + tuple(f"seed_array{i}" for i in range(a.num_args - 2)))):
    register(OpDef(
        f"_contrib_dgl_csr_neighbor_{_name}_sample", params=_SAMPLE, inputs=_ins,
        key_var_num_args="num_args",
        num_outputs=lambda a, f=_fixed: (2 + f) * (a.num_args - f),
        dispatch=(Dispatch((CSR, DNS, "..."), (DNS,), _sample_kernel(_fixed),
                           infer_stypes=_sample_stypes(_fixed)),),
        infer_shape=_sample_shape(_fixed), infer_type=_sample_type(_fixed),
        gradient=no_grad, random=True, aliases=(f"dgl_csr_neighbor_{_name}_sample",),
        check_fallback=_stypes_check(f"dgl_csr_neighbor_{_name}_sample", lambda a: 1),
        doc=_SAMPLE_DOC.format(
            how=" uniformly" if _fixed == 1 else
            ", each neighbour in proportion to its vertex's probability",
            prob="" if _fixed == 1 else
            "\n    probability : NDArray (float32, 1-D), one weight per vertex",
            n=3 if _fixed == 1 else 4, name=_name,
            pout="" if _fixed == 1 else
            ", ``k`` probability arrays (``max_num_vertices``, float32: each vertex's "
            "probability)",
            args="a, " if _fixed == 1 else "a, mx.nd.ones((3,)), ")))


# ----------------------------------------------------------------------------- subgraph
def _at_least_two(op, a):
    require(a.num_args >= 2, op, f"num_args must be at least 2, got {a.num_args}")


_SUBGRAPH = Checked(_at_least_two, num_args=Field("int", doc="number of inputs"),
                    return_mapping=Field("bool", doc="also return the original edge ids"))


def _subgraph_shape(attrs, ins, outs):
    if ins[0] is not None and len(ins[0]) != 2:
        raise ShapeError(f"dgl_subgraph: the graph must be 2-D, got shape {ins[0]}")
    k = attrs.num_args - 1
    for i in range(k):
        v = ins[1 + i]
        if v is not None and len(v) != 1:
            raise ShapeError(f"dgl_subgraph: vertex array {i} must be 1-D, got shape {v}")
        for j in range(2 if attrs.return_mapping else 1):
            rules.set_shape(outs, j * k + i, None if v is None else (v[0], v[0]), "output")
    return ins, outs


def _subgraph_type(attrs, ins, outs):
    if ins[0] is not None and np.dtype(ins[0]) != _I64:
        raise DTypeError(f"dgl_subgraph: the graph's edge ids must be int64, got "
                         f"{np.dtype(ins[0])}")
    for i, t in enumerate(ins[1:]):
        if t is not None and np.dtype(t) != _I64:
            raise DTypeError(f"dgl_subgraph: vertex array {i} must be int64, got {np.dtype(t)}")
    return ins, [_I64] * len(outs)


def _subgraph_kernel(a, xs):
    graph = xs[0]
    news, origs = [], []
    for vs in xs[1:]:
        vs = np.asarray(vs, np.int64)
        if np.any(vs[1:] < vs[:-1]):
            raise GraphValueError("dgl_subgraph: The input vertex list has to be sorted")
        if len(vs) and (vs[0] < 0 or vs[-1] >= graph.shape[0]):
            bad = int(vs[-1] if vs[-1] >= graph.shape[0] else vs[0])
            raise IndexOutOfRange(f"dgl_subgraph: Vertex Id {bad} isn't in a graph of "
                                  f"{graph.shape[0]} vertices")
        new, orig = kd.induced_subgraph(graph, vs)
        news.append(new)
        origs.append(orig)
    return tuple(news + (origs if a.return_mapping else []))


register(OpDef(
    "_contrib_dgl_subgraph", params=_SUBGRAPH,
    inputs=lambda a: ("graph",) + tuple(f"varray{i}" for i in range(a.num_args - 1)),
    key_var_num_args="num_args",
    num_outputs=lambda a: (a.num_args - 1) * (2 if a.return_mapping else 1),
    dispatch=(Dispatch((CSR, DNS, "..."), (CSR,), _subgraph_kernel),),
    infer_shape=_subgraph_shape, infer_type=_subgraph_type, gradient=no_grad,
    aliases=("dgl_subgraph",), check_fallback=_stypes_check("dgl_subgraph", lambda a: 1),
    doc="""The subgraph of a csr graph (values: int64 edge ids) induced by each sorted
    array of vertex ids.

    Parameters
    ----------
    graph : NDArray (csr, int64)
    data : NDArrays (int64, 1-D, sorted), the vertex sets
    return_mapping : bool
        Also return, per vertex set, the subgraph with the edges' ids in ``graph``.

    Returns
    -------
    Per vertex set ``v``, a ``len(v)`` x ``len(v)`` csr matrix (int64) whose row and column
    ``i`` stand for ``v[i]`` and whose edges are numbered 0, 1, ... in row order; with
    ``return_mapping``, then the same matrices holding the original edge ids.

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> x = mx.nd.array([[1, 0, 0, 2], [3, 0, 4, 0], [0, 5, 0, 0], [0, 6, 7, 0]],
    ...                 dtype=np.int64).tostype('csr')
    >>> new, old = mx.nd.contrib.dgl_subgraph(x, mx.nd.array([0, 1, 2], dtype=np.int64),
    ...                                       return_mapping=True)
    >>> new.asnumpy()
    array([[0, 0, 0],
           [1, 0, 2],
           [0, 3, 0]])
    >>> old.asnumpy()
    array([[1, 0, 0],
           [3, 0, 4],
           [0, 5, 0]])
    """))


# ----------------------------------------------------------------------------- compact
def _compact_check(op, a):
    _at_least_two(op, a)
    require(a.num_args % 2 == 0, op, f"num_args must be even (graphs, then their vertex "
                                     f"arrays), got {a.num_args}")
    require(len(a.graph_sizes) >= a.num_args // 2, op,
            f"graph_sizes needs one size per graph ({a.num_args // 2}), got {a.graph_sizes}")


_COMPACT = Checked(_compact_check, num_args=Field("int", doc="number of inputs"),
                   return_mapping=Field("bool", doc="also return the mapping matrices"),
                   graph_sizes=Field("shape", doc="the number of vertices of each graph"))


def _compact_shape(attrs, ins, outs):
    k = attrs.num_args // 2
    for i in range(k):
        g, v, size = ins[i], ins[k + i], attrs.graph_sizes[i]
        if g is not None and (len(g) != 2 or g[0] < size or g[1] < size):
            raise ShapeError(f"dgl_graph_compact: graph {i} must be 2-D with at least "
                             f"graph_sizes[{i}]={size} rows and columns, got shape {g}")
        if v is not None and (len(v) != 1 or v[0] < size):
            raise ShapeError(f"dgl_graph_compact: vertex array {i} must be 1-D with at least "
                             f"graph_sizes[{i}]={size} entries, got shape {v}")
        for j in range(2 if attrs.return_mapping else 1):
            rules.set_shape(outs, j * k + i, (size, size), "output")
    return ins, outs


def _compact_type(attrs, ins, outs):
    for i, t in enumerate(ins):
        if t is not None and np.dtype(t) != _I64:
            raise DTypeError(f"dgl_graph_compact: input {i} must be int64, got {np.dtype(t)}")
    return ins, [_I64] * len(outs)


def _compact_kernel(a, xs):
    k = a.num_args // 2
    outs = []
    for i in range(k):
        g, vs, size = xs[i], np.asarray(xs[k + i], np.int64), a.graph_sizes[i]
        if len(vs) != len(g.indptr):
            raise ShapeError(f"dgl_graph_compact: vertex array {i} must have one entry per "
                             f"row of graph {i} plus the count ({len(g.indptr)}), got "
                             f"{len(vs)}")
        if int(vs[-1]) != size:
            raise GraphValueError(f"dgl_graph_compact: vertex array {i} counts {int(vs[-1])} "
                             f"vertices, but graph_sizes[{i}] is {size}")
        out = kd.compact(g, vs, size)
        if out is None:
            raise GraphValueError(f"dgl_graph_compact: graph {i} has an edge to a vertex that is "
                             f"not among its first {size} vertex ids")
        outs.append(out)
    if a.return_mapping:
        # MXNet allocates the mapping outputs and never fills them: empty matrices
        outs += [RawCSR(np.zeros(0, np.int64), np.zeros(0, np.int64),
                        np.zeros(s + 1, np.int64), (s, s)) for s in a.graph_sizes[:k]]
    return tuple(outs)


register(OpDef(
    "_contrib_dgl_graph_compact", params=_COMPACT,
    inputs=lambda a: tuple(f"graph{i}" for i in range(a.num_args // 2))
    + tuple(f"varray{i}" for i in range(a.num_args // 2)),
    key_var_num_args="num_args",
    num_outputs=lambda a: a.num_args // 2 * (2 if a.return_mapping else 1),
    dispatch=(Dispatch(("*", "..."), (CSR,), _compact_kernel,
                       when=lambda a, st: all(s == DNS for s in st[a.num_args // 2:])
                       and all(s == CSR for s in st[:a.num_args // 2])),),
    infer_shape=_compact_shape, infer_type=_compact_type, gradient=no_grad,
    aliases=("dgl_graph_compact",),
    check_fallback=_stypes_check("dgl_graph_compact", lambda a: a.num_args // 2),
    doc="""Compact the graphs the neighbour samplers return: keep each graph's first
    ``graph_sizes[i]`` rows and number its columns by the place of their vertex id in the
    sampler's vertex array.

    Parameters
    ----------
    graph_data : NDArrays
        The sampled graphs (csr, int64), then their vertex arrays (int64, one entry per
        row plus the count last, as the samplers return them).
    graph_sizes : tuple of int
        The number of vertices of each graph (the count at the end of its vertex array).
    return_mapping : bool
        Also return one matrix per graph; MXNet 1.9.1 leaves these empty (no edges).

    Returns
    -------
    Per graph, a ``graph_sizes[i]`` squared csr matrix (int64) whose edges are numbered
    0, 1, ... in row order.

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> a = mx.nd.sparse.csr_matrix((np.arange(1, 7), [1, 2, 0, 2, 0, 1], [0, 2, 4, 6]),
    ...                             shape=(3, 3), dtype=np.int64)
    >>> v, g, layer = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
    ...     a, mx.nd.array([0, 1, 2], dtype=np.int64), num_neighbor=2, max_num_vertices=4)
    >>> mx.nd.contrib.dgl_graph_compact(g, v, graph_sizes=(3,), return_mapping=False
    ...                                 ).asnumpy()
    array([[0, 0, 1],
           [2, 0, 3],
           [4, 5, 0]])
    """))
