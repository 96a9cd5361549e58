"""MXNet's linalg operators (_linalg_gemm ... _linalg_maketrian, with their linalg_* aliases)
and khatri_rao, on the batched kernels of kernels/linalg.py.

The matrices are the last two axes (gemm/gemm2: the ``axis`` given and the last one); the
leading axes are a batch. Every gradient is a registered ``_backward_linalg_*`` op.
"""
from __future__ import annotations

import numpy as np

from ...kernels import blas
from ...kernels import linalg as kl
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_F = np.float64


def _fl(x):
    """Compute in float64 (float32 results are cast back, as MXNet's LAPACK calls are in the
    data's precision; float64 keeps the gradients of ill-conditioned inputs usable)."""
    return x.astype(_F, copy=False)


def _rows(n, kernel):
    return (Dispatch((DNS,) * n, (DNS,), _blas_policy(kernel)),)


def _blas_policy(kernel):
    """The kernel under the BLAS thread policy (kernels/blas.py) for its largest matrix
    batch, about batch * n^3 multiply-adds: LAPACK's many small calls suffer most from
    spinning threads on a busy machine (a 256x256 eigh took 6 s with two threads and 76 ms
    with one at load 13 on 2 cores)."""
    def run(attrs, xs):
        work = max((x.size * x.shape[-1] for x in xs if getattr(x, "ndim", 0) >= 2),
                   default=0)
        with blas.gemm_threads(work):
            return kernel(attrs, xs)
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


def _bwd(bname, inputs_of, n):
    """Gradient builder: ``inputs_of(node, og)`` lists the backward op's inputs."""
    def grad(node, og):
        return multi_bw(bname, inputs_of(node, og), node, "backward", n, **kept(node))
    return grad


def _reg(name, params, inputs, kernel, shape, grad=None, n_out=1, out_names=("output",),
         doc="", bwd=None, extra_aliases=()):
    """Register ``_linalg_<name>`` (aliases linalg_<name>) and its backward op.

    ``bwd``: (backward inputs, kernel, n grads[, shape rule]) or None (no gradient); without
    a shape rule the backward op takes (ograd, forward inputs...) and gradient i is shaped
    like forward input i.
    """
    full = f"_linalg_{name}"
    register(OpDef(full, params=params, inputs=inputs, dispatch=_rows(len(inputs), kernel),
                   num_outputs=n_out, output_names=out_names, infer_shape=shape,
                   infer_type=rules.same_type, gradient=grad,
                   aliases=(f"linalg_{name}",) + tuple(extra_aliases), doc=doc))
    if bwd is not None:
        b_ins, b_kernel, n, *b_shape = bwd
        register(OpDef(f"_backward_linalg_{name}", params=params, inputs=b_ins, num_outputs=n,
                       dispatch=_rows(len(b_ins), b_kernel),
                       infer_shape=b_shape[0] if b_shape else rules.grads_like_inputs(1),
                       infer_type=rules.same_type))


def _cast(x, like):
    return np.ascontiguousarray(x, dtype=like.dtype)


def _sq(shape, what="input"):
    """Check a square matrix batch; returns n or None."""
    if shape is None:
        return None
    if len(shape) < 2:
        raise rules.Conflict("shape", 0, what, "a matrix (at least 2 dims)", shape)
    if shape[-1] is not None and shape[-2] is not None and shape[-1] != shape[-2]:
        raise rules.Conflict("shape", 0, what, "square matrices (..., n, n)", shape)
    return shape[-1]


def _batch_out(shape):
    """Shape of a per-matrix scalar: the batch, (1,) for a single matrix (as MXNet)."""
    return tuple(shape[:-2]) or (1,)


# ----------------------------------------------------------------------------- gemm, gemm2
_GEMM_COMMON = dict(transpose_a=Field("bool", False), transpose_b=Field("bool", False),
                    alpha=Field("float", 1.0))
_GEMM = Params(**_GEMM_COMMON, beta=Field("float", 1.0), axis=Field("int", -2))
_GEMM2 = Params(**_GEMM_COMMON, axis=Field("int", -2))


