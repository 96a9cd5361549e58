"""Random arrays, shapes and matrices of mx.test_utils (NumPy's global generator, as MXNet's)."""
from __future__ import annotations

import types

import numpy as np
import numpy.random as rnd

from .. import storage as st
from ..base import MXNetError
from ..context import current_context
from ..ndarray.ndarray import wrap
from ._compare import assign_each


def default_context():
    """The context tests run on: the current context (cpu(0) unless set)."""
    return current_context()


def default_dtype():
    """The dtype of generated test data (float32)."""
    return np.float32


def random_arrays(*shapes):
    """Standard-normal float32 arrays (a 0-d array for shape ()); one array or a list."""
    arrays = [np.array(rnd.randn(), dtype=default_dtype()) if len(s) == 0
              else rnd.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Uniform arrays in [low, high) (keywords low=0, high=1, dtype=float32); always a list."""
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError("Got unexpected argument/s : " + str(kwargs.keys()))
    return [rnd.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """k elements of ``population`` in random order (no repeats)."""
    assert 0 <= k <= len(population)
    pop = list(population)
    rnd.shuffle(pop)
    return pop[:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with sides in [1, dim] ([0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape with sides in [1, dim] ([0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-D shape with sides in [1, dim] ([0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random int64 point (x, y), x in [x_low, x_high), y in [y_low, y_high)."""
    return (rnd.randint(x_low, x_high, dtype=np.int64),
            rnd.randint(y_low, y_high, dtype=np.int64))


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row, leaving the values in place (MXNet's
    helper: it moves values to other columns of their row).

    ``csr`` is a scipy CSR matrix (shuffled in place, left unsorted) or a CSRNDArray,
    which sparsym keeps canonical: it is re-sorted after the shuffle.
    """
    raw = getattr(csr, "_raw", csr)
    indptr = np.asarray(raw.indptr)
    for i in range(len(indptr) - 1):
        seg = np.array(raw.indices[indptr[i]:indptr[i + 1]])
        rnd.shuffle(seg)
        raw.indices[indptr[i]:indptr[i + 1]] = seg
    if raw is not csr:
        for i in range(len(indptr) - 1):
            a, b = int(indptr[i]), int(indptr[i + 1])
            order = np.argsort(raw.indices[a:b], kind="stable")
            raw.indices[a:b] = raw.indices[a:b][order]
            raw.data[a:b] = raw.data[a:b][order]


def _check_csr_request(num_rows, num_cols, density, distribution):
    """MXNet's validation of a csr generation request (ValueError when impossible)."""
    if density < 0 or density > 1:
        raise ValueError("density has to be between 0 and 1")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    if distribution == "powerlaw" and int(num_rows * num_cols * density) < 2 * num_rows:
        raise ValueError("not supported for this density: %s for this shape (%s, %s) Please "
                         "keep : num_rows * num_cols * density >= 2 * num_rows"
                         % (density, num_rows, num_cols))


def _uniform_csr(shape, density, dtype, data_init, shuffle_indices, ctx):
    """round(density * m * n) distinct positions, values uniform in [0, 1) (scipy.sparse.rand)."""
    import scipy.sparse as sp

    from ..ndarray import sparse
    m, n = shape
    _check_csr_request(m, n, density, "uniform")
    mat = sp.random(m, n, density=density, format="csr", dtype=np.float64,
                    random_state=rnd.mtrand._rand)
    data = mat.data.astype(dtype)
    if data_init is not None:
        data.fill(data_init)
    indices = mat.indices.astype(np.int64)
    if shuffle_indices:  # on the parts, before the constructor makes them canonical
        shuffle_csr_column_indices(types.SimpleNamespace(indptr=mat.indptr, indices=indices))
    return sparse.csr_matrix((data, indices, mat.indptr.astype(np.int64)), shape=(m, n),
                             dtype=dtype, ctx=ctx)


def _powerlaw_csr(shape, density, dtype, ctx):
    """Rows whose non-zero counts double (1, 2, 4, ...) until density * m * n are placed;
    every row first gets one value so that none is empty (MXNet's powerlaw layout)."""
    m, n = shape
    _check_csr_request(m, n, density, "powerlaw")
    left = int(m * n * density)
    out = np.zeros((m, n), dtype=dtype)

    def done():
        return wrap(st.dense_to_csr(out), ctx)

    for row in range(m):
        out[row, 0] = 1 + rnd.uniform(0.001, 2)
        left -= 1
        if left <= 0:
            return done()
    width = 2
    for row in range(m):
        limit = min(n, width)
        if limit == n and left > limit:
            out[row] = 1 + rnd.uniform(0.001, 2)
            left -= limit - 1
            if left <= 0:
                return done()
            continue
        for col in range(1, limit):
            out[row, col] = 1 + rnd.uniform(0.001, 2)
            left -= 1
            if left <= 0:
                return done()
        width *= 2
    if left > 0:
        raise ValueError("not supported for this density: %s for this shape (%s,%s)"
                         % (density, m, n))
    return done()


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts.

    Parameters
    ----------
    shape : tuple
    stype : {'csr', 'row_sparse'}
    density : float, optional
        Fraction of stored entries (csr) or the chance that a row is stored (row_sparse);
        random when None.
    dtype : dtype, optional
        float32 when None.
    distribution : {'uniform', 'powerlaw'}, optional
        'powerlaw' (csr only): row non-zero counts double from row to row.
    data_init : float, optional
        Fill value for the stored values.
    rsp_indices : array, optional
        The stored rows of a row_sparse result.
    modifier_func : callable, optional
        Applied to each stored value of a row_sparse result.
    shuffle_csr_indices : bool
        Leave csr column indices unordered within rows.
    ctx : Context, optional

    Returns
    -------
    (CSRNDArray, (indptr, indices, data)) or (RowSparseNDArray, (values, row_indices))

    Examples
    --------
    >>> from sparsym.test_utils import rand_sparse_ndarray
    >>> arr, (indptr, indices, data) = rand_sparse_ndarray((5, 16), 'csr', density=0.5,
    ...                                                    distribution='powerlaw')
    >>> arr.stype
    'csr'
    """
    ctx = ctx or default_context()
    density = rnd.rand() if density is None else density
    dtype = np.dtype(default_dtype() if dtype is None else dtype)
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        if distribution != "uniform":
            raise MXNetError(f"Distribution {distribution} not supported for row_sparse")
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices)
            assert len(indices) <= shape[0]
        else:
            indices = np.argwhere(rnd.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            arr = wrap(st.zeros_raw("row_sparse", tuple(shape), dtype), ctx)
            return arr, (np.array([], dtype=dtype), np.array([]))
        val = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func)
        from ..ndarray import sparse
        arr = sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise MXNetError(f"rand_sparse_ndarray: csr needs a 2-D shape, got {shape}")
        if distribution == "uniform":
            arr = _uniform_csr(tuple(shape), density, dtype, data_init, shuffle_csr_indices, ctx)
        elif distribution == "powerlaw":
            arr = _powerlaw_csr(tuple(shape), density, dtype, ctx)
        else:
            raise MXNetError(f"Distribution not supported: {distribution}")
        return arr, (arr.indptr, arr.indices, arr.data)
    raise MXNetError(f"unknown storage type {stype!r}; expected 'csr' or 'row_sparse'")


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random array of any storage type.

    Dense values are standard normal; sparse ones come from :func:`rand_sparse_ndarray`.

    Examples
    --------
    >>> from sparsym.test_utils import rand_ndarray
    >>> rand_ndarray((3, 4), 'row_sparse', density=1.0).shape
    (3, 4)
    """
    ctx = ctx or default_context()
    if stype == "default":
        from ..ndarray import array
        return array(random_arrays(shape), dtype=dtype, ctx=ctx)
    return rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                               dtype=dtype, shuffle_csr_indices=shuffle_csr_indices,
                               distribution=distribution, ctx=ctx)[0]


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array; row_sparse indices given are sorted first."""
    if stype == "row_sparse":
        idx = None if rsp_indices is None else np.sort(np.asarray(rsp_indices))
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                   rsp_indices=idx, dtype=dtype, modifier_func=modifier_func)[0]
    if stype == "csr":
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                   dtype=dtype, modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices)[0]
    raise AssertionError("Unknown storage type: " + stype)


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """Like :func:`create_sparse_array`; a row_sparse array stores only ``rsp_indices``."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None:
            assert len(rsp_indices) <= shape[0]
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A rows x columns NDArray whose row i holds i (large-tensor tests)."""
    from .. import ndarray as nd
    a = nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return nd.broadcast_to(a, shape=(a.shape[0], columns))


def create_vector(size, dtype=np.int64):
    """arange(size) as an NDArray (large-vector tests)."""
    from .. import ndarray as nd
    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """A size x size float32 identity NDArray."""
    from .. import ndarray as nd
    return nd.array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    """Two stacked identity matrices, shape (2, size, size)."""
    from .. import ndarray as nd
    eye = np.eye(size, dtype=np.float32)
    return nd.array(np.stack([eye, eye]))


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned n x n matrix with real eigenvalues in [-10, 10]."""
    while True:
        d = np.diag(rnd.uniform(-1.0, 1.0, n))
        v = rnd.uniform(-1.0, 1.0, n).reshape(n, 1)
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        q = np.matmul(np.eye(n) - 2 * np.matmul(v, v.T), d)
        if np.linalg.cond(q, 2) < 3:
            break
    d = np.diag(rnd.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), d), q)


def new_matrix_with_real_eigvals_nd(shape):
    """A stack of :func:`new_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random n x n orthonormal matrix (Q of a QR decomposition)."""
    x = rnd.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric n x n matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    d = np.diag(rnd.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, d), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A stack of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(n)]).reshape(shape)
