"""CSRNDArray and RowSparseNDArray, and the ``nd.sparse`` constructors."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import ShapeError, StorageError, dtype_of
from ..context import current_context
from .ndarray import NDArray, _shape, wrap

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array"]


class BaseSparseNDArray(NDArray):
    """Common base of the sparse array classes."""

    __slots__ = ()

    def __repr__(self):
        shape = "x".join(str(s) for s in self.shape)
        return f"\n<{type(self).__name__} {shape} @{self._ctx}>"

    def reshape(self, *shape, **kwargs):
        raise StorageError(f"reshape is not supported for {self.stype} NDArray")

    def check_format(self, full_check=True):
        """Raise StorageError if the stored structure is invalid."""
        raw = self._raw
        if isinstance(raw, st.CSR):
            st.check_csr(raw.data, raw.indices, raw.indptr, raw.shape, "check_format", full_check)
            if full_check:
                for i in range(raw.shape[0]):
                    seg = raw.indices[raw.indptr[i]:raw.indptr[i + 1]]
                    if len(seg) > 1 and np.any(np.diff(seg) <= 0):
                        raise StorageError(f"check_format: column indices of row {i} are not "
                                           "sorted and unique")
        else:
            st.check_rsp(raw.data, raw.indices, raw.shape, "check_format", full_check)

    @property
    def data(self):
        """The stored values (a dense NDArray view)."""
        return wrap(self._raw.data, self._ctx)

    @property
    def indices(self):
        """Column indices (csr) or row indices (row_sparse), int64."""
        return wrap(self._raw.indices, self._ctx)

    def _aux_types(self):
        return [np.int64] * (2 if self.stype == "csr" else 1)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D compressed sparse row array, byte-compatible with ``scipy.sparse.csr_matrix``.

    Examples
    --------
    >>> import sparsym as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
    >>> a.asnumpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    """

    __slots__ = ()

    @property
    def indptr(self):
        """Row pointers, int64."""
        return wrap(self._raw.indptr, self._ctx)

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` sharing this array's buffers (zero-copy)."""
        import scipy.sparse as sp
        r = self._raw
        m = sp.csr_matrix((r.shape), dtype=r.data.dtype)
        m.data, m.indices, m.indptr = r.data, r.indices, r.indptr
        return m

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            key = slice(int(key), int(key) + 1)
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            begin, end, _ = key.indices(self.shape[0])
            from ..kernels import csr as kcsr
            return wrap(kcsr.slice_rows(self._raw, begin, max(begin, end)), self._ctx)
        raise ValueError(f"CSRNDArray only supports continuous row slicing, got {key!r}")


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose rows ``indices`` (sorted, unique) hold ``data``; other rows are zero.

    Examples
    --------
    >>> import sparsym as mx
    >>> w = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    >>> w.asnumpy().tolist()
    [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]
    """

    __slots__ = ()

    def retain(self, indices):
        """Keep only the rows listed in ``indices``."""
        from .op import invoke
        return invoke("_sparse_retain", [self, indices if isinstance(indices, NDArray)
                                         else wrap(np.asarray(indices, np.int64))], {})[0]

    def __getitem__(self, key):
        if isinstance(key, slice) and key == slice(None):
            return self
        raise ValueError(f"RowSparseNDArray only supports [:] indexing, got {key!r}")


# ---------------------------------------------------------------------- constructors
def _is_scipy_sparse(x) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sp.issparse(x)


def _np(x, dtype=None):
    if isinstance(x, NDArray):
        x = x.asnumpy()
    return np.asarray(x, dtype=dtype)


def _idx(x, where, name):
    arr = _np(x)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise StorageError(f"{where}: {name} must be integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr.reshape(-1), dtype=np.int64)


def _canonical_csr(data, indices, indptr, shape):
    """Sort columns within rows and sum duplicates when the input is not canonical."""
    if len(indices) < 2:
        return st.CSR(data, indices, indptr, shape)
    from ..kernels import csr as kcsr
    raw = st.CSR(data, indices, indptr, shape)
    return kcsr.canonicalize_csr(raw)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """Create a CSRNDArray.

    Parameters
    ----------
    arg1 : tuple (data, indices, indptr), scipy sparse matrix, CSRNDArray, dense array
        or ``(M, N)`` for an empty matrix.
    shape : tuple of int, optional
        Required with (data, indices, indptr) when it cannot be inferred.
    ctx : Context, optional
    dtype : str or numpy.dtype, optional (float32 unless the source has a dtype)

    Returns
    -------
    CSRNDArray
    """
    ctx = ctx or current_context()
    where = "csr_matrix"
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(isinstance(v, (int, np.integer))
                                                         for v in arg1):
        return wrap(st.zeros_raw("csr", arg1, dtype_of(dtype or np.float32)), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        src_dtype = data.dtype if isinstance(data, (np.ndarray, NDArray)) else np.float32
        data = np.ascontiguousarray(_np(data, dtype_of(dtype or src_dtype)).reshape(-1))
        indices = _idx(indices, where, "indices")
        indptr = _idx(indptr, where, "indptr")
        if shape is None:
            ncol = int(indices.max()) + 1 if len(indices) else 0
            shape = (len(indptr) - 1, ncol)
        shape = _shape(shape)
        st.check_csr(data, indices, indptr, shape, where)
        return wrap(_canonical_csr(data, indices, indptr, shape), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        raise StorageError(f"{where}: (data, (row, col)) COO input is not supported; "
                           "pass (data, indices, indptr) or a scipy matrix")
    if _is_scipy_sparse(arg1):
        m = arg1.tocsr()
        if dtype is not None:
            m = m.astype(dtype_of(dtype))
        data = np.ascontiguousarray(m.data)
        indices = m.indices.astype(np.int64, copy=False)
        indptr = m.indptr.astype(np.int64, copy=False)
        if shape is not None and _shape(shape) != m.shape:
            raise ShapeError(f"{where}: shape {_shape(shape)} does not match scipy matrix "
                             f"shape {m.shape}")
        st.check_csr(data, indices, indptr, m.shape, where)
        if not m.has_canonical_format:
            return wrap(_canonical_csr(data, indices, indptr, m.shape), ctx)
        return wrap(st.CSR(data, indices, indptr, m.shape), ctx)
    if isinstance(arg1, CSRNDArray):
        out = arg1.copy() if dtype is None else arg1.astype(dtype)
        out._ctx = ctx
        return out
    dense = _np(arg1, dtype_of(dtype) if dtype else None)
    if dense.dtype == np.float64 and dtype is None and not isinstance(arg1, np.ndarray):
        dense = dense.astype(np.float32)
    if dense.ndim != 2:
        raise ShapeError(f"{where}: expected a 2-D source, got shape {dense.shape}")
    if shape is not None and _shape(shape) != dense.shape:
        raise ShapeError(f"{where}: shape {_shape(shape)} does not match source {dense.shape}")
    return wrap(st.dense_to_csr(dense), ctx)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """Create a RowSparseNDArray.

    Parameters
    ----------
    arg1 : tuple (data, indices), RowSparseNDArray, dense array, or a shape tuple
        Unsorted or duplicate indices are sorted and their rows summed.
    shape : tuple of int, optional
    ctx : Context, optional
    dtype : str or numpy.dtype, optional

    Returns
    -------
    RowSparseNDArray
    """
    ctx = ctx or current_context()
    where = "row_sparse_array"
    if isinstance(arg1, tuple) and all(isinstance(v, (int, np.integer)) for v in arg1) and arg1:
        return wrap(st.zeros_raw("row_sparse", arg1, dtype_of(dtype or np.float32)), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = arg1
        src_dtype = data.dtype if isinstance(data, (np.ndarray, NDArray)) else np.float32
        data = np.ascontiguousarray(_np(data, dtype_of(dtype or src_dtype)))
        indices = _idx(indices, where, "indices")
        if data.ndim == 1 and len(indices) == 1 and shape is not None and len(shape) > 1:
            data = data.reshape((1,) + tuple(data.shape))
        if shape is None:
            nrow = int(indices.max()) + 1 if len(indices) else 0
            shape = (nrow,) + tuple(data.shape[1:])
        shape = _shape(shape)
        if data.shape[0] != len(indices):
            raise StorageError(f"{where}: data has {data.shape[0]} rows but indices has "
                               f"{len(indices)} entries")
        if len(indices) and (indices.min() < 0 or indices.max() >= shape[0]):
            raise StorageError(f"{where}: row indices must be in [0, {shape[0]}), got range "
                               f"[{int(indices.min())}, {int(indices.max())}]")
        if len(indices) > 1 and np.any(np.diff(indices) <= 0):
            from ..kernels import rsp as krsp
            raw = krsp.canonicalize_rsp(data, indices, shape)
        else:
            raw = st.RSP(data, indices, shape)
        st.check_rsp(raw.data, raw.indices, raw.shape, where, full=False)
        return wrap(raw, ctx)
    if isinstance(arg1, RowSparseNDArray):
        out = arg1.copy() if dtype is None else arg1.astype(dtype)
        out._ctx = ctx
        return out
    dense = _np(arg1, dtype_of(dtype) if dtype else None)
    if dense.dtype == np.float64 and dtype is None and not isinstance(arg1, np.ndarray):
        dense = dense.astype(np.float32)
    return wrap(st.dense_to_rsp(dense), ctx)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """All-zero array of the given storage type."""
    from .ndarray import zeros as _zeros
    return _zeros(shape, ctx=ctx, dtype=dtype, stype=stype)


def empty(stype, shape, ctx=None, dtype=None):
    """Like :func:`zeros`."""
    return zeros(stype, shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None):
    """Create a sparse array from a scipy matrix or a sparse NDArray (keeps its stype)."""
    if isinstance(source_array, RowSparseNDArray):
        return row_sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, CSRNDArray) or _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError("Unexpected source_array type: expected a scipy sparse matrix or a sparse "
                     f"NDArray, got {type(source_array).__name__}")


def _rebuild(kind, parts, shape):
    if kind == "default":
        return wrap(parts[0])
    if kind == "csr":
        return wrap(st.CSR(parts[0], parts[1], parts[2], shape))
    return wrap(st.RSP(parts[0], parts[1], shape))


def _reduce_raw(raw):
    if isinstance(raw, st.CSR):
        return _rebuild, ("csr", (raw.data, raw.indices, raw.indptr), raw.shape)
    if isinstance(raw, st.RSP):
        return _rebuild, ("row_sparse", (raw.data, raw.indices), raw.shape)
    return _rebuild, ("default", (raw,), raw.shape)
