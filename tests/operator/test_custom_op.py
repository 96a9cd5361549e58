"""mx.operator: CustomOp / CustomOpProp / register, run through nd.Custom, sym.Custom,
executors and Module (dense and sparse storage)."""
import json

import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import assert_almost_equal, check_numeric_gradient, rand_ndarray


class _Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("tc_sqr")
class _SqrProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Sqr()


class _ScaleSplit(mx.operator.CustomOp):
    """Two outputs (a*x, x + b) and an aux counter bumped by every training forward."""

    def __init__(self, scale):
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.scale)
        self.assign(out_data[1], req[1], in_data[0] + in_data[1])
        if is_train:
            aux[0][:] += 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.scale + out_grad[1])
        self.assign(in_grad[1], req[1], out_grad[1])


@mx.operator.register("tc_scale_split")
class _ScaleSplitProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        assert isinstance(scale, str)  # MXNet hands the prop its keyword values as strings
        self.scale = float(scale)

    def list_arguments(self):
        return ["x", "b"]

    def list_outputs(self):
        return ["scaled", "shifted"]

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], [(1,)]

    def create_operator(self, ctx, shapes, dtypes):
        return _ScaleSplit(self.scale)


def test_imperative_custom():
    x = mx.nd.array([1.0, 2.0, 3.0])
    assert mx.nd.Custom(x, op_type="tc_sqr").asnumpy().tolist() == [1.0, 4.0, 9.0]
    a, b = mx.nd.Custom(x, mx.nd.ones((3,)), mx.nd.zeros((1,)), op_type="tc_scale_split",
                        scale=2.5)
    assert a.asnumpy().tolist() == [2.5, 5.0, 7.5] and b.asnumpy().tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(mx.MXNetError, match="Cannot find custom operator nope"):
        mx.nd.Custom(x, op_type="nope")
    with pytest.raises(mx.MXNetError, match="CustomOpProp subclass"):
        mx.operator.register("bad")(object)


def test_symbolic_custom_names_shapes_json_and_gradient():
    s = mx.sym.Custom(mx.sym.var("data"), op_type="tc_scale_split", scale=3, name="ss")
    assert s.list_arguments() == ["data", "ss_b"]
    assert s.list_outputs() == ["ss_scaled", "ss_shifted"]
    assert s.list_auxiliary_states() == ["ss_count"]
    arg, out, aux = s.infer_shape(data=(2, 3), ss_b=(2, 3))
    assert arg == [(2, 3), (2, 3)] and out == [(2, 3), (2, 3)] and aux == [(1,)]
    node = [n for n in json.loads(s.tojson())["nodes"] if n["op"] == "Custom"][0]
    assert node["attrs"] == {"op_type": "tc_scale_split", "scale": "3"}
    s2 = mx.sym.load_json(s.tojson())
    exe = s2.simple_bind(mx.cpu(), data=(2, 3), ss_b=(2, 3))
    exe.arg_dict["data"][:] = np.arange(6.0).reshape(2, 3)
    exe.arg_dict["ss_b"][:] = 1
    outs = exe.forward(is_train=True)
    assert_almost_equal(outs[0], 3 * np.arange(6.0).reshape(2, 3))
    exe.forward(is_train=False)
    assert exe.aux_dict["ss_count"].asnumpy().tolist() == [1.0]
    exe.backward([mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 2])
    assert_almost_equal(exe.grad_dict["data"], np.full((2, 3), 5.0))
    assert_almost_equal(exe.grad_dict["ss_b"], np.full((2, 3), 2.0))
    sq = mx.sym.Custom(mx.sym.var("x"), op_type="tc_sqr")
    check_numeric_gradient(sq, [np.random.rand(3, 4) + 0.5])
    # composed with built-in operators on both sides
    check_numeric_gradient(mx.sym.sum(mx.sym.Custom(mx.sym.tanh(mx.sym.var("x")),
                                                     op_type="tc_sqr") * 2),
                           [np.random.rand(2, 2)], dtype=np.float64)


