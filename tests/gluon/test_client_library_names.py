"""Private MXNet names that GluonCV, GluonNLP and Keras-MXNet import, with MXNet 1.9.1's
behaviour (values checked against MXNet)."""
import io
import pickle

import numpy as np
import pytest

import sparsym as mx
from sparsym.gluon.model_zoo import model_store


def test_repo_urls(monkeypatch):
    from sparsym.gluon.utils import _get_repo_file_url, _get_repo_url
    monkeypatch.delenv("MXNET_GLUON_REPO", raising=False)
    assert _get_repo_url() == "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://mirror/x")
    assert _get_repo_url() == "http://mirror/x/"
    assert _get_repo_file_url("gluon/dataset/squad", "a.zip") == \
        "http://mirror/x/gluon/dataset/squad/a.zip"


def test_model_sha1_registry_and_hashed_files(tmp_path):
    assert len(model_store._model_sha1) == 34
    assert model_store._model_sha1["alexnet"] == "44335d1f0046b328243b32a26a4fbd62d9057b45"
    assert model_store.short_hash("densenet121") == "f27dbf2d"
    with pytest.raises(ValueError, match="Pretrained model for nope is not available."):
        model_store.short_hash("nope")
    # a client library registers its model and the file named by its hash is found
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    src = tmp_path / "src.params"
    net.save_parameters(str(src))
    import hashlib
    sha1 = hashlib.sha1(src.read_bytes()).hexdigest()
    model_store._model_sha1.update({"tiny_dense": sha1})
    try:
        dst = tmp_path / f"tiny_dense-{sha1[:8]}.params"
        dst.write_bytes(src.read_bytes())
        assert model_store.get_model_file("tiny_dense", root=str(tmp_path)) == str(dst)
        dst.write_bytes(b"damaged")
        with pytest.raises(mx.base.MXNetError, match="does not have the registered SHA-1"):
            model_store.get_model_file("tiny_dense", root=str(tmp_path))
    finally:
        del model_store._model_sha1["tiny_dense"]


def test_forking_pickler_round_trips_a_batch():
    from sparsym.gluon.data.dataloader import ForkingPickler, _as_in_context
    batch = [mx.nd.array([[1., 2.], [3., 4.]]), mx.nd.array([0, 1])]
    buf = io.BytesIO()
    ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(batch)
    back = _as_in_context(pickle.loads(buf.getvalue()), mx.cpu())
    np.testing.assert_array_equal(back[0].asnumpy(), [[1., 2.], [3., 4.]])
