"""Dense batched linear-algebra kernels of MXNet's ``linalg`` operators and their gradients.

Every function takes arrays whose last two axes are the matrices (leading axes batch) and
returns new arrays. Triangular inputs are read through their triangle only (as LAPACK
does), and the gradients are written to that triangle.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError


def t(a):
    """Transpose of the last two axes."""
    return np.swapaxes(a, -1, -2)


def tri(a, lower):
    """The lower (or upper) triangle of the matrices, zeros elsewhere."""
    return np.tril(a) if lower else np.triu(a)


def sym_from_lower(a):
    """A symmetric matrix built from the lower triangle of ``a`` (MXNet's copyLTU)."""
    low = np.tril(a)
    return low + t(np.tril(a, -1))


def _batched(fn, *arrs):
    """Apply a 2-D function over the broadcast batch of matrices."""
    batch = arrs[0].shape[:-2]
    if not batch:
        return fn(*arrs)
    flat = [a.reshape((-1,) + a.shape[-2:]) for a in arrs]
    res = [fn(*m) for m in zip(*flat)]
    return np.stack(res).reshape(batch + res[0].shape)


# ----------------------------------------------------------------------------- factorizations
def potrf(a, lower=True):
    """Lower Cholesky factor L of each symmetric positive definite matrix (lower triangle read);
    with ``lower=False`` the upper factor U = L^T, A = U^T U (upper triangle read)."""
    if not lower:
        return t(potrf(t(a)))
    try:
        return np.linalg.cholesky(sym_from_lower(a))
    except np.linalg.LinAlgError:
        raise MXNetError("linalg.potrf: the input matrix is not positive definite") from None


def inverse(a):
    """The inverse of each square matrix; a singular one raises MXNet's error."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise MXNetError("linalg.inverse: the input matrix is non-convertible (singular), "
                         f"in a batch of shape {tuple(a.shape)}") from None


def potrf_grad(g, low, lower=True):
    """dA = 0.5 * L^-T copyLTU(L^T dL) L^-1 (MXNet's symmetric gradient); ``low`` is the
    factor potrf returned (upper when not ``lower``)."""
    if not lower:
        return t(potrf_grad(t(g), t(low)))
    linv = np.linalg.inv(low)
    return 0.5 * t(linv) @ sym_from_lower(t(low) @ np.tril(g)) @ linv


def potri(low, lower=True):
    """(L L^T)^-1 from the lower Cholesky factor L (from the upper U, (U^T U)^-1, when not
    ``lower``)."""
    if not lower:
        return potri(t(low))
    linv = np.linalg.inv(np.tril(low))
    return t(linv) @ linv


def potri_grad(g, low, out, lower=True):
    """dL = -tril(X (G + G^T) X L), X = (L L^T)^-1 (its transpose for an upper factor)."""
    if not lower:
        return t(potri_grad(g, t(low), out))
    return -np.tril(out @ (g + t(g)) @ out @ np.tril(low))


def gelqf(a):
    """(Q, L) with A = L Q, Q's rows orthonormal, L lower triangular (A is m x n, m <= n)."""
    if a.shape[-2] > a.shape[-1]:
        raise MXNetError(f"linalg.gelqf: the matrix must have no more rows than columns, got "
                         f"shape {a.shape}")
    q, r = np.linalg.qr(t(a))
    return t(q), t(r)


def gelqf_grad(dq, dl, q, low):
    """dA = L^-T (dQ + copyLTU(M) Q), M = L^T dL - dQ Q^T."""
    m = t(low) @ dl - dq @ t(q)
    lit = t(np.linalg.inv(low))
    return lit @ (dq + sym_from_lower(m) @ q)


def syevd(a):
    """(U, lam): A = U^T diag(lam) U, eigenvalues ascending, each row of U with its entry of
    largest magnitude positive (MXNet's sign convention)."""
    lam, v = np.linalg.eigh(sym_from_lower(a))
    u = t(v)
    idx = np.abs(u).argmax(axis=-1)[..., None]
    sign = np.sign(np.take_along_axis(u, idx, axis=-1))
    sign[sign == 0] = 1
    return u * sign, lam


def syevd_grad(du, dlam, u, lam):
    """dA = U^T (diag(dlam) + sym(F o (dU U^T))) U, F_ij = 1 / (lam_i - lam_j) off the diagonal."""
    diff = lam[..., :, None] - lam[..., None, :]
    n = lam.shape[-1]
    with np.errstate(divide="ignore"):
        f = np.where(np.eye(n, dtype=bool), 0.0, 1.0 / np.where(diff == 0, np.inf, diff))
    inner = f * (du @ t(u))
    inner = 0.5 * (inner + t(inner))
    inner = inner + dlam[..., :, None] * np.eye(n)
    return t(u) @ inner @ u


# ----------------------------------------------------------------------------- triangular
def _opm(a, lower, transpose):
    m = tri(a, lower)
    return t(m) if transpose else m


def _tri_grad(dm, lower, transpose):
    return tri(t(dm) if transpose else dm, lower)


def trsm(a, b, transpose, rightside, lower, alpha):
    """alpha * op(A)^-1 B, or alpha * B op(A)^-1 with ``rightside``."""
    m = _opm(a, lower, transpose)
    if rightside:
        return alpha * t(_solve(t(m), t(b), not lower if not transpose else lower))
    return alpha * _solve(m, b, lower if not transpose else not lower)


def _solve(m, b, lower):
    import scipy.linalg as sla  # imported on use: it costs ~0.3 s at package import
    return _batched(lambda x, y: sla.solve_triangular(x, y, lower=lower), *np.broadcast_arrays(
        m, b) if m.shape[:-2] != b.shape[:-2] else (m, b))


def trsm_grad(g, a, out, transpose, rightside, lower, alpha):
    """(dA, dB) of :func:`trsm`, given its output."""
    m = _opm(a, lower, transpose)
    minv = np.linalg.inv(m)
    if rightside:
        db = alpha * g @ t(minv)
        dm = -t(out) @ g @ t(minv)
    else:
        db = alpha * t(minv) @ g
        dm = -t(minv) @ g @ t(out)
    return _tri_grad(dm, lower, transpose), db


def trmm(a, b, transpose, rightside, lower, alpha):
    """alpha * op(A) B, or alpha * B op(A) with ``rightside`` (A's triangle only)."""
    m = _opm(a, lower, transpose)
    return alpha * (b @ m if rightside else m @ b)


def trmm_grad(g, a, b, transpose, rightside, lower, alpha):
    """(dA, dB) of :func:`trmm`."""
    m = _opm(a, lower, transpose)
    if rightside:
        dm, db = alpha * t(b) @ g, alpha * g @ t(m)
    else:
        dm, db = alpha * g @ t(b), alpha * t(m) @ g
    return _tri_grad(dm, lower, transpose), db


# ----------------------------------------------------------------------------- diagonals, triangles
def extractdiag(a, offset):
    return np.ascontiguousarray(np.diagonal(a, offset, -2, -1))


def makediag(d, offset):
    n = d.shape[-1] + abs(offset)
    out = np.zeros(d.shape[:-1] + (n, n), d.dtype)
    i = np.arange(d.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = d
    return out


def _trian_index(n, offset, lower):
    """(rows, cols) of the packed triangle in MXNet's order."""
    if offset > 0 or (offset == 0 and not lower):
        c, r = _trian_index(n, -offset, True)  # the upper triangle is the transpose's lower
        return r, c
    r, c = np.tril_indices(n, offset)
    return r, c


def extracttrian(a, offset, lower):
    r, c = _trian_index(a.shape[-1], offset, lower)
    return np.ascontiguousarray(a[..., r, c])


def trian_size(k, offset):
    """Matrix size n whose triangle at ``offset`` holds k entries, or None."""
    m = int((np.sqrt(8 * k + 1) - 1) / 2 + 0.5)
    return m + abs(offset) if m * (m + 1) // 2 == k else None


def maketrian(v, offset, lower):
    n = trian_size(v.shape[-1], offset)
    if n is None:
        raise MXNetError(f"linalg.maketrian: the last axis ({v.shape[-1]}) is not a "
                         f"triangular number")
    r, c = _trian_index(n, offset, lower)
    out = np.zeros(v.shape[:-1] + (n, n), v.dtype)
    out[..., r, c] = v
    return out


def khatri_rao(mats):
    """Column-wise Kronecker product of matrices (n_i, k) -> (prod n_i, k)."""
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, out.shape[-1])
    return out
