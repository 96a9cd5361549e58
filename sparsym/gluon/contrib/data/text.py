"""Language-model datasets (``mx.gluon.contrib.data.text``): WikiText-2 and WikiText-103 as
(data, label) windows of token indices, the label shifted by one token."""
from __future__ import annotations

import os
import shutil
import zipfile

import numpy as np

from .... import ndarray as nd
from ....base import data_dir
from ....contrib import text
from ...data.vision.datasets import _DownloadedDataset, _fetch

__all__ = ["WikiText2", "WikiText103"]

EOS_TOKEN = "<eos>"


class _WikiText(_DownloadedDataset):
    """Tokens of ``wiki.<segment>.tokens`` (one ``<eos>`` after every non-empty line),
    indexed by ``vocab`` (default: built from this segment's counts) and cut into rows of
    ``seq_len``."""

    _namespace = ""
    _archive = ""
    _segments = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
                 "test": "wiki.test.tokens"}

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in self._segments:
            raise ValueError(f"segment must be one of {sorted(self._segments)}, got "
                             f"{segment!r}")
        self._segment, self._seq_len = segment, int(seq_len)
        self._vocab, self._counter = vocab, None
        super().__init__(root, None)

    @property
    def vocabulary(self):
        """The Vocabulary indexing the tokens."""
        return self._vocab

    @property
    def frequencies(self):
        """collections.Counter of this segment's tokens."""
        return self._counter

    def _tokens_path(self):
        path = os.path.join(self._root, self._segments[self._segment])
        if os.path.exists(path):
            return path
        archive = _fetch(self._root, self._namespace, self._archive, None)
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                name = os.path.basename(member)
                if name:        # the archive nests the files in a folder: flatten it
                    with zf.open(member) as src, open(os.path.join(self._root, name),
                                                      "wb") as dst:
                        shutil.copyfileobj(src, dst)
        return path

    def _get_data(self):
        with open(self._tokens_path(), encoding="utf8") as f:
            content = f.read()
        if self._counter is None:
            self._counter = text.utils.count_tokens_from_str(content)
        if self._vocab is None:
            self._vocab = text.vocab.Vocabulary(counter=self._counter,
                                                reserved_tokens=[EOS_TOKEN])
        tokens = [t for line in content.splitlines() if line.split()
                  for t in line.split() + [EOS_TOKEN]]
        idx = np.asarray(self._vocab.to_indices(tokens), dtype=np.int32)
        n = (len(idx) - 1) // self._seq_len * self._seq_len
        self._data = nd.array(idx[:n].reshape(-1, self._seq_len), dtype=np.int32)
        self._label = nd.array(idx[1:n + 1].reshape(-1, self._seq_len), dtype=np.int32)


class WikiText2(_WikiText):
    """WikiText-2 (Merity et al. 2016): about 2M training tokens.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/wikitext-2``
        Holds ``wiki.{train,valid,test}.tokens`` or ``wikitext-2-v1.zip``.
    segment : {'train', 'validation', 'test'}, default 'train'
    vocab : contrib.text.vocab.Vocabulary, optional
        Default: the segment's own tokens, with '<eos>' reserved.
    seq_len : int, default 35
    """

    _namespace, _archive = "wikitext-2", "wikitext-2-v1.zip"

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        root = root or os.path.join(data_dir(), "datasets", "wikitext-2")
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103: about 103M training tokens (parameters as :class:`WikiText2`'s; the
    default root is ``$MXNET_HOME/datasets/wikitext-103``)."""

    _namespace, _archive = "wikitext-103", "wikitext-103-v1.zip"

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        root = root or os.path.join(data_dir(), "datasets", "wikitext-103")
        super().__init__(root, segment, vocab, seq_len)
