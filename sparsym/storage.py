"""Storage types and the raw containers kernels work on.

Raw values are what flow through kernels and the executor:

- ``default``: a ``numpy.ndarray``;
- ``csr``: :class:`CSR` (data, indices, indptr, shape), byte-compatible with scipy;
- ``row_sparse``: :class:`RSP` (data of shape (nnr,) + shape[1:], sorted unique int64 row indices).

Indices and indptr are int64 so a 8192 x 1,000,000 batch is ordinary.
"""
from __future__ import annotations

import math
import os
import weakref
from collections.abc import Callable

import numpy as np

from .base import AllocationError, ShapeError, StorageError

DEFAULT, ROW_SPARSE, CSR_STYPE = "default", "row_sparse", "csr"
STYPES = (DEFAULT, ROW_SPARSE, CSR_STYPE)
STYPE_ID = {"undefined": -1, DEFAULT: 0, ROW_SPARSE: 1, CSR_STYPE: 2}
ID_STYPE = {v: k for k, v in STYPE_ID.items()}
IDX = np.int64

# The csr <-> dense conversions are Numba kernels (kernels/csr.py), a layer above this one:
# kernels/csr.py installs them here when it is imported, which importing sparsym does.
_CSR_KERNELS = {}


def install_csr_kernels(to_dense: Callable[[CSR], np.ndarray],
                        from_dense: Callable[[np.ndarray], CSR]) -> None:
    """Install the kernels behind :func:`todense` of a CSR and :func:`dense_to_csr`."""
    _CSR_KERNELS["to_dense"] = to_dense
    _CSR_KERNELS["from_dense"] = from_dense


def _csr_kernel(name):
    try:
        return _CSR_KERNELS[name]
    except KeyError:
        raise StorageError("csr conversions need sparsym.kernels.csr: import sparsym "
                           "first") from None


class CSR:
    """Raw CSR matrix: ``data[indptr[i]:indptr[i+1]]`` are row i's values at ``indices[...]``."""

    __slots__ = ("data", "indices", "indptr", "shape")
    stype = CSR_STYPE

    def __init__(self, data, indices, indptr, shape):
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.shape = tuple(map(int, shape))

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def nnz(self):
        return int(self.indptr[-1]) if len(self.indptr) else 0

    def copy(self):
        return CSR(self.data.copy(), self.indices.copy(), self.indptr.copy(), self.shape)

    def __repr__(self):
        return f"CSR(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})"


class RSP:
    """Raw row-sparse array: rows ``indices`` (sorted, unique int64) hold ``data``."""

    __slots__ = ("data", "indices", "shape")
    stype = ROW_SPARSE

    def __init__(self, data, indices, shape):
        self.data = data
        self.indices = indices
        self.shape = tuple(map(int, shape))

    @property
    def dtype(self):
        return self.data.dtype

    def copy(self):
        return RSP(self.data.copy(), self.indices.copy(), self.shape)

    def __repr__(self):
        return f"RSP(shape={self.shape}, nnr={len(self.indices)}, dtype={self.dtype})"


def stype_of(raw) -> str:
    """Storage type name of a raw value."""
    return raw.stype if isinstance(raw, (CSR, RSP)) else DEFAULT


def check_stype(stype, where="") -> str:
    """Validate a storage-type name."""
    if stype is None:
        return DEFAULT
    if stype not in STYPES:
        raise StorageError(f"{where}invalid storage type {stype!r}; expected one of {STYPES}")
    return stype


