"""mx.contrib.text: counting, Vocabulary, embeddings from local files (values probed on
MXNet 1.9.1 with the same inputs)."""
import collections

import numpy as np
import pytest

import sparsym as mx
from sparsym.contrib import text


@pytest.fixture
def emb_file(tmp_path):
    p = tmp_path / "my.txt"
    p.write_text("hello 0.1 0.2 0.3\nworld 0.4 0.5 0.6\n<unk> 9 9 9\nhello 7 7 7\nHi 1 2 3\n")
    return str(p)


def test_counting_and_vocabulary_order():
    c = text.utils.count_tokens_from_str("a b b c c c\nd  d d d e", to_lower=True)
    assert sorted(c.items()) == [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 1)]
    v = text.vocab.Vocabulary(c, most_freq_count=3, reserved_tokens=["<pad>"])
    assert v.idx_to_token == ["<unk>", "<pad>", "d", "c", "b"]
    assert v.to_indices(["c", "zz"]) == [3, 0] and v.to_indices("d") == 2
    assert v.to_tokens([1, 2]) == ["<pad>", "d"] and len(v) == 5
    assert text.vocab.Vocabulary(c, min_freq=2).idx_to_token == ["<unk>", "d", "c", "b"]
    with pytest.raises(ValueError, match="invalid"):
        v.to_tokens(9)
    with pytest.raises(ValueError, match="cannot contain `unknown_token`"):
        text.vocab.Vocabulary(c, reserved_tokens=["<unk>"])


def test_custom_embedding_reads_the_file_like_mxnet(emb_file):
    with pytest.warns(UserWarning, match="duplicate embedding"):
        e = text.embedding.CustomEmbedding(emb_file)
    assert e.idx_to_token == ["<unk>", "hello", "world", "Hi"] and e.vec_len == 3
    np.testing.assert_allclose(e.idx_to_vec.asnumpy()[:2], [[9, 9, 9], [0.1, 0.2, 0.3]],
                               rtol=1e-6)
    vecs = e.get_vecs_by_tokens(["hello", "hi", "nope"], lower_case_backup=True)
    np.testing.assert_allclose(vecs.asnumpy()[1:], [[9, 9, 9], [9, 9, 9]])
    e.update_token_vectors("hello", mx.nd.array([1, 1, 1]))
    assert e.get_vecs_by_tokens("hello").asnumpy().tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="Token nope is unknown"):
        e.update_token_vectors("nope", mx.nd.array([1, 1, 1]))


def test_vocabulary_and_composite_embeddings(emb_file, tmp_path):
    p2 = tmp_path / "my2.txt"
    p2.write_text("3 2\nhello 1 1\nnew 2 2\n")          # fastText's header line is skipped
    vocab = text.vocab.Vocabulary(collections.Counter(["hello", "world", "new", "new"]))
    with pytest.warns(UserWarning, match="likely a header"):
        e2 = text.embedding.CustomEmbedding(str(p2), vocabulary=vocab)
    assert e2.idx_to_token == ["<unk>", "new", "hello", "world"]
    assert e2.idx_to_vec.asnumpy().tolist() == [[0, 0], [2, 2], [1, 1], [0, 0]]
    with pytest.warns(UserWarning):
        e = text.embedding.CustomEmbedding(emb_file)
    ce = text.embedding.CompositeEmbedding(vocab, [e, e2])
    assert ce.vec_len == 5
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy()[1:3],
                               [[9, 9, 9, 2, 2], [0.1, 0.2, 0.3, 1, 1]], rtol=1e-6)


def test_pretrained_embeddings_load_local_files_only(tmp_path):
    assert text.embedding.get_pretrained_file_names("glove")[:2] == ["glove.42B.300d.txt",
                                                                     "glove.6B.50d.txt"]
    assert sorted(text.embedding.get_pretrained_file_names()) == ["fasttext", "glove"]
    with pytest.raises(mx.MXNetError, match="does not download"):
        text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                              embedding_root=str(tmp_path))
    (tmp_path / "glove").mkdir()
    (tmp_path / "glove" / "glove.6B.50d.txt").write_text("the 1 2\nof 3 4\n")
    g = text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                              embedding_root=str(tmp_path))
    assert g.idx_to_token == ["<unk>", "the", "of"]
    with pytest.raises(KeyError, match="Cannot find pretrained file"):
        text.embedding.GloVe("glove.1B.1d.txt")
