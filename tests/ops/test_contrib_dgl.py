"""DGL graph operators on csr graphs (edge_id, dgl_adjacency, sampling, subgraph, compact),
values, types and errors as
MXNet 1.9.1 gives them (probed on the oracle)."""
import json
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx


def test_edge_id_and_adjacency():
    x = mx.nd.array([[1, 0, 0], [0, 2, 0], [0, 0, 3]]).tostype("csr")
    u = mx.nd.array([0, 0, 1, 1, 2, 2], dtype="int64")
    v = mx.nd.array([0, 1, 1, 2, 0, 2], dtype="int64")
    out = mx.nd.contrib.edge_id(x, u, v)
    assert out.stype == "default" and out.dtype == np.float32
    assert out.asnumpy().tolist() == [1, -1, 2, -1, -1, 3]
    assert mx.nd.contrib.edge_id(x, mx.nd.array([0, 2]), mx.nd.array([0, 2])).asnumpy(
    ).tolist() == [1, 3]
    g = mx.nd.array([[0, 5, 0], [7, 0, 9], [0, 0, 0]], dtype="int64").tostype("csr")
    adj = mx.nd.contrib.dgl_adjacency(g)
    assert adj.stype == "csr" and adj.dtype == np.float32
    assert adj.indices.asnumpy().tolist() == [1, 0, 2] and adj.data.asnumpy().tolist() == [1] * 3
    s = mx.sym.contrib.edge_id(mx.sym.var("a", stype="csr"), mx.sym.var("u"), mx.sym.var("v"))
    assert s.infer_shape(a=(3, 3), u=(6,), v=(6,))[1] == [(6,)]
    assert s.infer_type(a=np.float32, u=np.int64, v=np.int64)[1] == [np.float32]


def test_dense_graphs_and_bad_inputs():
    x = np.eye(3, dtype=np.float32) * 4
    u = mx.nd.array([0, 1], dtype="int64")
    # (MXNet refuses dense graphs; here their non-zero entries are the edges)
    assert mx.nd.contrib.edge_id(mx.nd.array(x), u, mx.nd.array([0, 2])).asnumpy().tolist() \
        == [4, -1]
    with pytest.raises(mx.MXNetError, match="must be int64"):
        mx.nd.contrib.dgl_adjacency(mx.nd.array(x).tostype("csr"))
    with pytest.raises(mx.MXNetError, match="same length"):
        mx.nd.contrib.edge_id(mx.nd.array(x).tostype("csr"), u, mx.nd.array([1.0]))


# ----------------------------------------------------------------------------- sampling,
# subgraphs and compaction: MXNet 1.9.1's results on deterministic cases are recorded in
# tests/fixtures/mxnet/dgl.json (tests/ops/make_mxnet_dgl_fixtures.py)
FIX = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "dgl.json")
                 .read_text())
I64 = np.int64


def _i64(x):
    return mx.nd.array(x, dtype=I64)


def _same(arr, want, count=None):
    assert list(arr.shape) == want["shape"]
    if "values" in want:
        got, exp = arr.asnumpy().tolist(), want["values"]
        if count is not None:   # MXNet leaves the padding uninitialised
            got, exp = got[:count], exp[:count]
        assert got == exp
    else:
        assert arr.stype == "csr" and arr.dtype == I64
        assert arr.indptr.asnumpy().tolist() == want["indptr"]
        assert arr.indices.asnumpy().tolist() == want["indices"]
        assert arr.data.asnumpy().tolist() == want["data"]


def _graph():
    return mx.nd.array(np.array(FIX["graph"]), dtype=I64).tostype("csr")


def test_subgraph_matches_mxnet():
    g = _graph()
    for case in FIX["subgraph"]:
        res = mx.nd.contrib.dgl_subgraph(g, *[_i64(s) for s in case["sets"]],
                                         return_mapping=case["return_mapping"])
        res = res if isinstance(res, list) else [res]
        assert len(res) == len(case["out"])
        for r, w in zip(res, case["out"]):
            _same(r, w)


