"""DGL graph operators on csr graphs (edge_id, dgl_adjacency), values, types and errors as
MXNet 1.9.1 gives them (probed on the oracle)."""
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
