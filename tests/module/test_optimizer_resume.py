"""Module.load(prefix, epoch, load_optimizer_states=True) + init_optimizer: Adam's update
counts restart as in MXNet 1.9.1 (its .states file holds the states, not the optimizer), so
the resumed trajectory is MXNet's; ``resume_update_counts=True`` continues them."""
import numpy as np
import pytest

import sparsym as mx

# The resumed run's fc_weight (4 values) and fc_bias after each of its two steps, from
# MXNet 1.9.1 running the steps of _run below (same data, Adam lr 0.1, checkpoint after 3
# steps); identical with kvstore 'local' (no store, one device) and with a KVStore object.
# The uninterrupted run ends at fc_weight [0.08549, 0.04027, 0.08743, 0.17062] there.
MXNET_RESUMED = np.array([
    [0.09295925498008728, 0.06412698328495026, 0.10452856123447418, 0.18961453437805176,
     -0.17850321531295776],
    [0.010195150971412659, -0.050463952124118805, 0.012116380035877228, 0.10363917052745819,
     -0.19268405437469482]], np.float32)


def _data():
    rng = np.random.RandomState(0)
    return rng.randn(5, 8, 4).astype(np.float32), rng.randn(5, 8, 1).astype(np.float32)


def _batch(i):
    x, y = _data()
    return mx.io.DataBatch([mx.nd.array(x[i])], [mx.nd.array(y[i])])


def _bind(mod):
    mod.bind(data_shapes=[("data", (8, 4))], label_shapes=[("lro_label", (8, 1))])


def _params(mod):
    arg = mod.get_params()[0]
    return np.concatenate([arg["fc_weight"].asnumpy()[0], arg["fc_bias"].asnumpy()])


def _run(prefix, kvstore, **load_kw):
    """3 steps, checkpoint, 2 more steps; then load and take the same 2 steps again.
    Returns (uninterrupted params per step, resumed params per step)."""
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc"), name="lro")
    kv = (lambda: mx.kv.create("local")) if kvstore else (lambda: "local")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    _bind(mod)
    mod.init_params(arg_params={"fc_weight": mx.nd.array(np.full((1, 4), 0.5)),
                                "fc_bias": mx.nd.zeros((1,))})
    mod.init_optimizer(kvstore=kv(), optimizer="adam", optimizer_params={"learning_rate": 0.1})
    for i in range(3):
        mod.forward_backward(_batch(i))
        mod.update()
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    cont = []
    for i in range(3, 5):
        mod.forward_backward(_batch(i))
        mod.update()
        cont.append(_params(mod))
    mod2 = mx.mod.Module.load(prefix, 3, load_optimizer_states=True, label_names=["lro_label"],
                              **load_kw)
    _bind(mod2)
    mod2.init_optimizer(kvstore=kv(), optimizer="adam", optimizer_params={"learning_rate": 0.1})
    resumed = []
    for i in range(3, 5):
        mod2.forward_backward(_batch(i))
        mod2.update()
        resumed.append(_params(mod2))
    return np.array(cont), np.array(resumed)


@pytest.mark.parametrize("kvstore", [False, True], ids=["no_store", "kvstore"])
def test_resumed_adam_restarts_its_update_counts_as_mxnet(tmp_path, kvstore):
    cont, resumed = _run(str(tmp_path / "ck"), kvstore)
    np.testing.assert_allclose(resumed, MXNET_RESUMED, atol=2e-5)
    assert np.abs(cont[-1] - resumed[-1]).max() > 0.05  # MXNet's resume is not a continuation


@pytest.mark.parametrize("kvstore", [False, True], ids=["no_store", "kvstore"])
def test_resume_update_counts_continues_the_run(tmp_path, kvstore):
    cont, resumed = _run(str(tmp_path / "ck"), kvstore, resume_update_counts=True)
    np.testing.assert_allclose(resumed, cont, atol=1e-6)