def test_whole_neighbourhood_sampling_and_compact_match_mxnet():
    g = _graph()
    prob = mx.nd.array(np.linspace(0.1, 1, 12), dtype=np.float32)
    for case in FIX["sample"]:
        seeds = [_i64(s) for s in case["seeds"]]
        kw = dict(num_hops=case["num_hops"], num_neighbor=case["num_neighbor"],
                  max_num_vertices=case["max_num_vertices"])
        k = len(seeds)
        uni = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g, *seeds, **kw)
        non = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(g, prob, *seeds, **kw)
        assert len(uni) == 3 * k and len(non) == 4 * k
        for got, want, kinds in ((uni, case["uniform"], "vcl"), (non, case["non_uniform"],
                                                                  "vcpl")):
            for j, kind in enumerate(kinds):
                for i in range(k):
                    n = int(got[i].asnumpy()[-1])
                    arr, w = got[j * k + i], want[j * k + i]
                    if kind == "v":
                        _same(arr, w, n)
                        assert arr.asnumpy()[-1] == w["values"][-1]
                    else:
                        _same(arr, w, n if kind in "pl" else None)
        sizes = tuple(int(v.asnumpy()[-1]) for v in uni[:k])
        comp = mx.nd.contrib.dgl_graph_compact(*uni[k:2 * k], *uni[:k], graph_sizes=sizes,
                                               return_mapping=False)
        comp = comp if isinstance(comp, list) else [comp]
        for c, w in zip(comp, case["compact"]):
            _same(c, w)


def _random_graph(n, p, seed):
    rng = np.random.RandomState(seed)
    dense = (rng.rand(n, n) < p) & ~np.eye(n, dtype=bool)
    ids = np.zeros((n, n), I64)
    ids[dense] = np.arange(1, dense.sum() + 1)
    return ids


@pytest.mark.parametrize("uniform", [True, False])
def test_sampled_edges_exist_and_counts_hold(uniform):
    G = _random_graph(40, 0.25, 1)
    g = mx.nd.array(G, dtype=I64).tostype("csr")
    prob = mx.nd.array(np.random.RandomState(2).rand(40), dtype=np.float32)
    seeds = _i64([3, 17, 3, 30])

    def run():
        args = (g, seeds) if uniform else (g, prob, seeds)
        f = (mx.nd.contrib.dgl_csr_neighbor_uniform_sample if uniform
             else mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample)
        return [o.asnumpy() if o.stype == "default" else o for o in
                f(*args, num_hops=2, num_neighbor=3, max_num_vertices=25)]

    mx.random.seed(7)
    first = run()
    verts, sub, layers = first[0], first[1], first[-1]
    n = int(verts[-1])
    assert verts.shape == (26,) and layers.shape == (25,) and sub.shape == (25, 40)
    vs = verts[:n]
    assert (np.diff(vs) > 0).all() and set([3, 17, 30]) <= set(vs.tolist())
    assert (verts[n:-1] == 0).all() and (layers[n:] == 0).all()
    assert layers[:n][np.isin(vs, [3, 17, 30])].tolist() == [0, 0, 0]
    assert set(layers[:n].tolist()) <= {0, 1, 2}
    ip, ix, d = (sub.indptr.asnumpy(), sub.indices.asnumpy(), sub.data.asnumpy())
    for i in range(25):
        row = slice(ip[i], ip[i + 1])
        if i >= n:
            assert ip[i + 1] == ip[i]
            continue
        deg = int((G[vs[i]] > 0).sum())
        assert ip[i + 1] - ip[i] in (0, min(3, deg))   # unexpanded, or min(k, degree)
        for c, e in zip(ix[row], d[row]):
            assert G[vs[i], c] == e                       # every sampled edge exists
        if ip[i + 1] > ip[i] and layers[i] >= 2:
            raise AssertionError("a vertex at the last level was expanded")
    if not uniform:
        assert np.allclose(first[2][:n], prob.asnumpy()[vs])
    mx.random.seed(7)
    again = run()
    assert np.array_equal(again[0], verts)
    assert np.array_equal(again[1].data.asnumpy(), d)


def test_non_uniform_follows_the_probability():
    # vertex 0 links to 1..4; only 1 and 2 have weight: a pick of two is always {1, 2}
    G = np.zeros((5, 5), I64)
    G[0, 1:] = [1, 2, 3, 4]
    g = mx.nd.array(G, dtype=I64).tostype("csr")
    prob = mx.nd.array([0, 1, 1, 0, 0], dtype=np.float32)
    for _ in range(5):
        v, sub, p, layer = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
            g, prob, _i64([0]), num_neighbor=2, max_num_vertices=5)
        assert v.asnumpy().tolist() == [0, 1, 2, 0, 0, 3]
        assert sub.indices.asnumpy().tolist() == [1, 2]
        assert p.asnumpy()[:3].tolist() == [0, 1, 1]
    # weight 9 against 1: one pick of one lands on the heavy vertex about 9 times in 10
    prob = mx.nd.array([0, 9, 1, 0, 0], dtype=np.float32)
    mx.random.seed(0)
    heavy = sum(mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
        g, prob, _i64([0]), num_neighbor=1, max_num_vertices=5)[1].indices.asnumpy()[0] == 1
        for _ in range(300))
    assert 240 < heavy < 295