def _to_mat(x, axis):
    """Move the row axis to -2 (the columns are the last axis)."""
    return x if axis % x.ndim == x.ndim - 2 else np.moveaxis(x, axis, -2)


def _from_mat(x, axis, ndim):
    return x if axis % ndim == ndim - 2 else np.moveaxis(x, -2, axis)


def _ops(a, A, B):
    Am, Bm = _to_mat(A, a.axis), _to_mat(B, a.axis)
    return (kl.t(Am) if a.transpose_a else Am), (kl.t(Bm) if a.transpose_b else Bm)


def _gemm2_fwd(a, xs):
    A, B = xs[0], xs[1]
    opa, opb = _ops(a, _fl(A), _fl(B))
    out = a.alpha * (opa @ opb)
    if len(xs) > 2:
        out = out + a.beta * _to_mat(_fl(xs[2]), a.axis)
    return (_cast(_from_mat(out, a.axis, A.ndim), A),)


def _gemm_bwd(a, xs):
    g, A, B = _fl(xs[0]), _fl(xs[1]), _fl(xs[2])
    gm = _to_mat(g, a.axis)
    opa, opb = _ops(a, A, B)
    d_opa = a.alpha * gm @ kl.t(opb)
    d_opb = a.alpha * kl.t(opa) @ gm
    da = kl.t(d_opa) if a.transpose_a else d_opa
    db = kl.t(d_opb) if a.transpose_b else d_opb
    res = (_cast(_from_mat(da, a.axis, A.ndim), xs[1]),
           _cast(_from_mat(db, a.axis, B.ndim), xs[2]))
    if len(xs) > 3:
        res += (_cast(a.beta * g, xs[3]),)
    return res


def gemm_shape(attrs, ins, outs):
    A, B = ins[0], ins[1]
    if rules.known(A) and rules.known(B):
        if len(A) != len(B) or len(A) < 2:
            raise rules.Conflict("shape", 1, "input", A, B)
        ax = attrs.axis % len(A)
        rest_a = [d for i, d in enumerate(A) if i not in (ax, len(A) - 1)]
        rest_b = [d for i, d in enumerate(B) if i not in (ax, len(B) - 1)]
        if rest_a != rest_b:
            raise rules.Conflict("shape", 1, "input", A, B)
        m, k = (A[-1], A[ax]) if attrs.transpose_a else (A[ax], A[-1])
        k2, n = (B[-1], B[ax]) if attrs.transpose_b else (B[ax], B[-1])
        if k != k2:
            raise rules.Conflict("shape", 1, "input", f"{k} rows in op(B)", B)
        out = list(A)
        out[ax], out[-1] = m, n
        rules.set_shape(outs, 0, tuple(out), "output")
        if len(ins) > 2:
            rules.set_shape(ins, 2, tuple(out))
    elif len(ins) > 2 and ins[2] is not None:
        rules.set_shape(outs, 0, ins[2], "output")
    return ins, outs


_GEMM_DOC = """Batched matrix product ``alpha * op(A) op(B){extra}``; op transposes when
    ``transpose_a``/``transpose_b``. The matrix rows are axis ``axis`` and the columns the
    last axis; the other axes are a batch.

    Parameters
    ----------
    A, B{cin} : Symbol or NDArray
    transpose_a, transpose_b : bool, default False
    alpha : float, default 1{beta}
    axis : int, default -2

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.linalg.{name}(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)){call}).shape
    (2, 4)
    """
_reg("gemm", _GEMM, ("A", "B", "C"), _gemm2_fwd, gemm_shape,
     grad=_bwd("_backward_linalg_gemm", lambda n, og: [og[0]] + list(n.inputs), 3),
     bwd=(("ograd", "A", "B", "C"), _gemm_bwd, 3),
     doc=_GEMM_DOC.format(extra=" + beta * C", cin=", C", beta="\n    beta : float, default 1",
                          name="gemm", call=", mx.nd.ones((2, 4))"))
_reg("gemm2", _GEMM2, ("A", "B"), _gemm2_fwd, gemm_shape,
     grad=_bwd("_backward_linalg_gemm2", lambda n, og: [og[0]] + list(n.inputs), 2),
     bwd=(("ograd", "A", "B"), _gemm_bwd, 2),
     doc=_GEMM_DOC.format(extra="", cin="", beta="", name="gemm2", call=""))


