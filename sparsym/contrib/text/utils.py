"""Token counting for building vocabularies."""
from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """Count the tokens of ``source_str``.

    Parameters
    ----------
    source_str : str
    token_delim, seq_delim : str, default ' ' and '\\n'
        Token and sequence delimiters (regular expressions, as MXNet's).
    to_lower : bool, default False
    counter_to_update : collections.Counter, optional
        Updated in place and returned.

    Returns
    -------
    collections.Counter

    Examples
    --------
    >>> from sparsym.contrib.text.utils import count_tokens_from_str
    >>> sorted(count_tokens_from_str("Life is great\\nlife is good", to_lower=True).items())
    [('good', 1), ('great', 1), ('is', 2), ('life', 2)]
    """
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
