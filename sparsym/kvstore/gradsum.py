"""The one sum of gradients: per-device copies summed by a store's push, a server's round,
or Module's local update. Row_sparse stays row_sparse when every value is
(the registered ``add_n``'s row_sparse row); anything else is summed dense."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..ops.core.registry import run_raw


def sum_raw(raws: list, copy: bool = True) -> np.ndarray | st.RSP:
    """Sum raw values (``np.ndarray``, ``storage.RSP``, ``storage.CSR``); the result never
    aliases an input unless ``copy`` is False and there is one row_sparse input."""
    if all(isinstance(r, st.RSP) for r in raws):
        if len(raws) == 1:
            return raws[0].copy() if copy else raws[0]
        return run_raw("add_n", raws, num_args=len(raws))[0]
    out = np.array(st.todense(raws[0]), copy=True)
    for r in raws[1:]:
        out += st.todense(r)
    return out
