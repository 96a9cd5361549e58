"""Sentence encoding and the bucketing iterator for variable-length sequences."""
from __future__ import annotations

import bisect
import random

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]



def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0,
                     unknown_token=None):
    """Encode sentences (lists of tokens) as lists of integer ids, building a vocabulary.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str -> int, optional
        An existing vocabulary; unknown words then need ``unknown_token``.
    invalid_label : int, default -1
        Id reserved for padding (never assigned to a word).
    invalid_key : str, default '\\n'
        Key of ``invalid_label`` in a new vocabulary.
    start_label : int, default 0
    unknown_token : str, optional
        Token that words missing from ``vocab`` map to.

    Returns
    -------
    (list of list of int, dict)

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.rnn.encode_sentences([['a', 'b'], ['b', 'c']], invalid_label=0, start_label=1)[0]
    [[1, 2], [2, 3]]
    """
    idx = start_label
    if vocab is None:
        vocab = {invalid_key: invalid_label}
        new_vocab = True
    else:
        new_vocab = False
    # new ids count up from start_label as MXNet's, skipping the ids the vocabulary already
    # uses (MXNet reuses them: a new word could share an existing word's id)
    used = set(vocab.values())
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise AssertionError(f"Unknown token {word}")
                if unknown_token:
                    word = unknown_token
                if word not in vocab:
                    while idx == invalid_label or idx in used:
                        idx += 1
                    vocab[word] = idx
                    used.add(idx)
                    idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Iterate over encoded sentences in buckets of equal (padded) length.

    Each sentence goes to the smallest bucket that fits it and is padded with
    ``invalid_label``; the label is the sentence shifted left by one step.

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        Default: every length that has at least ``batch_size`` sentences.
    invalid_label : int, default -1
    data_name, label_name : str
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'

    Examples
    --------
    >>> import sparsym as mx
    >>> it = mx.rnn.BucketSentenceIter([[1, 2, 3]] * 4, batch_size=2, buckets=[4])
    WARNING: discarded 0 sentences longer than the largest bucket.
    >>> it.provide_data[0].shape
    (2, 4)
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name="data",
                 label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__(batch_size)
        if not buckets:
            counts = np.bincount([len(s) for s in sentences]) if sentences else []
            buckets = [i for i, j in enumerate(counts) if j >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ValueError("BucketSentenceIter: no bucket; give buckets or more sentences "
                             "per length than batch_size")
        ndiscard = 0
        data = [[] for _ in buckets]
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            data[buck].append(buff)
        self.data = [np.asarray(d, dtype=dtype).reshape(len(d), b) for d, b in zip(data, buckets)]
        # MXNet prints this line on stdout, even when nothing was discarded
        print(f"WARNING: discarded {ndiscard} sentences longer than the largest bucket.")
        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(buckets)
        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError(f"Invalid layout {layout}: Must by NT (batch major) or TN "
                             "(time major)")
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend([(i, j) for j in range(0, len(buck) - batch_size + 1, batch_size)])
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Shuffle the batch order and the sentences within each bucket."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata, self.ndlabel = [], []
        for buck in self.data:
            label = np.empty_like(buck)
            if buck.shape[1]:
                label[:, :-1] = buck[:, 1:]
                label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(buck, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next DataBatch (its ``bucket_key`` is the bucket length)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])

    __next__ = next
