"""CSRNDArray and RowSparseNDArray, and the ``nd.sparse`` constructors and arithmetic.

The registry's front ends are added to this module's namespace (``nd.sparse.dot``...), so
builtins that share an op's name (slice, sum, abs...) are reached through ``builtins`` here.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import storage as st
from ..base import DTypeError, ShapeError, StorageError, dtype_of
from ..context import Context, current_context, require_usable
from ..kernels import csr as kcsr
from ..kernels import rsp as krsp
from . import op as _op
from .ndarray import NDArray, _shape, install_methods, wrap
from .ndarray import zeros as _zeros

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "add", "subtract", "multiply",
           "divide"]

_slice = builtins.slice


class BaseSparseNDArray(NDArray):
    """Common base of the sparse array classes (MXNet's ``BaseSparseNDArray``)."""

    __slots__ = ()

    def __repr__(self):
        shape = "x".join(str(s) for s in self.shape)
        return f"\n<{type(self).__name__} {shape} @{self._ctx}>"

    def reshape(self, *shape, **kwargs):
        raise StorageError(f"reshape is not supported for {self.stype} NDArray; convert it "
                           "with tostype('default') first")

    def check_format(self, full_check=True):
        """Check the stored structure; raise StorageError naming what is wrong.

        Parameters
        ----------
        full_check : bool
            Also check index ranges and ordering (O(nnz)); otherwise only the lengths.
        """
        raw = self._raw
        if isinstance(raw, st.CSR):
            _check_csr_full(raw.data, raw.indices, raw.indptr, raw.shape, "check_format",
                            full_check)
        else:
            st.check_rsp(raw.data, raw.indices, raw.shape, "check_format", full_check)

    @property
    def data(self):
        """A copy of the stored values (MXNet returns a deep copy too)."""
        return wrap(self._raw.data.copy(), self._ctx)

    @property
    def indices(self):
        """A copy of the column (csr) or row (row_sparse) indices, int64."""
        return wrap(self._raw.indices.copy(), self._ctx)

    @property
    def _num_aux(self):
        return 2 if self.stype == "csr" else 1

    @property
    def _aux_types(self):
        return [np.int64] * self._num_aux

    def _aux_type(self, i):
        return np.int64

    def __setitem__(self, key, value):
        if not isinstance(key, _slice) or key != _slice(None):
            raise StorageError(f"{type(self).__name__} only supports assignment to [:], got "
                               f"{key!r}")
        if isinstance(value, NDArray) and value._raw is self._raw:
            return
        self._assign(value)

    # MXNet: a sparse array's in-place operators compute then copy back in its own stype
    def _iop(self, other, fn):
        res = fn(self, other)
        self._assign(res)
        return self

    def __iadd__(self, other):
        return self._iop(other, add)

    def __isub__(self, other):
        return self._iop(other, subtract)

    def __imul__(self, other):
        return self._iop(other, multiply)

    def __itruediv__(self, other):
        return self._iop(other, NDArray.__truediv__)

    # only the forward operators: a reflected one here would take priority over the dense
    # operand's own (Python prefers a subclass's override), unlike MXNet
    def __add__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return subtract(self, other)

    def __mul__(self, other):
        return multiply(self, other)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D compressed sparse row array, byte-compatible with ``scipy.sparse.csr_matrix``.

    Examples
    --------
    >>> import sparsym as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
    >>> a.asnumpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    >>> a[1].indices.asnumpy().tolist()
    [2]
    """

    __slots__ = ()

    @property
    def indptr(self):
        """A copy of the row pointers, int64."""
        return wrap(self._raw.indptr.copy(), self._ctx)

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` sharing this array's buffers (zero-copy)."""
        import scipy.sparse as sp
        r = self._raw
        if r.data.dtype == np.float16:
            raise DTypeError("asscipy: scipy.sparse has no float16; call astype('float32') "
                             "first")
        m = sp.csr_matrix(r.shape, dtype=r.data.dtype)
        m.data, m.indices, m.indptr = r.data, r.indices, r.indptr
        return m

    def __getitem__(self, key):
        """Rows ``a[i]`` or ``a[b:e]`` as csr (continuous slices on axis 0 only)."""
        m = self.shape[0]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            i = int(key)
            if not -m <= i < m:
                raise IndexError(f"index {i} is out of bounds for axis 0 with size {m}")
            i %= m
            key = _slice(i, i + 1)
        if isinstance(key, _slice):
            if key.step not in (None, 1):
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key == _slice(None):
                return self
            begin, end, _ = key.indices(m)
            sub = kcsr.slice_rows(self._raw, begin, builtins.max(begin, end))
            return wrap(st.CSR(sub.data.copy(), sub.indices.copy(), sub.indptr, sub.shape),
                        self._ctx)
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError(f"Undefined behaviour for {key!r}")


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
        """Keep only the rows listed in ``indices`` (NDArray or array-like of row ids)."""
        invoke = _op.invoke
        idx = indices if isinstance(indices, NDArray) else wrap(np.asarray(indices, np.int64))
        return invoke("_sparse_retain", [self, idx], {})[0]

    def __getitem__(self, key):
        if isinstance(key, _slice) and key == _slice(None):
            return self
        raise StorageError(f"RowSparseNDArray only supports [:] indexing, got {key!r}; "
                           "cast with tostype('default') to index rows")


# ---------------------------------------------------------------------- checks
def _check_csr_full(data, indices, indptr, shape, where, full=True):
    """Lengths, then (full) monotone indptr, column range and per-row sorted unique columns."""
    st.check_csr(data, indices, indptr, shape, where, full)
    if full and len(indices) > 1:
        d = np.diff(indices)
        starts = np.zeros(len(indices), dtype=bool)
        starts[indptr[1:-1][indptr[1:-1] < len(indices)]] = True
        bad = np.flatnonzero((d <= 0) & ~starts[1:])
        if len(bad):
            row = int(np.searchsorted(indptr, bad[0] + 1, side="right") - 1)
            raise StorageError(f"{where}: column indices of row {row} must be sorted and unique, "
                               f"got {indices[indptr[row]:indptr[row + 1]].tolist()[:10]}")


_RAW_SLOT = NDArray.__dict__["_raw"]   # the slot under the property below


class _UncheckedMixin:
    """A sparse array built from parts that fail the format check (MXNet builds these and
    reports them only in ``check_format``). Its parts are kept as given for
    ``check_format``, ``data``, ``indices`` (and ``indptr``); any computation raises the
    StorageError that names the defect, instead of running a kernel on invalid storage."""

    __slots__ = ()

    @property
    def _raw(self):
        raise StorageError(f"{self._why}; this {_RAW_SLOT.__get__(self).stype} array was "
                           "built from invalid parts (check_format() reports them): rebuild it "
                           "from valid parts")

    @property
    def shape(self):
        return tuple(_RAW_SLOT.__get__(self).shape)

    @property
    def dtype(self):
        return _RAW_SLOT.__get__(self).data.dtype.type

    @property
    def stype(self):
        return _RAW_SLOT.__get__(self).stype

    def check_format(self, full_check=True):
        raise StorageError(f"check_format: {self._why}")

    @property
    def data(self):
        return wrap(_RAW_SLOT.__get__(self).data.copy(), self._ctx)

    @property
    def indices(self):
        return wrap(_RAW_SLOT.__get__(self).indices.copy(), self._ctx)

    def __repr__(self):
        shape = "x".join(str(s) for s in self.shape)
        return f"\n<{type(self).__mro__[2].__name__} {shape} @{self._ctx} (invalid parts)>"


class _UncheckedCSRNDArray(_UncheckedMixin, CSRNDArray):
    __slots__ = ("_why",)

    @property
    def indptr(self):
        return wrap(_RAW_SLOT.__get__(self).indptr.copy(), self._ctx)


class _UncheckedRowSparseNDArray(_UncheckedMixin, RowSparseNDArray):
    __slots__ = ("_why",)


class _ResortedCSRNDArray(CSRNDArray):
    """Built from unsorted or duplicate column indices: computes on the sorted, summed form
    (as scipy does) while ``check_format`` reports the parts as MXNet does."""

    __slots__ = ("_why",)

    def check_format(self, full_check=True):
        raise StorageError(f"check_format: {self._why}")


class _ResortedRowSparseNDArray(RowSparseNDArray):
    """Built from unsorted or duplicate row indices: see _ResortedCSRNDArray."""

    __slots__ = ("_why",)

    def check_format(self, full_check=True):
        raise StorageError(f"check_format: {self._why}")


def _resorted(raw, why, ctx):
    """A canonical array whose ``check_format`` reports the given parts' defect ``why``."""
    cls = _ResortedCSRNDArray if isinstance(raw, st.CSR) else _ResortedRowSparseNDArray
    out = object.__new__(cls)
    out._raw = raw
    out._ctx = ctx
    out.writable = True
    out._ag = None
    out._why = why
    return out


def _unchecked(raw, why, ctx):
    """An array holding ``raw`` as given, which fails the format check with ``why``."""
    cls = _UncheckedCSRNDArray if isinstance(raw, st.CSR) else _UncheckedRowSparseNDArray
    out = object.__new__(cls)
    _RAW_SLOT.__set__(out, raw)
    out._ctx = ctx
    out.writable = False
    out._ag = None
    out._why = why
    return out


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
    try:
        return np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise DTypeError(f"cannot read {type(x).__name__} values as {np.dtype(dtype)}: {e}") \
            from None


def _idx(x, where, name):
    arr = _np(x)
    if arr.ndim > 1:  # MXNet: "invalid shape"
        raise StorageError(f"{where}: {name} must be 1-D, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise StorageError(f"{where}: {name} must be integers, got values of dtype "
                               f"{arr.dtype}")
    return np.ascontiguousarray(arr.reshape(-1), dtype=np.int64)


def _ctx_of(ctx):
    if ctx is None:
        return require_usable(current_context())
    return require_usable(ctx if isinstance(ctx, Context) else Context(ctx))


def _dtype(dtype, src):
    """MXNet's rule: the given dtype, else the source's (NDArray/numpy), else float32."""
    if dtype is not None:
        return dtype_of(dtype)
    if isinstance(src, (np.ndarray, NDArray)):
        return np.dtype(src.dtype)
    return np.dtype(np.float32)


def _same_shape(arg1, shape):
    """MXNet's check when both a shape tuple and ``shape`` are given."""
    if shape is not None and tuple(int(v) for v in arg1) != tuple(int(v) for v in shape):
        raise ShapeError("Shape mismatch detected. %s v.s. %s"
                         % (tuple(int(v) for v in arg1), tuple(int(v) for v in shape)))


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """Create a CSRNDArray.

    Parameters
    ----------
    arg1 : tuple, scipy sparse matrix, CSRNDArray, NDArray or array-like
        ``(data, indices, indptr)``; ``(data, (row, col))`` (COO, duplicates summed);
        ``(M, N)`` for an all-zero matrix; a scipy matrix; or a dense 2-D source.
        Unsorted or duplicate column indices within a row are sorted and summed for
        computation, and ``check_format()`` reports them (as MXNet's does).
    shape : tuple of int, optional
        Inferred from ``indptr`` and the largest column index when omitted.
    ctx : Context, optional
    dtype : str or numpy.dtype, optional
        Default: the source's dtype for numpy/NDArray/scipy sources, else float32.

    Returns
    -------
    CSRNDArray

    Raises
    ------
    StorageError
        Mismatched lengths. Parts with column indices out of range or a non-monotone
        ``indptr`` build an array (as MXNet's) whose ``check_format()`` names the defect
        and whose every use raises StorageError.
    """
    ctx = _ctx_of(ctx)
    where = "csr_matrix"
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(
            isinstance(v, (int, np.integer)) for v in arg1):
        _same_shape(arg1, shape)
        return wrap(st.zeros_raw("csr", _shape(arg1), dtype_of(dtype or np.float32)), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        data = _np(data, _dtype(dtype, data))
        if data.ndim > 1:  # MXNet: "invalid shape"
            raise StorageError(f"{where}: data must be 1-D, got shape {data.shape}")
        data = np.ascontiguousarray(data.reshape(-1))
        indices = _idx(indices, where, "indices")
        indptr = _idx(indptr, where, "indptr")
        if shape is None:
            if not len(indices):  # MXNet: the shape cannot be inferred (ValueError)
                raise ShapeError(f"{where}: cannot infer the shape from empty indices; pass "
                                 "shape=")
            shape = (len(indptr) - 1, int(indices.max()) + 1)
        shape = _shape(shape)
        if len(shape) != 2:
            raise ShapeError(f"{where}: a csr array is 2-D, got shape {shape}")
        try:
            _check_csr_full(data, indices, indptr, shape, where)
        except StorageError as err:
            if len(data) != len(indices) or len(indptr) != shape[0] + 1:
                raise   # the lengths disagree: not even MXNet builds this
            try:
                st.check_csr(data, indices, indptr, shape, where)
            except StorageError:   # out of range or a non-monotone indptr
                return _unchecked(st.CSR(data, indices, indptr, shape), str(err), ctx)
            return _resorted(_canonical_csr(data, indices, indptr, shape), str(err), ctx)
        return wrap(st.CSR(data, indices, indptr, shape), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        import scipy.sparse as sp
        data, (row, col) = arg1
        data = _np(data, _dtype(dtype, data)).reshape(-1)
        row, col = _idx(row, where, "row"), _idx(col, where, "col")
        if not (len(row) == len(col) == len(data)):
            raise StorageError(f"{where}: COO data, row and col must have the same length, got "
                               f"{len(data)}, {len(row)} and {len(col)}")
        if shape is None:
            shape = (int(row.max()) + 1 if len(row) else 0, int(col.max()) + 1 if len(col) else 0)
        shape = _shape(shape)
        for name, v, lim in (("row", row, shape[0]), ("col", col, shape[1])):
            if len(v) and (v.min() < 0 or v.max() >= lim):
                raise StorageError(f"{where}: {name} indices must be in [0, {lim}), got range "
                                   f"[{int(v.min())}, {int(v.max())}]")
        return csr_matrix(sp.coo_matrix((data, (row, col)), shape=shape).tocsr(), ctx=ctx)
    if _is_scipy_sparse(arg1):
        m = arg1.tocsr()
        if dtype is not None:
            m = m.astype(dtype_of(dtype))
        if shape is not None and _shape(shape) != m.shape:
            raise ShapeError(f"{where}: shape {_shape(shape)} does not match the scipy matrix "
                             f"shape {m.shape}")
        data = np.ascontiguousarray(m.data)
        indices = m.indices.astype(np.int64, copy=False)
        indptr = m.indptr.astype(np.int64, copy=False)
        st.check_csr(data, indices, indptr, m.shape, where)
        if not m.has_canonical_format:
            return wrap(_canonical_csr(data, indices, indptr, m.shape), ctx)
        return wrap(st.CSR(data, indices, indptr, m.shape), ctx)
    if isinstance(arg1, CSRNDArray):
        out = arg1.copy() if dtype is None else arg1.astype(dtype)
        out._ctx = ctx
        return out
    if isinstance(arg1, NDArray) and arg1.stype != "default":
        return csr_matrix(arg1.tostype("csr"), shape=shape, ctx=ctx, dtype=dtype)
    dense = _np(arg1, _dtype(dtype, arg1))
    if dense.ndim != 2:
        raise ShapeError(f"{where}: expected a 2-D source, got shape {dense.shape}")
    if shape is not None and _shape(shape) != dense.shape:
        raise ShapeError(f"{where}: shape {_shape(shape)} does not match the source's "
                         f"{dense.shape}")
    return wrap(st.dense_to_csr(dense), ctx)


def _canonical_csr(data, indices, indptr, shape):
    """Sort columns within rows and sum duplicates when the input is not canonical."""
    raw = st.CSR(data, indices, indptr, shape)
    if len(indices) < 2:
        return raw
    d = np.diff(indices)
    starts = np.zeros(len(indices), dtype=bool)
    starts[indptr[1:-1][indptr[1:-1] < len(indices)]] = True
    if not np.any((d <= 0) & ~starts[1:]):
        return raw
    return kcsr.canonicalize_csr(raw)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """Create a RowSparseNDArray.

    Parameters
    ----------
    arg1 : tuple, RowSparseNDArray, NDArray or array-like
        ``(data, indices)`` (unsorted or duplicate indices are sorted, duplicate rows
        summed for computation; ``check_format()`` reports them, as MXNet's does);
        ``(D0, D1, ...)`` for an all-zero array; or a dense source.
    shape : tuple of int, optional
    ctx : Context, optional
    dtype : str or numpy.dtype, optional

    Returns
    -------
    RowSparseNDArray

    Raises
    ------
    StorageError
        A data/indices length mismatch. Row indices out of range build an array (as
        MXNet's) whose ``check_format()`` names the defect and whose every use raises.
    """
    ctx = _ctx_of(ctx)
    where = "row_sparse_array"
    if isinstance(arg1, tuple) and arg1 and all(isinstance(v, (int, np.integer)) for v in arg1):
        _same_shape(arg1, shape)
        return wrap(st.zeros_raw("row_sparse", _shape(arg1), dtype_of(dtype or np.float32)), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = arg1
        data = np.ascontiguousarray(_np(data, _dtype(dtype, data)))
        indices = _idx(indices, where, "indices")
        if shape is not None and data.ndim == len(shape) - 1 and len(indices) == 1:
            data = data.reshape((1,) + tuple(data.shape))
        if shape is None:
            if not len(indices):  # MXNet: the shape cannot be inferred (ValueError)
                raise ShapeError(f"{where}: cannot infer the shape from empty indices; pass "
                                 "shape=")
            shape = (int(indices.max()) + 1,) + tuple(data.shape[1:])
        shape = _shape(shape)
        if data.ndim == 0 or data.shape[0] != len(indices):
            raise StorageError(f"{where}: data has {data.shape[0] if data.ndim else 0} rows but "
                               f"indices has {len(indices)} entries")
        if tuple(data.shape[1:]) != tuple(shape[1:]):
            raise ShapeError(f"{where}: data row shape {tuple(data.shape[1:])} does not match "
                             f"the array shape {shape}")
        raw = st.RSP(data, indices, shape)
        try:
            st.check_rsp(data, indices, shape, where)
        except StorageError as err:
            if len(indices) and (indices.min() < 0 or indices.max() >= shape[0]):
                return _unchecked(raw, str(err), ctx)
            return _resorted(krsp.canonicalize_rsp(data, indices, shape), str(err), ctx)
        return wrap(raw, ctx)
    if isinstance(arg1, RowSparseNDArray):
        out = arg1.copy() if dtype is None else arg1.astype(dtype)
        out._ctx = ctx
        return out
    if isinstance(arg1, NDArray) and arg1.stype != "default":
        return row_sparse_array(arg1.tostype("row_sparse"), shape=shape, ctx=ctx, dtype=dtype)
    dense = _np(arg1, _dtype(dtype, arg1))
    if shape is not None and _shape(shape) != dense.shape:
        raise ShapeError(f"{where}: shape {_shape(shape)} does not match the source's "
                         f"{dense.shape}")
    return wrap(st.dense_to_rsp(dense), ctx)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """All-zero array of the given storage type ('default', 'row_sparse' or 'csr'); as in
    MXNet, the shape () and zero-size shapes raise unless ``mx.np_shape()`` is active."""
    return _zeros(shape, ctx=ctx, dtype=dtype, stype=stype, **kwargs)


def empty(stype, shape, ctx=None, dtype=None):
    """Like :func:`zeros` (memory is always initialised; zeros' shape rules, as in MXNet)."""
    return zeros(stype, shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a scipy matrix or a sparse NDArray (keeps the storage type).

    The default dtype is the source's dtype.
    """
    if isinstance(source_array, RowSparseNDArray):
        return row_sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, CSRNDArray) or _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError("Unexpected source_array type: expected a scipy sparse matrix or a sparse "
                     f"NDArray, got {type(source_array).__name__}")


# ---------------------------------------------------------------------- arithmetic
def _ufunc(lhs, rhs, elem, bcast, scalar, rscalar=None):
    """MXNet's sparse _ufunc_helper: elemwise op for same shapes, else the broadcast op."""
    invoke = _op.invoke
    if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
        raise TypeError("at least one operand must be an NDArray")
    if isinstance(rhs, numbers.Number):
        return invoke(scalar, [lhs], {"scalar": float(rhs)})[0]
    if isinstance(lhs, numbers.Number):
        return invoke(rscalar or scalar, [rhs], {"scalar": float(lhs)})[0]
    lhs = lhs if isinstance(lhs, NDArray) else wrap(np.asarray(lhs, np.float32))
    rhs = rhs if isinstance(rhs, NDArray) else wrap(np.asarray(rhs, lhs.dtype))
    name = elem if lhs.shape == rhs.shape else bcast
    return invoke(name, [lhs, rhs], {})[0]


def add(lhs, rhs):
    """lhs + rhs: elemwise_add for equal shapes (csr+csr -> csr, rsp+rsp -> rsp), else
    broadcast_add; a scalar operand uses _plus_scalar."""
    return _ufunc(lhs, rhs, "elemwise_add", "broadcast_add", "_plus_scalar")


def subtract(lhs, rhs):
    """lhs - rhs with :func:`add`'s dispatch."""
    return _ufunc(lhs, rhs, "elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar")


def multiply(lhs, rhs):
    """lhs * rhs with :func:`add`'s dispatch (csr*dense -> csr, rsp*dense -> rsp)."""
    return _ufunc(lhs, rhs, "elemwise_mul", "broadcast_mul", "_mul_scalar")


def divide(lhs, rhs):
    """lhs / rhs with :func:`add`'s dispatch (csr / dense vector -> csr)."""
    return _ufunc(lhs, rhs, "elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar")



install_methods(CSRNDArray=CSRNDArray, RowSparseNDArray=RowSparseNDArray,
                is_scipy_sparse=_is_scipy_sparse, csr_matrix=csr_matrix)
