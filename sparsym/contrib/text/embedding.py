"""Token embeddings: vectors for the tokens of a vocabulary, read from text files
(GloVe, fastText or any ``token v1 v2 ...`` file).

sparsym downloads nothing: ``GloVe`` and ``FastText`` read MXNet's file from
``embedding_root/<glove|fasttext>/<pretrained_file_name>`` and say which file to put there
when it is missing.
"""
from __future__ import annotations

import logging
import os
import warnings

import numpy as np

from ... import ndarray as nd
from ... import registry
from ...base import MXNetError, ParamAssertionError, data_dir
from . import vocab
from .vocab import UNKNOWN_IDX

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]


class _TokenEmbedding(vocab.Vocabulary):
    """A vocabulary with one vector per token (``idx_to_vec``, row 0: the unknown token)."""

    # the file names the class knows (pretrained sets named by MXNet's model store)
    pretrained_file_names = ()

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    @classmethod
    def _check_pretrained_file_name(cls, name):
        if cls.pretrained_file_names and name not in cls.pretrained_file_names:
            embedding = cls.__name__.lower()
            raise KeyError(f"Cannot find pretrained file {name} for token embedding "
                           f"{embedding}. Valid pretrained files for embedding {embedding}: "
                           + ", ".join(cls.pretrained_file_names))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, name):
        path = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower(), name)
        if not os.path.isfile(path):
            raise MXNetError(f"{cls.__name__}: no pretrained file {path}. sparsym does not "
                             "download; put MXNet's extracted file there (MXNet keeps it in "
                             "~/.mxnet/embeddings) or use CustomEmbedding on a local file")
        return path

    def _load_embedding(self, path, elem_delim, init_unknown_vec, encoding="utf8"):
        """Append the file's tokens and their vectors (a first line with one number after the
        token, fastText's header, is skipped; a repeated token keeps its first vector)."""
        path = os.path.expanduser(path)
        if not os.path.isfile(path):
            raise ValueError("`pretrained_file_path` must be a valid path to the pre-trained "
                             f"token embedding file (got {path}).")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        rows, seen, unknown_vec = [], set(), None
        with open(path, encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) <= 1:
                    raise ParamAssertionError(
                        f"At line {line_num} of the pre-trained text embedding file: the data "
                        f"format of the pre-trained token embedding file {path} is unexpected.")
                token, values = elems[0], [float(v) for v in elems[1:]]
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = values
                    seen.add(token)
                elif token in seen:
                    warnings.warn(f"At line {line_num} of the pre-trained token embedding "
                                  f"file: the embedding vector for token {token} has been "
                                  "loaded and a duplicate embedding for the same token is "
                                  "seen and skipped.", stacklevel=3)
                elif len(values) == 1:
                    warnings.warn(f"At line {line_num} of the pre-trained text embedding "
                                  f"file: token {token} with 1-dimensional vector {values} is "
                                  "likely a header and is skipped.", stacklevel=3)
                else:
                    if rows and len(values) != len(rows[0]):
                        raise ParamAssertionError(
                            f"At line {line_num} of the pre-trained token embedding file: the "
                            f"dimension of token {token} is {len(values)} but the dimension of "
                            f"previous tokens is {len(rows[0])}. Dimensions of all the tokens "
                            "must be the same.")
                    rows.append(values)
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                    seen.add(token)
        if not rows:
            raise ValueError(f"the pre-trained token embedding file {path} has no vectors")
        self._vec_len = len(rows[0])
        table = np.zeros((len(self._idx_to_token), self._vec_len), dtype=np.float32)
        table[len(self._idx_to_token) - len(rows):] = rows
        self._idx_to_vec = nd.array(table)
        self._idx_to_vec[UNKNOWN_IDX] = (nd.array(unknown_vec) if unknown_vec is not None
                                         else init_unknown_vec(shape=self._vec_len))

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = (None if vocabulary.reserved_tokens is None
                                 else list(vocabulary.reserved_tokens))

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """Rows of the concatenated embeddings' vectors for the vocabulary's tokens (row 0:
        each embedding's own unknown vector)."""
        width = sum(e.vec_len for e in token_embeddings)
        table = nd.zeros((vocab_len, width))
        col = 0
        for e in token_embeddings:
            table[0, col:col + e.vec_len] = e.idx_to_vec[0]
            if vocab_len > 1:
                table[1:, col:col + e.vec_len] = e.get_vecs_by_tokens(list(vocab_idx_to_token[1:]))
            col += e.vec_len
        self._vec_len, self._idx_to_vec = width, table

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is None:
            return
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise ParamAssertionError("The argument `vocabulary` must be an instance of "
                                      "mxnet.contrib.text.vocab.Vocabulary.")
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        """int: the length of every vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray (len(self), vec_len): the vector of every indexed token."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-D) or the vectors of a list of tokens (2-D); unknown tokens
        get the unknown vector, after trying the lower-cased token if ``lower_case_backup``."""
        single = not isinstance(tokens, list)
        idx = []
        for t in [tokens] if single else tokens:
            i = self._token_to_idx.get(t)
            if i is None and lower_case_backup:
                i = self._token_to_idx.get(t.lower())
            idx.append(UNKNOWN_IDX if i is None else i)
        vecs = nd.Embedding(nd.array(idx), self._idx_to_vec, self._idx_to_vec.shape[0],
                            self._idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Replace the vectors of known ``tokens`` (the unknown token only when named)."""
        if self._idx_to_vec is None:
            raise ParamAssertionError("The property `idx_to_vec` has not been properly set.")
        tokens = tokens if isinstance(tokens, list) else [tokens]
        if not isinstance(new_vectors, nd.NDArray) or new_vectors.ndim not in (1, 2):
            raise ParamAssertionError("`new_vectors` must be a 1-D or 2-D NDArray")
        if new_vectors.ndim == 1:
            new_vectors = new_vectors.expand_dims(axis=0)
        if new_vectors.shape != (len(tokens), self.vec_len):
            raise ParamAssertionError(
                "The length of new_vectors must be equal to the number of tokens and the width "
                "of new_vectors must be equal to the dimension of embeddings of the glossary: "
                f"expected {(len(tokens), self.vec_len)}, got {new_vectors.shape}")
        rows = []
        for t in tokens:
            if t not in self._token_to_idx:
                raise ValueError(f"Token {t} is unknown. To update the embedding vector for an "
                                 "unknown token, please specify it explicitly as the "
                                 f"`unknown_token` {self._idx_to_token[UNKNOWN_IDX]} in "
                                 "`tokens`. This is to avoid unintended updates.")
            rows.append(self._token_to_idx[t])
        table = self._idx_to_vec.asnumpy()
        table[rows] = new_vectors.asnumpy()
        self._idx_to_vec = nd.array(table, dtype=table.dtype)


register = registry.get_register_func(_TokenEmbedding, "token embedding")
create = registry.get_create_func(_TokenEmbedding, "token embedding")


def get_pretrained_file_names(embedding_name=None):
    """The pretrained file names of one registered embedding, or a dict of all of them.

    Parameters
    ----------
    embedding_name : str, optional
        'glove', 'fasttext' or a registered custom embedding's name.
    """
    reg = registry.get_registry(_TokenEmbedding)
    if embedding_name is None:
        return {name: list(cls.pretrained_file_names) for name, cls in reg.items()}
    if embedding_name not in reg:
        raise KeyError(f"Cannot find `embedding_name` {embedding_name}. Use "
                       "`get_pretrained_file_names(embedding_name=None).keys()` to get all the "
                       "valid embedding names.")
    return list(reg[embedding_name].pretrained_file_names)


def _default_root():
    return os.path.join(data_dir(), "embeddings")


@register
class GloVe(_TokenEmbedding):
    """GloVe vectors (Pennington et al. 2014) from the extracted ``glove.*.txt`` file in
    ``embedding_root/glove``.

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
    embedding_root : str, default ``$MXNET_HOME/embeddings``
    init_unknown_vec : callable, default nd.zeros
        Makes the unknown token's vector from ``shape=vec_len``.
    vocabulary : Vocabulary, optional
        Index exactly this vocabulary's tokens.
    """

    pretrained_file_names = tuple(
        ["glove.42B.300d.txt"] + [f"glove.6B.{d}d.txt" for d in (50, 100, 200, 300)]
        + ["glove.840B.300d.txt"] + [f"glove.twitter.27B.{d}d.txt" for d in (25, 50, 100, 200)])

    def __init__(self, pretrained_file_name="glove.840B.300d.txt", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_name(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._get_pretrained_file(embedding_root or _default_root(), pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """fastText vectors (Bojanowski et al. 2016) from a ``.vec`` file in
    ``embedding_root/fasttext`` (any of fastText's published ``wiki.<lang>.vec`` files).

    Parameters
    ----------
    pretrained_file_name : str, default 'wiki.simple.vec'
    embedding_root : str, default ``$MXNET_HOME/embeddings``
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
    """

    # the English sets; any of fastText's wiki.<lang>.vec files loads too
    pretrained_file_names = ("crawl-300d-2M.vec", "wiki.en.vec", "wiki.simple.vec")

    @classmethod
    def _check_pretrained_file_name(cls, name):
        if not name.endswith(".vec"):
            raise KeyError(f"Cannot find pretrained file {name} for token embedding fasttext: "
                           "fastText's files end in .vec (e.g. "
                           + ", ".join(cls.pretrained_file_names) + ")")

    def __init__(self, pretrained_file_name="wiki.simple.vec", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        FastText._check_pretrained_file_name(pretrained_file_name)
        super().__init__(**kwargs)
        path = FastText._get_pretrained_file(embedding_root or _default_root(),
                                             pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a user's file of ``token<delim>v1<delim>v2...`` lines.

    Parameters
    ----------
    pretrained_file_path : str
    elem_delim : str, default ' '
    encoding : str, default 'utf8'
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
    """

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """A vocabulary's tokens with the concatenation of several embeddings' vectors.

    Parameters
    ----------
    vocabulary : Vocabulary
    token_embeddings : embedding or list of embeddings
    """

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise ParamAssertionError("The argument `vocabulary` must be an instance of "
                                      "mxnet.contrib.text.vocab.Vocabulary.")
        token_embeddings = (token_embeddings if isinstance(token_embeddings, list)
                            else [token_embeddings])
        if not all(isinstance(e, _TokenEmbedding) for e in token_embeddings):
            raise ParamAssertionError("The argument `token_embeddings` must be an instance or a "
                                      "list of instances of "
                                      "mxnet.contrib.text.embedding.TextEmbedding")
        super().__init__()
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
