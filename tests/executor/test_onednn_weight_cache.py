"""oneDNN keeps a convolution weight's blocked copy while the weight is unchanged: every way
of writing a weight (Trainer and optimizer updates, set_data, ``[:] =``, in-place operators,
``out=``, partial assignment, copyto, bound executor arrays) makes the next forward use the
new values."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import gluon, nd
from sparsym.kernels import onednn as dnn
from sparsym.kernels.onednn import core

pytestmark = pytest.mark.skipif(not dnn.available(), reason="oneDNN wheel not installed")


def _net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(16, 3, padding=1, in_channels=16, activation="relu"),
            gluon.nn.Conv2D(32, 3, padding=1, in_channels=16))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def _reference(net, x):
    """The same net on fresh copies of its parameters, on the Numba path."""
    w1, b1, w2, b2 = [p.data().copy() for p in net.collect_params().values()]
    with dnn.use(False):
        y = nd.relu(nd.Convolution(x, w1, b1, kernel=(3, 3), pad=(1, 1), num_filter=16))
        return nd.Convolution(y, w2, b2, kernel=(3, 3), pad=(1, 1), num_filter=32).asnumpy()


def _check(net, x):
    np.testing.assert_allclose(net(x).asnumpy(), _reference(net, x), rtol=1e-4, atol=1e-4)


def _weight(net, i=0):
    return list(net.collect_params().values())[2 * i].data()


WRITES = {
    "set_data": lambda w: w.__setitem__(slice(None), w * 0.5),
    "param_set_data": None,  # Parameter.set_data, below
    "slice_assign": lambda w: w.__setitem__(slice(None), 0.25),
    "partial_assign": lambda w: w.__setitem__((0, 0, 1, 1), 7.0),
    "row_assign": lambda w: w.__setitem__(slice(3, 5), -1.0),
    "iadd": lambda w: w.__iadd__(1.0),
    "imul": lambda w: w.__imul__(-2.0),
    "out": lambda w: nd.elemwise_mul(w, w, out=w),
    "sgd_update": lambda w: nd.sgd_update(w, nd.ones_like(w), lr=0.5, out=w),
    "copyto": lambda w: (w * 3).copyto(w),
}


@pytest.mark.parametrize("how", sorted(WRITES))
def test_next_forward_sees_every_weight_write(how):
    net = _net()
    x = nd.array(np.random.default_rng(0).standard_normal((2, 16, 6, 6)).astype(np.float32))
    _check(net, x)
    _check(net, x)  # the cached copy serves an unchanged weight
    w = _weight(net)
    if how == "param_set_data":
        list(net.collect_params().values())[0].set_data(w * -1.5)
    else:
        WRITES[how](w)
    _check(net, x)


def test_trainer_step_then_inference_uses_updated_weights():
    net = _net()
    x = nd.array(np.random.default_rng(1).standard_normal((2, 16, 6, 6)).astype(np.float32))
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "momentum": 0.9})
    for _ in range(3):
        _check(net, x)
        with mx.autograd.record():
            loss = (net(x) ** 2).mean()
        loss.backward()
        tr.step(2)
    _check(net, x)


def test_bound_executor_arrays_written_between_forwards():
    data = mx.sym.var("data")
    y = mx.sym.Convolution(data, kernel=(3, 3), num_filter=16, pad=(1, 1), name="c")
    rng = np.random.default_rng(2)
    ex = y.simple_bind(mx.cpu(), data=(2, 16, 5, 5), grad_req="null")
    for a in ex.arg_dict.values():
        a[:] = rng.standard_normal(a.shape).astype(np.float32)

    def ref():
        a = {k: v.copy() for k, v in ex.arg_dict.items()}
        with dnn.use(False):
            return nd.Convolution(a["data"], a["c_weight"], a["c_bias"], kernel=(3, 3),
                                  num_filter=16, pad=(1, 1)).asnumpy()
    for _ in range(3):
        ex.forward(is_train=False)
        np.testing.assert_allclose(ex.outputs[0].asnumpy(), ref(), rtol=1e-4, atol=1e-4)
        ex.arg_dict["c_weight"][:] = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    ex.copy_params_from({"c_weight": nd.ones((16, 16, 3, 3))}, allow_extra_params=True)
    ex.forward(is_train=False)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), ref(), rtol=1e-4, atol=1e-4)


def test_unchanged_weight_is_reordered_once():
    net = _net()
    x = nd.array(np.ones((2, 16, 6, 6), np.float32))
    net(x)
    n = len(core._REORDERED)
    versions = [mx.storage.version(_weight(net, i)._raw) for i in range(2)]
    for _ in range(3):
        net(x)
    assert len(core._REORDERED) == n
    assert versions == [mx.storage.version(_weight(net, i)._raw) for i in range(2)]
