"""encode_sentences and BucketSentenceIter."""
import numpy as np
import pytest

import sparsym as mx


def test_encode_sentences_new_and_existing_vocab():
    sents = [["a", "b", "c"], ["b", "d"]]
    coded, vocab = mx.rnn.encode_sentences(sents, invalid_label=0, start_label=1)
    assert coded == [[1, 2, 3], [2, 4]]
    assert vocab["\n"] == 0 and vocab["d"] == 4
    # ids skip the invalid label
    coded, vocab = mx.rnn.encode_sentences([["x", "y"]], invalid_label=1, start_label=0)
    assert coded == [[0, 2]]
    coded, _ = mx.rnn.encode_sentences([["a", "zz"]], vocab=dict(vocab, a=5, unk=6),
                                       unknown_token="unk")
    assert coded == [[5, 6]]
    with pytest.raises(AssertionError, match="Unknown token"):
        mx.rnn.encode_sentences([["q"]], vocab={"a": 1})


def test_bucket_sentence_iter_batches_and_labels():
    rng = np.random.RandomState(0)
    sents = [list(rng.randint(1, 9, size=n)) for n in [3] * 5 + [5] * 4 + [9]]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[4, 6], invalid_label=0)
    assert it.default_bucket_key == 6
    assert it.provide_data[0].shape == (2, 6) and it.provide_label[0].name == "softmax_label"
    batches = list(it)
    assert len(batches) == 2 + 2                     # 5 -> 2 batches of 2, 4 -> 2 batches
    for b in batches:
        d, lab = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert d.shape == (2, b.bucket_key) == lab.shape
        assert np.array_equal(lab[:, :-1], d[:, 1:]) and np.all(lab[:, -1] == 0)
        assert b.provide_data[0].shape == d.shape
    it.reset()
    assert len(list(it)) == 4


def test_bucket_sentence_iter_default_buckets_and_tn_layout():
    sents = [[1, 2]] * 4 + [[1, 2, 3]] * 2 + [[1]]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=2, layout="TN")
    assert it.buckets == [2, 3]
    b = next(iter(it))
    assert b.data[0].shape == (b.bucket_key, 2)
    with pytest.raises(ValueError):
        mx.rnn.BucketSentenceIter(sents, batch_size=2, layout="XY")


def test_encode_sentences_existing_vocab_counts_from_start_label():
    # MXNet 1.9.1: new ids restart at start_label (UNK gets 0 here); sparsym skips used ids
    coded, vocab = mx.rnn.io.encode_sentences([["a", "b", "c"], ["b", "c", "d"]],
                                              vocab={"a": 1, "b": 2, "c": 3}, start_label=0,
                                              unknown_token="UNK")
    assert coded == [[1, 2, 3], [2, 3, 0]] and vocab["UNK"] == 0
    coded, vocab = mx.rnn.io.encode_sentences([["d"]], vocab={"a": 0, "b": 2},
                                              unknown_token="UNK")
    assert vocab["UNK"] == 1 and coded == [[1]]


def test_bucket_iter_reports_discarded_sentences_on_stdout(capsys):
    mx.rnn.BucketSentenceIter([[1, 2], [1, 2, 3, 4, 5]], 1, buckets=[3])
    assert "WARNING: discarded 1 sentences longer than the largest bucket." in \
        capsys.readouterr().out
    mx.rnn.BucketSentenceIter([[1, 2]], 1, buckets=[3])
    assert "discarded 0 sentences" in capsys.readouterr().out   # MXNet prints it always
