"""Errors have the types MXNet 1.9.1 raises where its tests and users catch them (probed on
the oracle): MXNetError is a RuntimeError; MXNet's asserts are AssertionErrors (that are
also ValueErrors and TypeErrors here); a missing image file is an MXNetError."""
import collections

import pytest

import sparsym as mx
from sparsym.base import MissingFileError, ParamAssertionError
from sparsym.contrib import text
from sparsym.gluon.contrib.estimator import Estimator


def test_mxnet_error_is_a_runtime_error_and_keeps_os_error_details():
    assert issubclass(mx.MXNetError, RuntimeError)
    err = MissingFileError(2, "no such file", "x.params")
    assert isinstance(err, mx.MXNetError) and err.errno == 2 and err.filename == "x.params"
    assert str(err) == "[Errno 2] no such file: 'x.params'"
    err = ParamAssertionError("bad")
    assert isinstance(err, (AssertionError)) and isinstance(err, ValueError)
    assert isinstance(err, TypeError) and isinstance(err, RuntimeError)


@pytest.mark.parametrize("call,match", [
    (lambda c: text.vocab.Vocabulary(c, min_freq=0), "`min_freq` must be set to a positive"),
    (lambda c: text.vocab.Vocabulary(c, reserved_tokens=["<unk>"]),
     "cannot contain `unknown_token`"),
    (lambda c: text.vocab.Vocabulary(c, reserved_tokens=["x", "x"]), "duplicate reserved"),
    (lambda c: text.vocab.Vocabulary(dict(c)), "must be an instance of collections.Counter"),
    (lambda c: text.embedding.CompositeEmbedding("v", []), "must be an instance of"),
    (lambda c: text.embedding.CompositeEmbedding(text.vocab.Vocabulary(c), ["x"]),
     "`token_embeddings` must be"),
    (lambda c: text.embedding.create("nope"), "nope is not registered"),
    (lambda c: mx.metric.create("nope"), "nope is not registered"),
    (lambda c: mx.init.create("nope"), "nope is not registered"),
])
def test_contrib_text_and_registry_asserts(call, match):
    counter = collections.Counter(["a", "b", "b"])
    with pytest.raises(AssertionError, match=match):
        call(counter)


def test_embedding_file_and_vector_asserts(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("a\nb 0.1\n")
    with pytest.raises(AssertionError, match="At line 1 .* is unexpected"):
        text.embedding.CustomEmbedding(str(bad))
    bad.write_text("a 0.1 0.2\nb 0.3\nc 0.1 0.2 0.3\n")
    with pytest.raises(AssertionError, match="At line 3 .* dimension of token c is 3"):
        text.embedding.CustomEmbedding(str(bad))
    good = tmp_path / "good.txt"
    good.write_text("a 0.1 0.2\nb 0.3 0.4\n")
    emb = text.embedding.CustomEmbedding(str(good))
    with pytest.raises(AssertionError):
        emb.update_token_vectors("a", [1, 2])
    with pytest.raises(AssertionError):
        emb.update_token_vectors("a", mx.nd.ones((3,)))
    with pytest.raises(AssertionError, match="`vocabulary` must be"):
        text.embedding.CustomEmbedding(str(good), vocabulary="v")
    # MXNet's ValueErrors stay ValueErrors; negative indices count from the end, as MXNet's
    vocab = text.vocab.Vocabulary(collections.Counter(["a", "b", "b"]))
    assert vocab.to_tokens(-1) == "a"
    with pytest.raises(ValueError, match="Token index 1 in the provided"):
        vocab.to_tokens(1.0)
    with pytest.raises(ValueError, match="Token index 9 in the provided"):
        vocab.to_tokens(9)


def test_imread_missing_file_is_an_mxnet_error(tmp_path):
    missing = str(tmp_path / "x.jpg")
    with pytest.raises(mx.MXNetError, match="couldn't open file") as info:
        mx.image.imread(missing)
    assert isinstance(info.value, FileNotFoundError) and info.value.filename == missing


@pytest.mark.parametrize("ctx", [mx.gpu(0), [mx.gpu(0)], [mx.cpu(0), mx.gpu(1)]])
def test_estimator_refuses_gpu_contexts_with_mxnets_assert(ctx):
    net, loss = mx.gluon.nn.Dense(2), mx.gluon.loss.L2Loss()
    gpu = ctx if not isinstance(ctx, list) else ctx[-1]
    with pytest.raises(AssertionError) as info:
        Estimator(net=net, loss=loss, context=ctx)
    assert str(info.value) == (f"{gpu} is not available, please make sure your context is in "
                               "one of: mx.cpu(), ")
    with pytest.raises(ValueError, match="context must be a Context or a list of Context"):
        Estimator(net=net, loss=loss, context="gpu")