# ----------------------------------------------------------------------------- allocation
def _physical_memory() -> int:
    """Bytes of RAM on this machine (a generous 2**50 where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 1 << 50


_MEMORY = _physical_memory()


def check_alloc(shape, dtype, where, stored=None):
    """Refuse a negative dim, or an array larger than the machine's memory before numpy tries
    (which would fail with a bare MemoryError or commit pages until the OOM killer acts).
    ``stored`` is the shape actually allocated when it is not ``shape`` (sparse arrays)."""
    for d in shape:
        if d < 0:
            raise ShapeError(f"{where}: shape dim size must be >= 0, got {tuple(shape)}")
    need = np.dtype(dtype).itemsize
    for d in (shape if stored is None else stored):
        need *= d
    if need > _MEMORY:
        raise AllocationError(f"{where}: an array of shape {tuple(shape)} and dtype "
                              f"{np.dtype(dtype).name} needs {need / 2**30:.4g} GiB, more than "
                              f"this machine's {_MEMORY / 2**30:.4g} GiB of memory")


# ----------------------------------------------------------------------------- conversions
def zeros_raw(stype, shape, dtype=np.float32):
    """An all-zero raw value of the given stype."""
    shape = tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    # sparse zeros store nothing but a csr indptr
    check_alloc(shape, IDX if stype == CSR_STYPE else dtype, f"{stype} zeros",
                None if stype == DEFAULT else (shape[0] + 1,) if stype == CSR_STYPE else ())
    if stype == DEFAULT:
        return np.zeros(shape, dtype=dtype)
    if stype == CSR_STYPE:
        if len(shape) != 2:
            raise StorageError(f"csr storage needs a 2-D shape, got {shape}")
        return CSR(np.zeros(0, dtype), np.zeros(0, IDX), np.zeros(shape[0] + 1, IDX), shape)
    if stype == ROW_SPARSE:
        if len(shape) < 1:
            raise StorageError(f"row_sparse storage needs at least 1 dimension, got {shape}")
        return RSP(np.zeros((0,) + shape[1:], dtype), np.zeros(0, IDX), shape)
    raise StorageError(f"invalid storage type {stype!r}; expected one of {STYPES}")


def todense(raw) -> np.ndarray:
    """Densify any raw value (dense values are returned as they are)."""
    if isinstance(raw, np.ndarray):
        return raw
    if isinstance(raw, CSR):
        check_alloc(raw.shape, raw.data.dtype, "densifying a csr array")
        return _csr_kernel("to_dense")(raw)
    if isinstance(raw, RSP):
        check_alloc(raw.shape, raw.data.dtype, "densifying a row_sparse array")
        out = np.zeros(raw.shape, dtype=raw.data.dtype)
        if len(raw.indices):
            out[raw.indices] = raw.data
        return out
    return np.asarray(raw)


def dense_to_csr(x: np.ndarray) -> CSR:
    """Compress a 2-D dense array (explicit zeros dropped)."""
    if x.ndim != 2:
        raise StorageError(f"cast_storage to csr needs a 2-D array, got shape {x.shape}")
    return _csr_kernel("from_dense")(x)


def dense_to_rsp(x: np.ndarray) -> RSP:
    """Keep the rows of ``x`` that have a non-zero."""
    if x.ndim == 0:
        raise StorageError("cast_storage to row_sparse needs at least 1 dimension")
    rows = x.reshape(x.shape[0], math.prod(x.shape[1:]))  # -1 cannot be inferred at size 0
    nz = np.flatnonzero(rows.any(axis=1)).astype(IDX)
    return RSP(np.ascontiguousarray(x[nz]), nz, x.shape)


def cast_raw(raw, stype):
    """Convert a raw value to ``stype`` (every direction, including csr <-> row_sparse)."""
    cur = stype_of(raw)
    if cur == stype:
        return raw
    if stype == DEFAULT:
        return todense(raw)
    if cur == CSR_STYPE and stype == ROW_SPARSE:
        # go beyond MXNet (NI there): rows with stored entries become the rsp rows
        counts = np.diff(raw.indptr)
        rows = np.flatnonzero(counts).astype(IDX)
        dense = todense(raw)
        return RSP(np.ascontiguousarray(dense[rows]), rows, raw.shape)
    dense = todense(raw)
    if stype == CSR_STYPE:
        return dense_to_csr(dense)
    if stype == ROW_SPARSE:
        return dense_to_rsp(dense)
    raise StorageError(f"invalid storage type {stype!r}; expected one of {STYPES}")


def astype_raw(raw, dtype):
    """``raw`` with values of ``dtype``; sparse containers keep their structure (no copy when
    the values already have that dtype)."""
    if raw.dtype == dtype:
        return raw
    if isinstance(raw, RSP):
        return RSP(raw.data.astype(dtype), raw.indices, raw.shape)
    if isinstance(raw, CSR):
        return CSR(raw.data.astype(dtype), raw.indices, raw.indptr, raw.shape)
    return raw.astype(dtype)


def nbytes(raw) -> int:
    """Bytes held by a raw value."""
    if isinstance(raw, CSR):
        return raw.data.nbytes + raw.indices.nbytes + raw.indptr.nbytes
    if isinstance(raw, RSP):
        return raw.data.nbytes + raw.indices.nbytes
    return raw.nbytes


# ----------------------------------------------------------------------------- checks
def check_csr(data, indices, indptr, shape, where="csr_matrix", full=True):
    """Validate CSR parts once at the edge; raise StorageError naming what is wrong."""
    if len(shape) != 2:
        raise StorageError(f"{where}: csr shape must be 2-D, got {tuple(shape)}")
    m, n = shape
    if indptr.ndim != 1 or len(indptr) != m + 1:
        raise StorageError(f"{where}: indptr must have length rows+1 = {m + 1}, got {len(indptr)}")
    if len(indices) != len(data):
        raise StorageError(f"{where}: indices and data must have the same length, got "
                           f"{len(indices)} and {len(data)}")
    if len(indptr) and (indptr[0] != 0 or indptr[-1] != len(data)):
        raise StorageError(f"{where}: indptr must start at 0 and end at nnz={len(data)}, got "
                           f"{int(indptr[0])}..{int(indptr[-1])}")
    if full:
        if np.any(np.diff(indptr) < 0):
            raise StorageError(f"{where}: indptr must be non-decreasing")
        if len(indices) and (indices.min() < 0 or indices.max() >= n):
            raise StorageError(f"{where}: column indices must be in [0, {n}), got range "
                               f"[{int(indices.min())}, {int(indices.max())}]")


def check_rsp(data, indices, shape, where="row_sparse_array", full=True):
    """Validate row-sparse parts: sorted unique in-range indices, matching data rows."""
    if data.shape[0] != len(indices):
        raise StorageError(f"{where}: data has {data.shape[0]} rows but indices has "
                           f"{len(indices)} entries")
    if tuple(data.shape[1:]) != tuple(shape[1:]):
        raise StorageError(f"{where}: data row shape {tuple(data.shape[1:])} does not match "
                           f"array shape {tuple(shape)}")
    if full and len(indices):
        if indices.min() < 0 or indices.max() >= shape[0]:
            raise StorageError(f"{where}: row indices must be in [0, {shape[0]}), got range "
                               f"[{int(indices.min())}, {int(indices.max())}]")
        if np.any(np.diff(indices) <= 0):
            raise StorageError(f"{where}: row indices must be sorted and unique")


# ----------------------------------------------------------------------- buffer versions
# Write versions of dense buffers, for caches of values derived from an array (oneDNN's
# blocked copy of a convolution weight, a convolution folded with its BatchNorm): a cache
# entry is valid while the buffer's version is the one it was built at. Every in-place write
# to an NDArray's dense buffer goes through a path that calls :func:`bump` (NDArray
# assignment and in-place operators, ``out=`` of operators, optimizer updates, the
# executor's writes into bound arrays). Versions live on the base buffer (a write through
# any view bumps it) and are tracked only for buffers someone asked :func:`version` of.
_VERSIONS: dict = {}  # id(base ndarray) -> [weakref to it, version]
_NEXT = [0]


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def bump(raw) -> None:
    """Record a write into dense buffer ``raw`` (any view of it): caches built from it
    before are stale. A no-op for sparse containers and untracked buffers."""
    if _VERSIONS and raw.__class__ is np.ndarray:
        e = _VERSIONS.get(id(_root(raw)))
        if e is not None:
            _NEXT[0] += 1
            e[1] = _NEXT[0]


def version(raw) -> int:
    """The write version of dense buffer ``raw`` (its base buffer's; tracked from now on)."""
    b = _root(raw)
    k = id(b)
    e = _VERSIONS.get(k)
    if e is None or e[0]() is not b:
        def drop(ref, k=k):
            if _VERSIONS.get(k, (None,))[0] is ref:
                del _VERSIONS[k]
        _NEXT[0] += 1
        e = _VERSIONS[k] = [weakref.ref(b, drop), _NEXT[0]]
    return e[1]
