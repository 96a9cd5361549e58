"""The vision model zoo against MXNet 1.9.1's: the same parameter names and declared shapes
for every model, and the same outputs for a few small ones under the same weights
(tests/fixtures/make_model_zoo_fixtures.py records both from MXNet)."""
import json
import os
import sys

import numpy as np
import pytest

import sparsym as mx
from sparsym.gluon.model_zoo import model_store, vision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "fixtures"))
from model_zoo_weights import fill, make_input  # noqa: E402

FIX = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "mxnet")
with open(os.path.join(FIX, "model_zoo.json")) as f:
    MANIFEST = json.load(f)
MODELS = sorted(k for k in MANIFEST if ":" not in k)
FORWARD = {"mobilenet0.25": 64, "mobilenetv2_0.25": 64, "squeezenet1.1": 224, "alexnet": 224,
           "resnet18_v1": 64}


def _strip(params):
    """Names without the model's own instance prefix (e.g. 'alexnet0_'), which counts
    instances per process."""
    return [[k.split("_", 1)[1], list(shape)] for k, shape in params]


def _params(net):
    return [[k, list(p.shape)] for k, p in net.collect_params().items()]


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_and_shapes_match_mxnet(name):
    net = vision.get_model(name, classes=10)
    assert _strip(_params(net)) == _strip(MANIFEST[name])


@pytest.mark.parametrize("name,hybridize", [(n, h) for n in sorted(FORWARD) for h in (0, 1)
                                             if not (n == "alexnet" and h)])   # alexnet: slow
def test_outputs_match_mxnet(name, hybridize):
    out = np.load(os.path.join(FIX, "model_zoo_outputs.npz"))[name + ":output"]
    size = FORWARD[name]
    x = make_input(size)
    net = vision.get_model(name, classes=10)
    net.initialize()
    net(mx.nd.array(x))
    # the fill sorts by full name: same instance prefix order as MXNet's per-model prefix
    assert _strip(_params(net)) == _strip(MANIFEST[name + ":initialized"])
    fill(net)
    if hybridize:
        net.hybridize()
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), out, rtol=1e-3, atol=1e-4)


def test_unknown_model_lists_the_options():
    with pytest.raises(ValueError, match="(?s)Model vgg99 is not supported.*mobilenetv2_0.25"):
        vision.get_model("vgg99")


def test_pretrained_loads_a_local_file_and_says_where_it_is_missing(tmp_path):
    with pytest.raises(mx.MXNetError, match=r"squeezenet1.1-<hash>.params in .*does not "
                                            r"download"):
        vision.get_model("squeezenet1.1", pretrained=True, root=str(tmp_path))
    src = vision.squeezenet1_1()
    src.initialize()
    src(mx.nd.zeros((1, 3, 224, 224)))
    src.save_parameters(str(tmp_path / "squeezenet1.1-0123abcd.params"))
    assert model_store.get_model_file("squeezenet1.1", root=str(tmp_path)).endswith(
        "squeezenet1.1-0123abcd.params")
    net = vision.get_model("squeezenet1.1", pretrained=True, root=str(tmp_path))
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(1, 3, 224, 224)))
    np.testing.assert_allclose(net(x).asnumpy(), src(x).asnumpy(), rtol=1e-5)
    model_store.purge(str(tmp_path))
    assert not list(tmp_path.iterdir())