# ----------------------------------------------------------------------------- one square input
def square_shape(attrs, ins, outs):
    _sq(ins[0])
    ins, outs = rules.same_shape(attrs, ins, outs)
    return ins, outs


def _unary(name, fwd, bwd_kernel, bwd_names, bwd_inputs, doc, shape=square_shape, params=None):
    """A one-input op with one output; its backward op takes ``("ograd",) + bwd_names``
    (``bwd_inputs(node, og)`` supplies them) and returns the gradient, shaped like A."""
    _reg(name, params or Params(), ("A",), lambda a, xs: (_cast(fwd(a, _fl(xs[0])), xs[0]),),
         shape, doc=doc, grad=_bwd(f"_backward_linalg_{name}", bwd_inputs, 1),
         bwd=(("ograd",) + bwd_names,
              lambda a, xs: (_cast(bwd_kernel(a, [_fl(x) for x in xs]), xs[1]),), 1))


_LOWER = Params(lower=Field("bool", True, doc="lower (True) or upper (False) triangular "
                                                "factor"))
_unary("potrf", lambda a, x: kl.potrf(x, a.lower),
       lambda a, xs: kl.potrf_grad(xs[0], xs[1], a.lower),
       ("L",), lambda n, og: [og[0], (n, 0)], params=_LOWER,
       doc="""Cholesky factorization: the lower triangular L with A = L L^T of each symmetric
    positive definite matrix (the lower triangle of A is read); with ``lower=False`` the upper
    triangular U with A = U^T U (the upper triangle is read).

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.linalg.potrf(mx.nd.array([[4., 2.], [2., 3.]])).asnumpy().round(4)
    array([[2.    , 0.    ],
           [1.    , 1.4142]], dtype=float32)
    """)
_unary("potri", lambda a, x: kl.potri(x, a.lower),
       lambda a, xs: kl.potri_grad(xs[0], xs[1], xs[2], a.lower),
       ("A", "out"), lambda n, og: [og[0], n.inputs[0], (n, 0)], params=_LOWER,
       doc="The inverse (L L^T)^-1 of a matrix from its lower Cholesky factor L (potrf's "
           "output); with ``lower=False``, (U^T U)^-1 from the upper factor U.")
_unary("inverse", lambda a, x: kl.inverse(x),
       lambda a, xs: -kl.t(xs[1]) @ xs[0] @ kl.t(xs[1]),
       ("out",), lambda n, og: [og[0], (n, 0)], doc="The inverse of each square matrix.")


def _syrk_fwd(a, x):
    return a.alpha * (kl.t(x) @ x if a.transpose else x @ kl.t(x))


def _syrk_bwd(a, xs):
    g, x = xs
    gs = g + kl.t(g)
    return a.alpha * (x @ gs if a.transpose else gs @ x)


def syrk_shape(attrs, ins, outs):
    A = ins[0]
    if A is not None:
        if len(A) < 2:
            raise rules.Conflict("shape", 0, "input", "a matrix (at least 2 dims)", A)
        n = A[-1] if attrs.transpose else A[-2]
        rules.set_shape(outs, 0, tuple(A[:-2]) + (n, n), "output")
    return ins, outs


_unary("syrk", _syrk_fwd, _syrk_bwd, ("A",), lambda n, og: [og[0], n.inputs[0]],
       shape=syrk_shape,
       params=Params(transpose=Field("bool", False), alpha=Field("float", 1.0)),
       doc="``alpha * A A^T`` (``alpha * A^T A`` with ``transpose``).")


def _scalar_shape(attrs, ins, outs):
    _sq(ins[0])
    if ins[0] is not None:
        for i in range(len(outs)):
            rules.set_shape(outs, i, _batch_out(ins[0]), "output")
    return ins, outs


def _per_matrix(v, like_shape):
    return np.asarray(v).reshape(_batch_out(like_shape))


def _bcast(g, x):
    """A per-matrix value broadcast over the matrices of x."""
    return g.reshape(x.shape[:-2] + (1, 1))


