"""Record MXNet 1.9.1's deterministic DGL graph results into tests/fixtures/mxnet/dgl.json:
induced subgraphs, compaction, and neighbour sampling where ``num_neighbor`` covers every
degree (the sample is then the whole neighbourhood, so no draw is made)::

    ~/mxref/bin/python tests/ops/make_mxnet_dgl_fixtures.py
"""
import json
import os

import mxnet as mx
import numpy as np


def graph(n, p, seed):
    """A random directed graph without self-loops, edge ids 1.. in row order."""
    rng = np.random.RandomState(seed)
    dense = (rng.rand(n, n) < p) & ~np.eye(n, dtype=bool)
    ids = np.zeros((n, n), np.int64)
    ids[dense] = np.arange(1, dense.sum() + 1)
    return ids


def dump(arr):
    if arr.stype == "csr":
        return {"shape": list(arr.shape), "indptr": arr.indptr.asnumpy().tolist(),
                "indices": arr.indices.asnumpy().tolist(), "data": arr.data.asnumpy().tolist()}
    return {"shape": list(arr.shape), "values": arr.asnumpy().tolist()}


def i64(x):
    return mx.nd.array(x, dtype=np.int64)


G = graph(12, 0.3, 0)
out = {"graph": G.tolist(), "subgraph": [], "sample": [], "compact": []}
g = mx.nd.array(G, dtype=np.int64).tostype("csr")
for sets, mapping in (([[0, 1, 2, 5]], True), ([[3], [0, 4, 7, 8, 11]], False),
                      ([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]], True)):
    res = mx.nd.contrib.dgl_subgraph(g, *[i64(s) for s in sets], return_mapping=mapping)
    res = res if isinstance(res, list) else [res]
    out["subgraph"].append({"sets": sets, "return_mapping": mapping,
                            "out": [dump(r) for r in res]})
# num_neighbor >= every degree: whole neighbourhoods, no randomness; the vertex padding and
# the layer padding are left uninitialised by MXNet, so only the first count entries count
deg = int((G > 0).sum(1).max())
for seeds, hops, maxv in (([[0]], 1, 12), ([[0], [3, 5]], 2, 12), ([[2, 9]], 3, 6),
                          ([[4]], 0, 3)):
    res = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, *[i64(s) for s in seeds], num_hops=hops, num_neighbor=deg, max_num_vertices=maxv)
    prob = mx.nd.array(np.linspace(0.1, 1, 12), dtype=np.float32)
    res2 = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
        g, prob, *[i64(s) for s in seeds], num_hops=hops, num_neighbor=deg,
        max_num_vertices=maxv)
    k = len(seeds)
    comp = mx.nd.contrib.dgl_graph_compact(
        *res[k:2 * k], *res[:k], return_mapping=False,
        graph_sizes=tuple(int(r.asnumpy()[-1]) for r in res[:k]))
    comp = comp if isinstance(comp, list) else [comp]
    out["sample"].append({"seeds": seeds, "num_hops": hops, "num_neighbor": deg,
                          "max_num_vertices": maxv, "uniform": [dump(r) for r in res],
                          "non_uniform": [dump(r) for r in res2],
                          "compact": [dump(c) for c in comp]})
path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet", "dgl.json")
with open(path, "w") as f:
    json.dump(out, f)