def test_uniform_sample_is_uniform():
    G = np.zeros((7, 7), I64)
    G[0, 1:] = np.arange(1, 7)
    g = mx.nd.array(G, dtype=I64).tostype("csr")
    mx.random.seed(3)
    counts = np.zeros(7)
    for _ in range(300):
        sub = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
            g, _i64([0]), num_neighbor=2, max_num_vertices=7)[1]
        cols = sub.indices.asnumpy()
        assert len(cols) == 2 and cols[0] < cols[1]
        counts[cols] += 1
    assert counts[0] == 0 and np.all(np.abs(counts[1:] - 100) < 35)


def test_compact_mapping_and_symbols():
    G = np.array(FIX["graph"])
    g = _graph()
    v, sub, layer = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, _i64([0, 1, 2]), num_neighbor=20, max_num_vertices=12)
    n = int(v.asnumpy()[-1])
    c, m = mx.nd.contrib.dgl_graph_compact(sub, v, graph_sizes=(n,), return_mapping=True)
    assert c.shape == (n, n) and m.shape == (n, n) and m.data.shape == (0,)
    vs = v.asnumpy()[:n]
    ip, ix = c.indptr.asnumpy(), c.indices.asnumpy()
    for i in range(n):
        for col in ix[ip[i]:ip[i + 1]]:
            assert G[vs[i], vs[col]] > 0
    assert c.data.asnumpy().tolist() == list(range(len(ix)))
    s = mx.sym.contrib.dgl_subgraph(mx.sym.var("g", stype="csr"), mx.sym.var("v"),
                                    return_mapping=True)
    assert s.infer_shape(g=(12, 12), v=(4,))[1] == [(4, 4), (4, 4)]
    s = mx.sym.contrib.dgl_csr_neighbor_uniform_sample(
        mx.sym.var("g", stype="csr"), mx.sym.var("a"), mx.sym.var("b"), max_num_vertices=6)
    assert s.infer_shape(g=(12, 12), a=(2,), b=(3,))[1] == [(7,), (7,), (6, 12), (6, 12),
                                                            (6,), (6,)]
    assert s.infer_type(g=I64, a=I64, b=I64)[1] == [I64] * 6


def test_dgl_bad_inputs():
    g = _graph()
    with pytest.raises(mx.MXNetError, match="has to be sorted"):
        mx.nd.contrib.dgl_subgraph(g, _i64([2, 1]), return_mapping=False)
    with pytest.raises(IndexError, match="isn't in a graph of 12 vertices"):
        mx.nd.contrib.dgl_subgraph(g, _i64([2, 12]), return_mapping=False)
    with pytest.raises(TypeError, match="must be int64"):
        mx.nd.contrib.dgl_subgraph(g, mx.nd.array([1, 2]), return_mapping=False)
    with pytest.raises(mx.MXNetError, match="storage type 'csr'"):
        mx.nd.contrib.dgl_subgraph(g.tostype("default"), _i64([1]), return_mapping=False)
    with pytest.raises(TypeError, match="edge ids must be int64"):
        mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g.astype("float32"), _i64([1]))
    with pytest.raises(ValueError, match="do not fit"):
        mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g, _i64([1, 2, 3]), max_num_vertices=2)
    with pytest.raises(IndexError):
        mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g, _i64([40]))
    with pytest.raises(ValueError, match="square"):
        mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
            mx.nd.zeros((3, 4), dtype=I64).tostype("csr"), _i64([1]))
    v, sub, _ = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g, _i64([0]), num_neighbor=20,
                                                              max_num_vertices=12)
    n = int(v.asnumpy()[-1])
    with pytest.raises(ValueError, match="counts"):
        mx.nd.contrib.dgl_graph_compact(sub, v, graph_sizes=(n - 1,), return_mapping=False)
    with pytest.raises(mx.MXNetError, match="graph_sizes"):
        mx.nd.contrib.dgl_graph_compact(sub, v, graph_sizes=(), return_mapping=False)