_reg("det", Params(), ("A",),
     lambda a, xs: (_cast(_per_matrix(np.linalg.det(_fl(xs[0])), xs[0].shape), xs[0]),),
     _scalar_shape, grad=_bwd("_backward_linalg_det", lambda n, og: [og[0], n.inputs[0], (n, 0)],
                              1),
     bwd=(("ograd", "A", "det"), lambda a, xs: (_cast(
         _bcast(_fl(xs[0]) * _fl(xs[2]), xs[1]) * kl.t(np.linalg.inv(_fl(xs[1]))), xs[1]),),
          1),
     doc="The determinant of each square matrix (shape: the batch, (1,) for one matrix).")


def _slogdet_fwd(a, xs):
    s, ld = np.linalg.slogdet(_fl(xs[0]))
    return (_cast(_per_matrix(s, xs[0].shape), xs[0]), _cast(_per_matrix(ld, xs[0].shape), xs[0]))


_reg("slogdet", Params(), ("A",), _slogdet_fwd, _scalar_shape, n_out=2,
     out_names=("sign", "logdet"),
     grad=_bwd("_backward_linalg_slogdet", lambda n, og: [og[1], n.inputs[0]], 1),
     bwd=(("ograd_logdet", "A"), lambda a, xs: (_cast(
         _bcast(_fl(xs[0]), xs[1]) * kl.t(np.linalg.inv(_fl(xs[1]))), xs[1]),), 1),
     doc="(sign, log|det|) of each square matrix; the gradient flows through log|det|.")


def _sumlogdiag_bwd(a, xs):
    g, x = _fl(xs[0]), _fl(xs[1])
    d = np.diagonal(x, 0, -2, -1)
    return (_cast(kl.makediag(g.reshape(x.shape[:-2] + (1,)) / d, 0), xs[1]),)


_reg("sumlogdiag", Params(), ("A",),
     lambda a, xs: (_cast(_per_matrix(np.log(np.diagonal(_fl(xs[0]), 0, -2, -1)).sum(-1),
                                      xs[0].shape), xs[0]),),
     _scalar_shape, grad=_bwd("_backward_linalg_sumlogdiag", lambda n, og: [og[0], n.inputs[0]],
                              1),
     bwd=(("ograd", "A"), _sumlogdiag_bwd, 1),
     doc="The sum of the logarithms of the diagonal of each square matrix.")


# ----------------------------------------------------------------------------- gelqf, syevd
def gelqf_shape(attrs, ins, outs):
    A = ins[0]
    if A is not None:
        if len(A) < 2:
            raise rules.Conflict("shape", 0, "input", "a matrix (at least 2 dims)", A)
        rules.set_shape(outs, 0, A, "output")
        rules.set_shape(outs, 1, tuple(A[:-1]) + (A[-2],), "output")
    return ins, outs


def _two_out_fwd(fn):
    def k(a, xs):
        p, q = fn(_fl(xs[0]))
        return _cast(p, xs[0]), _cast(q, xs[0])
    return k


def _two_out_bwd(fn):
    def k(a, xs):
        return (_cast(fn(*[_fl(x) for x in xs]), xs[2]),)
    return k


def _gelqf_bwd_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, ins[2], "output")   # dA is shaped like Q (like A)
    return ins, outs


def _syevd_bwd_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, ins[2], "output")   # dA is shaped like U
    return ins, outs


_two_grad = (lambda bname: _bwd(bname, lambda n, og: [og[0], og[1], (n, 0), (n, 1)], 1))
_reg("gelqf", Params(), ("A",), _two_out_fwd(kl.gelqf), gelqf_shape, n_out=2,
     out_names=("Q", "L"), grad=_two_grad("_backward_linalg_gelqf"),
     bwd=(("ograd_Q", "ograd_L", "Q", "L"),
          _two_out_bwd(lambda dq, dl, q, low: kl.gelqf_grad(dq, np.tril(dl), q, low)), 1,
          _gelqf_bwd_shape),
     doc="LQ factorization A = L Q of each m x n matrix (m <= n): outputs (Q, L), Q with "
         "orthonormal rows, L lower triangular.")


