"""PythonModule / PythonLossModule: MXNet 1.x's Python loss example pattern runs unchanged."""
import struct

import numpy as np
import pytest

import sparsym as mx


def mc_hinge_grad(scores, labels):
    """Multi-class hinge loss gradient, as in MXNet's example/module/python_loss.py."""
    scores = scores.asnumpy()
    labels = labels.asnumpy().astype(int)
    grad = np.zeros_like(scores)
    for i in range(scores.shape[0]):
        score = 1 + scores[i] - scores[i, labels[i]]
        score[labels[i]] = 0
        grad[i, labels[i]] -= 1
        grad[i, score.argmax()] += 1
    return grad


def test_sequential_mlp_with_python_loss_on_mnistiter(tmp_path):
    n, side = 300, 6
    rs = np.random.RandomState(0)
    lab = rs.randint(0, 3, size=n).astype(np.uint8)
    img = rs.randint(0, 60, size=(n, side, side)).astype(np.uint8)
    for c in range(3):
        img[lab == c, 2 * c:2 * c + 2, :] += 150
    (tmp_path / "img").write_bytes(struct.pack(">IIII", 2051, n, side, side) + img.tobytes())
    (tmp_path / "lab").write_bytes(struct.pack(">II", 2049, n) + lab.tobytes())

    data = mx.symbol.Variable("data")
    fc1 = mx.symbol.FullyConnected(data, name="fc1", num_hidden=32)
    act1 = mx.symbol.Activation(fc1, name="relu1", act_type="relu")
    fc2 = mx.symbol.FullyConnected(act1, name="fc2", num_hidden=3)
    mlp = mx.mod.Module(fc2, context=mx.cpu())
    loss = mx.mod.PythonLossModule(grad_func=mc_hinge_grad)
    mod = mx.mod.SequentialModule().add(mlp).add(loss, take_labels=True, auto_wiring=True)
    train = mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lab"),
                            data_shape=(36,), batch_size=20, shuffle=True, flat=True,
                            silent=True, seed=10)
    mod.fit(train, optimizer_params={"learning_rate": 0.01, "momentum": 0.9}, num_epoch=4)
    assert dict(mod.score(train, "acc"))["accuracy"] > 0.95
    assert loss.output_shapes == [("pyloss_output", (20, 3))]
    assert loss.get_params() == ({}, {})
    assert mod.predict(train).shape == (300, 3)


def test_python_loss_module_api():
    loss = mx.mod.PythonLossModule(name="l2", grad_func=lambda s, y: (s.asnumpy() - 1).tolist())
    assert loss.output_names == ["l2_output"] and loss.data_names == ["data"]
    loss.bind([mx.io.DataDesc("data", (2, 2))], [("softmax_label", (2,))])
    loss.init_params()
    loss.init_optimizer()
    batch = mx.io.DataBatch([mx.nd.array([[1.0, 2.0], [3.0, 4.0]])], [mx.nd.array([0, 1])])
    loss.forward(batch, is_train=True)
    assert loss.get_outputs()[0] is batch.data[0]
    loss.backward()
    grad = loss.get_input_grads()[0]
    assert isinstance(grad, mx.nd.NDArray) and grad.dtype == np.float32
    np.testing.assert_array_equal(grad.asnumpy(), [[0, 1], [2, 3]])
    metric = mx.metric.create("acc")
    loss.update_metric(metric, batch.label)
    assert metric.get() == ("accuracy", 0.5)
    with pytest.raises(mx.MXNetError, match="out_grads should be None"):
        loss.backward(out_grads=[grad])
    with pytest.raises(mx.MXNetError, match="presliced"):
        loss.update_metric(metric, [batch.label], pre_sliced=True)


def test_python_module_subclass_and_errors():
    class Double(mx.mod.PythonModule):
        def _compute_output_shapes(self):
            return [("double_output", self._data_shapes[0][1])]

        def forward(self, data_batch, is_train=None):
            self._out = data_batch.data[0] * 2

        def get_outputs(self, merge_multi_context=True):
            return [self._out]

    m = Double(["x"], None, ["double_output"])
    m.bind([("x", (3,))], for_training=False)
    assert m.output_shapes == [("double_output", (3,))] and m.binded
    m.forward(mx.io.DataBatch([mx.nd.ones((3,))]))
    np.testing.assert_array_equal(m.get_outputs()[0].asnumpy(), [2, 2, 2])
    m.update_metric(mx.metric.create("mse"), None)  # bound without labels: nothing to score
    with pytest.raises(mx.MXNetError, match="data_names"):
        Double(["x"], None, ["o"]).bind([("y", (3,))])
    with pytest.raises(mx.MXNetError, match="write gradient"):
        Double(["x"], None, ["o"]).bind([("x", (3,))], grad_req="add")
    with pytest.raises(NotImplementedError, match="grad_func"):
        loss = mx.mod.PythonLossModule()
        loss.bind([("data", (1, 2))], [("softmax_label", (1,))])
        loss.forward(mx.io.DataBatch([mx.nd.ones((1, 2))], [mx.nd.ones((1,))]))
        loss.backward()
    with pytest.raises(TypeError, match="callable"):
        mx.mod.PythonLossModule(grad_func=3)
