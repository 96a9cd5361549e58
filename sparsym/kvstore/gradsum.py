"""The one sum of gradients: per-device copies summed by a store's push, a server's round,
or Module's local update. Row_sparse stays row_sparse when every value is
(``kernels/rsp.py`` ``add_n_rsp``); anything else is summed dense."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..kernels import rsp as krsp


def sum_raw(raws: list, copy: bool = True) -> np.ndarray | st.RSP:
    """Sum raw values (``np.ndarray``, ``storage.RSP``, ``storage.CSR``); the result never
    aliases an input unless ``copy`` is False and there is one row_sparse input."""
    if all(isinstance(r, st.RSP) for r in raws):
        if len(raws) == 1:
            return raws[0].copy() if copy else raws[0]
        return krsp.add_n_rsp(raws)
    out = np.array(st.todense(raws[0]), copy=True)
    for r in raws[1:]:
        out += st.todense(r)
    return out