def syevd_shape(attrs, ins, outs):
    n = _sq(ins[0])
    if ins[0] is not None:
        rules.set_shape(outs, 0, ins[0], "output")
        rules.set_shape(outs, 1, tuple(ins[0][:-2]) + (n,), "output")
    return ins, outs


_reg("syevd", Params(), ("A",), _two_out_fwd(kl.syevd), syevd_shape, n_out=2,
     out_names=("U", "L"), grad=_two_grad("_backward_linalg_syevd"),
     bwd=(("ograd_U", "ograd_L", "U", "L"), _two_out_bwd(kl.syevd_grad), 1, _syevd_bwd_shape),
     doc="Eigendecomposition A = U^T diag(L) U of each symmetric matrix: eigenvalues L "
         "ascending, eigenvectors the rows of U (largest-magnitude entry positive).")


# ----------------------------------------------------------------------------- trsm, trmm
_TRI = Params(transpose=Field("bool", False), rightside=Field("bool", False),
              lower=Field("bool", True), alpha=Field("float", 1.0))


def _tri_args(a):
    return a.transpose, a.rightside, a.lower, a.alpha


def tri_shape(attrs, ins, outs):
    n = _sq(ins[0])
    B = ins[1]
    if B is not None and n is not None:
        if len(B) < 2 or (B[-1] if attrs.rightside else B[-2]) not in (None, n):
            raise rules.Conflict("shape", 1, "input", f"matrices with {n} "
                                 f"{'columns' if attrs.rightside else 'rows'}", B)
    ins2, outs = rules.same_shape(attrs, ins[1:], outs)
    ins[1] = ins2[0]
    return ins, outs


_reg("trsm", _TRI, ("A", "B"),
     lambda a, xs: (_cast(kl.trsm(_fl(xs[0]), _fl(xs[1]), *_tri_args(a)), xs[1]),), tri_shape,
     grad=_bwd("_backward_linalg_trsm", lambda n, og: [og[0], n.inputs[0], (n, 0)], 2),
     bwd=(("ograd", "A", "out"), lambda a, xs: tuple(
         _cast(v, xs[1 + i]) for i, v in enumerate(kl.trsm_grad(
             _fl(xs[0]), _fl(xs[1]), _fl(xs[2]), *_tri_args(a)))), 2),
     doc="Solve with a triangular matrix: ``alpha * op(A)^-1 B`` (``alpha * B op(A)^-1`` "
         "with rightside); op transposes when ``transpose``; A's lower (or upper) triangle.")
_reg("trmm", _TRI, ("A", "B"),
     lambda a, xs: (_cast(kl.trmm(_fl(xs[0]), _fl(xs[1]), *_tri_args(a)), xs[1]),), tri_shape,
     grad=_bwd("_backward_linalg_trmm", lambda n, og: [og[0]] + list(n.inputs), 2),
     bwd=(("ograd", "A", "B"), lambda a, xs: tuple(
         _cast(v, xs[1 + i]) for i, v in enumerate(kl.trmm_grad(
             _fl(xs[0]), _fl(xs[1]), _fl(xs[2]), *_tri_args(a)))), 2),
     doc="Multiply by a triangular matrix: ``alpha * op(A) B`` (``alpha * B op(A)`` with "
         "rightside); A's lower (or upper) triangle.")


# ----------------------------------------------------------------------------- diag / trian
_OFF = Params(offset=Field("int", 0))
_OFFL = Params(offset=Field("int", 0), lower=Field("bool", True))


def _diag_shape(attrs, ins, outs):
    A = ins[0]
    if A is not None:
        if len(A) < 2:
            raise rules.Conflict("shape", 0, "input", "a matrix (at least 2 dims)", A)
        n = _sq(A)
        k = n - abs(attrs.offset)
        if k <= 0:
            raise rules.Conflict("shape", 0, "input", f"matrices larger than |offset|="
                                 f"{abs(attrs.offset)}", A)
        rules.set_shape(outs, 0, tuple(A[:-2]) + (k,), "output")
    return ins, outs


