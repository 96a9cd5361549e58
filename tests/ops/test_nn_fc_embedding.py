"""FullyConnected and Embedding: forward vs NumPy, shape inference, gradients, sparse rows."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError, ShapeError
from sparsym.test_utils import (
    assert_almost_equal,
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
)

rng = np.random.RandomState(3)


@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("no_bias", [False, True])
def test_fc_forward_and_gradient(flatten, no_bias):
    x = rng.randn(2, 3, 2)
    n_in = 6 if flatten else 2
    w = rng.randn(4, n_in)
    b = rng.randn(4)
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=4, flatten=flatten,
                               no_bias=no_bias, name="fc")
    loc = {"x": x, "fc_weight": w}
    if not no_bias:
        loc["fc_bias"] = b
    x2 = x.reshape(2, -1) if flatten else x
    want = x2 @ w.T + (0 if no_bias else b)
    check_symbolic_forward(fc, loc, [want], rtol=1e-4, atol=1e-5)
    check_numeric_gradient(fc, loc, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_fc_infers_weight_and_batch():
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=5, name="fc")
    args, outs, _ = fc.infer_shape(x=(7, 2, 3))
    assert args == [(7, 2, 3), (5, 6), (5,)]
    assert outs == [(7, 5)]
    # partial: batch unknown on the data, known from the consumer
    y = fc + mx.sym.var("z")
    args, outs, _ = y.infer_shape_partial(x=(0, 6), z=(4, 5))
    assert args[0] == (4, 6) and outs == [(4, 5)]
    nf = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=5, flatten=False, name="nf")
    assert nf.infer_shape(x=(2, 3, 4))[1] == [(2, 3, 5)]


def test_fc_bad_params_and_shapes():
    with pytest.raises(ParamError):
        mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=0)
    with pytest.raises(ParamError):
        mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, bogus=1)
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc")
    with pytest.raises(ShapeError, match="fc"):
        fc.infer_shape(x=(3, 4), fc_weight=(2, 5))


def test_fc_row_sparse_weight_forward():
    x = rng.randn(3, 5).astype(np.float32)
    w = np.zeros((4, 5), np.float32)
    w[[0, 2]] = rng.randn(2, 5)
    b = rng.randn(4).astype(np.float32)
    wr = mx.nd.array(w).tostype("row_sparse")
    out = mx.nd.FullyConnected(mx.nd.array(x), wr, mx.nd.array(b), num_hidden=4)
    assert out.stype == "default"
    assert_almost_equal(out, x @ w.T + b, rtol=1e-5, atol=1e-6)
    out2 = mx.nd.sparse.FullyConnected(mx.nd.array(x), wr, num_hidden=4, no_bias=True)
    assert_almost_equal(out2, x @ w.T, rtol=1e-5, atol=1e-6)
    # symbolic: no fallback for the row_sparse weight, dense gradient for data
    sym = mx.sym.FullyConnected(mx.sym.var("x"), mx.sym.var("w", stype="row_sparse"),
                                num_hidden=4, no_bias=True)
    with mx.test_utils.environment("SPARSYM_STORAGE_FALLBACK", "raise"):
        exe = sym.simple_bind(mx.cpu(), x=(3, 5), w=(4, 5), grad_req={"x": "write", "w": "null"})
    exe.arg_dict["x"][:] = x
    exe.arg_dict["w"][:] = wr
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((3, 4)))
    assert_almost_equal(exe.grad_dict["x"], np.ones((3, 4)) @ w, rtol=1e-5, atol=1e-6)


def test_embedding_forward_clip_and_gradients():
    w = rng.randn(5, 3)
    ids = np.array([[0, 4], [4, 7]], dtype=np.float64)   # 7 is clipped to 4
    emb = mx.sym.Embedding(mx.sym.var("data"), input_dim=5, output_dim=3, name="emb")
    want = w[np.clip(ids.astype(int), 0, 4)]
    check_symbolic_forward(emb, {"data": ids, "emb_weight": w}, [want])
    assert emb.infer_shape(data=(2, 7))[0][1] == (5, 3)
    check_numeric_gradient(emb, {"data": ids, "emb_weight": w}, grad_nodes=["emb_weight"],
                           rtol=1e-5, atol=1e-7, dtype=np.float64)
    og = rng.randn(2, 2, 3)
    g = np.zeros((5, 3))
    np.add.at(g, np.clip(ids.astype(int), 0, 4).ravel(), og.reshape(-1, 3))
    check_symbolic_backward(emb, {"data": ids, "emb_weight": w}, [og],
                            {"emb_weight": g}, grad_req={"data": "null", "emb_weight": "write"})


@pytest.mark.parametrize("op", ["Embedding", "_contrib_SparseEmbedding"])
def test_embedding_sparse_grad_is_row_sparse(op):
    kw = {"sparse_grad": True} if op == "Embedding" else {}
    emb = getattr(mx.sym, op)(mx.sym.var("data"), input_dim=6, output_dim=2, name="emb", **kw)
    exe = emb.simple_bind(mx.cpu(), data=(3,), grad_req={"data": "null", "emb_weight": "write"})
    assert exe.grad_dict["emb_weight"].stype == "row_sparse"
    w = rng.randn(6, 2).astype(np.float32)
    exe.arg_dict["emb_weight"][:] = w
    exe.arg_dict["data"][:] = np.array([4, 1, 4])
    exe.forward(is_train=True)
    assert_almost_equal(exe.outputs[0], w[[4, 1, 4]])
    og = np.arange(6, dtype=np.float32).reshape(3, 2)
    exe.backward(mx.nd.array(og))
    g = exe.grad_dict["emb_weight"]
    assert g.stype == "row_sparse"
    assert g.indices.asnumpy().tolist() == [1, 4]
    assert_almost_equal(g.data, np.array([og[1], og[0] + og[2]]))


def test_embedding_row_sparse_weight_reads_missing_rows_as_zero():
    w = np.zeros((6, 2), np.float32)
    w[[1, 3]] = [[1, 2], [3, 4]]
    out = mx.nd.Embedding(mx.nd.array([1, 2, 3]), mx.nd.array(w).tostype("row_sparse"),
                          input_dim=6, output_dim=2)
    assert out.asnumpy().tolist() == [[1, 2], [0, 0], [3, 4]]


def test_embedding_bad_params():
    with pytest.raises(ParamError):
        mx.sym.Embedding(mx.sym.var("d"), input_dim=0, output_dim=2)
    with pytest.raises(ParamError):
        mx.sym.Embedding(mx.sym.var("d"), input_dim=3, output_dim=2, dtype="complex")


def test_sparse_grad_numeric_check_with_grad_stype_dict():
    w = rng.randn(6, 2)
    ids = np.array([[1, 3], [3, 5]], dtype=np.float64)
    emb = mx.sym.Embedding(mx.sym.var("data"), input_dim=6, output_dim=2, sparse_grad=True,
                           name="emb")
    loc = {"data": ids, "emb_weight": w}
    check_numeric_gradient(emb, loc, grad_nodes=["emb_weight"],
                           grad_stype_dict={"emb_weight": "row_sparse"}, rtol=1e-5, atol=1e-7,
                           dtype=np.float64)
    og = np.ones((2, 2, 2))
    g = check_symbolic_backward(emb, loc, [og], {"emb_weight": np.array(
        [[0, 0], [1, 1], [0, 0], [2, 2], [0, 0], [1, 1.]])},
        grad_req={"data": "null", "emb_weight": "write"},
        grad_stypes={"emb_weight": "row_sparse"})
    assert g["emb_weight"].shape == (6, 2)
    # csr data . row_sparse weight through FullyConnected-free dot keeps the rsp gradient
    x = mx.sym.var("x", stype="csr")
    d = mx.sym.dot(x, mx.sym.var("w"))
    exe = d.simple_bind(mx.cpu(), x=(3, 4), w=(4, 2), grad_req={"x": "null", "w": "write"})
    assert exe.grad_dict["w"].stype == "row_sparse"


@pytest.mark.parametrize("grad_req", [{"x": "write", "fc_weight": "null", "fc_bias": "null"},
                                      {"x": "null", "fc_weight": "null", "fc_bias": "write"},
                                      {"x": "write", "fc_weight": "write", "fc_bias": "null"}])
def test_fc_backward_computes_only_the_gradients_read(grad_req):
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc")
    exe = fc.simple_bind(mx.cpu(), x=(5, 4), grad_req=grad_req)
    step, = [s for s in exe._plan.backward_steps if s.op_name == "_backward_FullyConnected"]
    names = ("x", "fc_weight", "fc_bias")
    assert step.attrs["__unused__"] == tuple(i for i, n in enumerate(names)
                                             if grad_req[n] == "null")
    x, w, b = rng.randn(5, 4), rng.randn(3, 4), rng.randn(3)
    g = rng.randn(5, 3)
    for n, v in zip(names, (x, w, b)):
        exe.arg_dict[n][:] = v
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(g))
    want = {"x": g @ w, "fc_weight": g.T @ x, "fc_bias": g.sum(0)}
    for n in names:
        if grad_req[n] != "null":
            np.testing.assert_allclose(exe.grad_dict[n].asnumpy(), want[n], rtol=1e-4,
                                       atol=1e-5)
    # the kernel leaves out what nothing reads (each a GEMM as large as the forward)
    outs = step.kernel(step.attrs, [np.asarray(a, np.float32) for a in (g, x, w)])
    assert [o is None for o in outs] == [grad_req[n] == "null" for n in names]