class _SparseDot(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        assert in_data[0].stype == "csr"
        self.assign(out_data[0], req[0], mx.nd.sparse.dot(in_data[0], in_data[1]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert in_grad[1].stype == "row_sparse"
        self.assign(in_grad[1], req[1],
                    mx.nd.sparse.dot(in_data[0], out_grad[0], transpose_a=True))


@mx.operator.register("tc_sparse_dot")
class _SparseDotProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data", "weight"]

    def infer_shape(self, in_shape):
        return in_shape, [(in_shape[0][0], in_shape[1][1])], []

    def infer_storage_type(self, in_stype):
        return in_stype, ["default"], []

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        return ograd_stype, in_stype, out_stype, ["default", "row_sparse"], aux_stype

    def create_operator(self, ctx, shapes, dtypes):
        return _SparseDot()


def test_custom_storage_types_csr_input_row_sparse_gradient():
    x = rand_ndarray((6, 5), "csr", density=0.4)
    w = mx.nd.array(np.random.rand(5, 3))
    assert_almost_equal(mx.nd.Custom(x, w, op_type="tc_sparse_dot"), x.asnumpy() @ w.asnumpy())
    s = mx.sym.Custom(mx.sym.var("data", stype="csr"), mx.sym.var("weight"),
                      op_type="tc_sparse_dot")
    exe = s.simple_bind(mx.cpu(), data=(6, 5), weight=(5, 3),
                        grad_req={"data": "null", "weight": "write"})
    exe.arg_dict["data"][:] = x
    exe.arg_dict["weight"][:] = w
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((6, 3)))
    g = exe.grad_dict["weight"]
    assert g.stype == "row_sparse"
    assert_almost_equal(g, x.asnumpy().T @ np.ones((6, 3)))
    # the default infer_storage_type refuses sparse inputs, as MXNet's does
    with pytest.raises(mx.MXNetError, match="Default infer_storage_type"):
        mx.nd.Custom(x, op_type="tc_sqr")


class _WeightedSoftmaxCE(mx.operator.CustomOp):
    """MXNet's sparse linear classification example's loss (re-stated)."""

    def __init__(self, positive_cls_weight):
        self.positive_cls_weight = float(positive_cls_weight)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.softmax(in_data[0]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].reshape((-1,))
        w = 1 + (self.positive_cls_weight - 1) * label.reshape((-1, 1))
        self.assign(in_grad[0], req[0], (out_data[0] - mx.nd.one_hot(label, 2)) * w)


@mx.operator.register("tc_weighted_softmax_ce_loss")
class _WeightedSoftmaxCEProp(mx.operator.CustomOpProp):
    def __init__(self, positive_cls_weight):
        super().__init__(False)
        self.positive_cls_weight = positive_cls_weight

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shapes):
        return [in_shapes[0], (in_shapes[0][0],)], [in_shapes[0]], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _WeightedSoftmaxCE(self.positive_cls_weight)


def test_module_trains_sparse_linear_classifier_with_custom_loss():
    n, f = 64, 50
    X = rand_ndarray((n, f), "csr", density=0.2)
    y = (X.asnumpy() @ np.random.randn(f) > 0).astype(np.float32)
    weight = mx.sym.Variable("weight", shape=(f, 2), init=mx.init.Normal(0.01),
                             stype="row_sparse")
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(mx.sym.Variable("data", stype="csr"), weight),
                                mx.sym.Variable("bias", shape=(2,)))
    out = mx.sym.Custom(data=pred, label=mx.sym.Variable("softmax_label"), name="out",
                        op_type="tc_weighted_softmax_ce_loss", positive_cls_weight=2)
    it = mx.io.NDArrayIter(X, y, batch_size=16, last_batch_handle="discard")
    mod = mx.mod.Module(mx.sym.MakeLoss(out), data_names=["data"],
                        label_names=["softmax_label"])
    mod.fit(it, num_epoch=10, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
            eval_metric="acc")
    assert mod.score(it, "acc")[0][1] >= 0.8
    assert mod.get_params()[0]["weight"].stype == "row_sparse"


def test_registry_listing_and_operator_arguments():
    names = mx.operator.get_all_registered_operators()
    assert {"Custom", "FullyConnected", "elemwise_add"} <= set(names)
    args = mx.operator.get_operator_arguments("FullyConnected")
    assert args.narg == len(args.names) and "num_hidden" in args.names
    # MXNet's listing: inputs first, then parameters with their type texts
    args = mx.operator.get_operator_arguments("Activation")
    assert args.names == ["data", "act_type"] and args.types == [
        "NDArray-or-Symbol", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]
    args = mx.operator.get_operator_arguments("Reshape")
    assert args.types[2] == "boolean, optional, default=0"
    assert mx.operator.get_operator_arguments("add_n").types == ["NDArray-or-Symbol[]"]


class _SoftmaxLoss(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(e / e.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        y[np.arange(y.shape[0]), in_data[1].asnumpy().astype(int)] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register("tc_softmax_loss")
class _SoftmaxLossProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _SoftmaxLoss()


def test_loss_op_without_top_grad_trains_in_module():
    # need_top_grad=False makes the op a loss head: Module.backward() needs no out_grads
    rs = np.random.RandomState(0)
    x = rs.rand(40, 5).astype("float32")
    y = (x[:, 0] > 0.5).astype("float32")
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    net = mx.sym.Custom(fc, mx.sym.Variable("softmax_label"), op_type="tc_softmax_loss",
                        name="softmax")
    it = mx.io.NDArrayIter(x, y, batch_size=10)
    mod = mx.mod.Module(net)
    mod.fit(it, num_epoch=15, optimizer_params={"learning_rate": 0.5},
            initializer=mx.init.Zero())
    assert mod.score(it, "acc")[0][1] >= 0.8
    exe = net.simple_bind(mx.cpu(), data=(2, 5))
    exe.forward(is_train=True, data=mx.nd.ones((2, 5)), softmax_label=mx.nd.array([0, 1]))
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), [0.0, 0.0], atol=1e-6)