def _makediag_shape(attrs, ins, outs):
    v = ins[0]
    if v is not None:
        n = v[-1] + abs(attrs.offset)
        rules.set_shape(outs, 0, tuple(v[:-1]) + (n, n), "output")
    return ins, outs


def _trian_shape(attrs, ins, outs):
    A = ins[0]
    if A is not None:
        n = _sq(A)
        m = n - abs(attrs.offset)
        if m <= 0:
            raise rules.Conflict("shape", 0, "input", f"matrices larger than |offset|="
                                 f"{abs(attrs.offset)}", A)
        rules.set_shape(outs, 0, tuple(A[:-2]) + (m * (m + 1) // 2,), "output")
    return ins, outs


def _maketrian_shape(attrs, ins, outs):
    v = ins[0]
    if v is not None:
        n = kl.trian_size(v[-1], attrs.offset)
        if n is None:
            raise rules.Conflict("shape", 0, "input", "a triangular number of entries", v)
        rules.set_shape(outs, 0, tuple(v[:-1]) + (n, n), "output")
    return ins, outs


def _linear(name, params, fn, shape, adjoint, doc):
    """An op linear in A whose gradient is ``adjoint`` applied to the head gradient."""
    _reg(name, params, ("A",), lambda a, xs: (fn(a, xs[0]),), shape, doc=doc,
         grad=_bwd(f"_backward_linalg_{name}", lambda n, og: [og[0], n.inputs[0]], 1),
         bwd=(("ograd", "A"), lambda a, xs: (adjoint(a, xs[0]).astype(xs[1].dtype),), 1))


_linear("extractdiag", _OFF, lambda a, x: kl.extractdiag(x, a.offset), _diag_shape,
        lambda a, g: kl.makediag(g, a.offset),
        "The diagonal at ``offset`` of each square matrix.")
_linear("makediag", _OFF, lambda a, x: kl.makediag(x, a.offset), _makediag_shape,
        lambda a, g: kl.extractdiag(g, a.offset),
        "Square matrices with the given vectors on the diagonal at ``offset``.")
_linear("extracttrian", _OFFL, lambda a, x: kl.extracttrian(x, a.offset, a.lower), _trian_shape,
        lambda a, g: kl.maketrian(g, a.offset, a.lower),
        "The triangle at ``offset`` (lower for offset < 0, upper for offset > 0, ``lower`` "
        "at 0) of each square matrix, packed into a vector.")
_linear("maketrian", _OFFL, lambda a, x: kl.maketrian(x, a.offset, a.lower), _maketrian_shape,
        lambda a, g: kl.extracttrian(g, a.offset, a.lower),
        "Square matrices whose triangle at ``offset`` is unpacked from the vectors (the "
        "inverse of extracttrian).")


# ----------------------------------------------------------------------------- khatri_rao
def khatri_rao_shape(attrs, ins, outs):
    if all(rules.known(s) for s in ins):
        if any(len(s) != 2 for s in ins):
            raise rules.Conflict("shape", 0, "input", "matrices (2-D)", ins[0])
        k = ins[0][1]
        for i, s in enumerate(ins):
            if s[1] != k:
                raise rules.Conflict("shape", i, "input", f"{k} columns", s)
        rules.set_shape(outs, 0, (int(np.prod([s[0] for s in ins])), k), "output")
    return ins, outs


register(OpDef(
    "khatri_rao", params=Params(num_args=Field("int", doc="number of input matrices")),
    inputs=lambda a: tuple(f"arg{i}" for i in range(a.num_args)), key_var_num_args="num_args",
    dispatch=(Dispatch(("default", "..."), (DNS,), lambda a, xs: (kl.khatri_rao(list(xs)),)),),
    infer_shape=khatri_rao_shape, infer_type=rules.same_type,
    doc="""Column-wise Kronecker (Khatri-Rao) product of matrices shaped (n_i, k).

    Examples
    --------
    >>> import sparsym as mx
    >>> a = mx.nd.array([[1, 2], [3, 4]])
    >>> mx.nd.khatri_rao(a, a).asnumpy()
    array([[ 1.,  4.],
           [ 3.,  8.],
           [ 3.,  8.],
           [ 9., 16.]], dtype=float32)
    """))
