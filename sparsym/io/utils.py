"""Helpers shared by the in-memory iterators (MXNet's ``mxnet.io.utils``)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import storage as st
from ..base import MXNetError
from ..kernels import csr as kcsr
from ..ndarray.ndarray import NDArray
from ..ndarray.sparse import _is_scipy_sparse, csr_matrix


def _init_data(data, allow_empty, default_name):
    """Normalise array / list / dict input to an ordered list of (name, raw value)."""
    if data is None:
        if not allow_empty:
            raise MXNetError("data must not be None")
        return []
    if isinstance(data, (np.ndarray, NDArray)) or _is_scipy_sparse(data) or \
            not isinstance(data, (list, tuple, dict, OrderedDict)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not allow_empty and not data:
            raise MXNetError("data must not be empty")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, a list of them or dict with "
                        "them as values")
    out = []
    for k, v in data.items():
        if _is_scipy_sparse(v):
            raw = csr_matrix(v)._raw
        elif isinstance(v, NDArray):
            raw = v._raw
        else:
            try:
                raw = np.asarray(v)
            except Exception:  # noqa: BLE001
                raise TypeError(f"Invalid type '{type(v).__name__}' for {k}, should be NDArray, "
                                "numpy.ndarray or scipy csr") from None
            if raw.dtype.kind not in "biuf":
                raise TypeError(f"Invalid type '{type(v).__name__}' (values of dtype "
                                f"{raw.dtype}) for {k}, should be NDArray, numpy.ndarray or "
                                "scipy csr of numbers")
            # MXNet converts numpy input with mx.nd.array: float32 whatever its dtype
            raw = raw.astype(np.float32)
        if isinstance(raw, st.RSP):
            raise MXNetError(f"NDArrayIter: row_sparse input {k} is not supported; use csr "
                             "or dense data")
        out.append((k, raw))
    return out


def _take_rows(raw, rows):
    if isinstance(raw, st.CSR):
        return kcsr.take_rows_csr(raw, rows)
    return raw[rows]


def _slice_rows(raw, a, b):
    if isinstance(raw, st.CSR):
        return kcsr.slice_rows(raw, a, b)
    return raw[a:b]


def _has_instance(data, dtype):
    """True when any array of the (name, array) list ``data`` is an instance of ``dtype``."""
    return any(isinstance(v, dtype) for _, v in data)


def _getdata_by_idx(data, idx):
    """The (name, array) list ``data`` with the rows of each array taken in order ``idx``."""
    return [(k, _take_rows(v, idx)) for k, v in data]
