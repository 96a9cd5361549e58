"""Vocabulary: tokens indexed by frequency, with an unknown token and reserved tokens."""
from __future__ import annotations

import collections

from ...base import ParamAssertionError

__all__ = ["Vocabulary"]

UNKNOWN_IDX = 0


class Vocabulary:
    """Index the keys of a token counter: the unknown token at 0, then the reserved tokens,
    then the counted tokens by decreasing frequency (ties alphabetically).

    Parameters
    ----------
    counter : collections.Counter, optional
    most_freq_count : int, optional
        Keep at most this many counted tokens.
    min_freq : int, default 1
        Drop tokens counted fewer times.
    unknown_token : str, default '<unk>'
    reserved_tokens : list of str, optional
        Indexed right after the unknown token (e.g. padding).

    Examples
    --------
    >>> import collections
    >>> from sparsym.contrib.text.vocab import Vocabulary
    >>> v = Vocabulary(collections.Counter("a b b c c c".split()), reserved_tokens=["<pad>"])
    >>> v.idx_to_token
    ['<unk>', '<pad>', 'c', 'b', 'a']
    >>> v.to_indices(["c", "zzz"])
    [2, 0]
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        # (MXNet asserts these: ParamAssertionError is an AssertionError and a ValueError)
        if min_freq <= 0:
            raise ParamAssertionError("`min_freq` must be set to a positive value.")
        if reserved_tokens is not None:
            if unknown_token in reserved_tokens:
                raise ParamAssertionError("`reserved_token` cannot contain `unknown_token`.")
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise ParamAssertionError("`reserved_tokens` cannot contain duplicate reserved "
                                          "tokens.")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token] + list(reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter, most_freq_count, min_freq):
        if not isinstance(counter, collections.Counter):
            raise ParamAssertionError("`counter` must be an instance of collections.Counter.")
        special = set(self._idx_to_token)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict: token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: index -> token."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """Index of a token, or list of indices of a list of tokens (unknown ones: 0)."""
        if not isinstance(tokens, list):
            return self._token_to_idx.get(tokens, UNKNOWN_IDX)
        return [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]

    def to_tokens(self, indices):
        """Token of an index, or list of tokens of a list of indices (negative indices count
        from the end, as MXNet's)."""
        single = not isinstance(indices, list)
        out = []
        n = len(self._idx_to_token)
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or not -n <= idx < n:
                shown = int(idx) if isinstance(idx, float) and idx.is_integer() else idx
                raise ValueError(f"Token index {shown} in the provided `indices` is invalid.")
            out.append(self._idx_to_token[idx])
        return out[0] if single else out
