"""CSR kernels over :class:`sparsym.storage.CSR` (int64 indices/indptr)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..storage import CSR, IDX


@njit(cache=True)
def _scatter_rows(data, indices, indptr, out):
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            out[i, indices[k]] += data[k]


def csr_to_dense(a: CSR) -> np.ndarray:
    """Densify; duplicates are summed (contract: any column order)."""
    out = np.zeros(a.shape, dtype=a.data.dtype)
    if a.nnz:
        _scatter_rows(a.data, a.indices, a.indptr, out)
    return out


def dense_to_csr(x: np.ndarray) -> CSR:
    """Compress a 2-D array; output columns sorted, explicit zeros dropped."""
    rows, cols = np.nonzero(x)
    indptr = np.zeros(x.shape[0] + 1, dtype=IDX)
    np.cumsum(np.bincount(rows, minlength=x.shape[0]), out=indptr[1:])
    return CSR(np.ascontiguousarray(x[rows, cols]), cols.astype(IDX), indptr, x.shape)
