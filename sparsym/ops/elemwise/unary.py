"""Elementwise unary operators, identity-like operators and cast_storage, with MXNet's rows.

Storage rules (MXNet 1.9.1, probed; see tests/ops/mxnet_stypes.json):

- zero-preserving unaries (abs, sqrt, tanh, ...): R -> R and C -> C on stored values only;
- the rest (exp, log, sigmoid, ...) have no sparse row: sparse inputs fall back to dense;
- gradients stay R/C for abs, relu, square, sign and the rounding ops; the other
  ``_backward_<op>`` give dense gradients (MXNet falls back for csr; we compute directly).

Binary, scalar and broadcast operators live in binary.py, scalar.py and broadcast.py of
this folder; they share the kernel helpers defined here (gradient helpers: core/grad.py).
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...kernels import csr as kcsr
from ...kernels import rsp as krsp
from ...kernels._arrays import quiet_fp
from ..core import rules
from ..core.grad import bw, identity_grad, no_grad
from ..core.grad_expr import Ex
from ..core.helpers import CSR, DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


# ----------------------------------------------------------------------------- helpers
def dense1(fn):
    """Kernel applying a numpy function to one dense input."""
    return lambda attrs, xs: (fn(xs[0]),)


def dense2(fn):
    return lambda attrs, xs: (fn(xs[0], xs[1]),)


def densify(kernel):
    """Run a dense kernel on densified inputs (rows whose output is dense anyway)."""
    return lambda attrs, xs: kernel(attrs, [st.todense(x) for x in xs])


def same_dtype(fn):
    """Keep the input dtype (numpy promotes float32 math with Python scalars)."""
    def g(x, *a):
        with quiet_fp():
            r = fn(x, *a)
        if isinstance(r, np.ndarray):
            return r.astype(x.dtype, copy=False)
        return np.asarray(r, x.dtype)
    return g


def round_half_away(x):
    """MXNet's round: halves go away from zero (numpy's round goes to even)."""
    a = np.abs(x)
    r = np.floor(a)
    r += a - r >= 0.5   # a - floor(a) is exact, so 0.49999997 stays below the half
    return np.copysign(r, x)


def round_half_down(x):
    """MXNet's rint: the nearer of floor and ceil, floor on a tie (n.5 -> n, -n.5 -> -n-1;
    NumPy's rint goes to even)."""
    f, c = np.floor(x), np.ceil(x)
    return np.where(x - f <= c - x, f, c)


def mod_or_zero(a, b):
    """MXNet's mod: a - floor(a / b) * b (the divisor's sign), and 0 where b == 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.mod(a, b)
    return np.where(np.asarray(b) == 0, np.zeros((), r.dtype), r)


def _mod_partials(g, a, b):
    """(g, -g * floor(a / b)); MXNet's mod gradients are 0 for integer operands."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        return np.zeros_like(g), np.zeros_like(g)
    return g, -g * np.floor(a / b)


# (ograd * d/dlhs, ograd * d/drhs) of the binary elementwise ops, same-shape or broadcast
BINARY_PARTIALS = {
    "add": lambda g, a, b: (g, g),
    "sub": lambda g, a, b: (g, -g),
    "mul": lambda g, a, b: (g * b, g * a),
    "div": lambda g, a, b: (g / b, -g * a / (b * b)),
    "power": lambda g, a, b: (g * b * np.power(a, b - 1), g * np.power(a, b) * np.log(a)),
    "maximum": lambda g, a, b: (g * (a >= b), g * (a < b)),
    "minimum": lambda g, a, b: (g * (a <= b), g * (a > b)),
    "hypot": lambda g, a, b: (g * a / np.hypot(a, b), g * b / np.hypot(a, b)),
    # a mod b = a - floor(a / b) * b (numpy's and MXNet's sign convention)
    "mod": _mod_partials,
}

# partials that can divide by zero or overflow (errstate costs microseconds per call)
PARTIALS_GUARDED = frozenset(("div", "power", "hypot", "mod"))


def _map_csr(fn):
    return lambda attrs, xs: (kcsr.map_values(xs[0], fn),)


def _map_rsp(fn):
    return lambda attrs, xs: (krsp.map_values(xs[0], fn),)


# ----------------------------------------------------------------------------- backward kernels
def _dense_grad(dfn):
    def k(attrs, xs):
        og, x = st.todense(xs[0]), st.todense(xs[1])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ((og * dfn(x)).astype(og.dtype, copy=False),)
    return k


def _rsp_grad(dfn):
    """og * f'(x) on the rows both store (f'(0) finite and 0*f'(0) == 0 for these ops)."""
    def k(attrs, xs):
        og, x = xs
        both = krsp.retain(x, og.indices)
        vals = krsp.retain(og, both.indices)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            data = (vals.data * dfn(both.data)).astype(og.dtype, copy=False)
        return (st.RSP(data, both.indices, og.shape),)
    return k


def _csr_grad(dfn):
    """og * f'(x) on the entries both store; inputs canonical."""
    def k(attrs, xs):
        og, x = xs
        indices, indptr, sa, sb = kcsr.inter_struct(og, x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            data = (og.data[sa] * dfn(x.data[sb])).astype(og.dtype, copy=False)
        return (st.CSR(data, indices, indptr, og.shape),)
    return k


def _zero_grad_like_ograd(attrs, xs):
    og = xs[0]
    return (st.zeros_raw(st.stype_of(og), og.shape, og.dtype),)


# ----------------------------------------------------------------------------- unary
def _second_order(bname, d2):
    """Gradient of ``_backward_<op>(ograd, x) = ograd * f'(x)``: (g * f'(x), g * ograd *
    f''(x)); ``d2(Ex(x))`` builds f'' from differentiable ops (a number for constants)."""
    if d2 is None:
        return None

    def grad(node, og):
        ograd, x = node.inputs
        d_ograd = bw(bname, [og[0], x], node, "backward")
        if isinstance(d2, (int, float)) and d2 == 0:
            return [d_ograd, None]
        f2 = d2 if isinstance(d2, (int, float)) else d2(Ex(x))
        return [d_ograd, (Ex(og[0]) * Ex(ograd) * f2).entry]
    return grad


def unary(name, fn, dfn=None, keeps_zero=True, grad_keeps=False, aliases=(), doc="",
          d2=None):
    """Register ``name`` (and ``_backward_<name>(ograd, data)`` when dfn is given).

    keeps_zero: fn(0) == 0, so R -> R and C -> C rows apply fn to stored values only.
    grad_keeps: the gradient keeps the ograd's storage (MXNet: abs, relu, square, sign).
    dfn(x) is the derivative; dfn == 0 means a zero gradient of the ograd's stype.
    d2: the second derivative for higher-order gradients: ``f(Ex) -> Ex`` built from
    differentiable ops, a constant, or None (the backward op is then not differentiable).
    """
    fn = same_dtype(fn)
    rows = [Dispatch((DNS,), (DNS,), dense1(fn))]
    if keeps_zero:
        rows += [Dispatch((CSR,), (CSR,), _map_csr(fn)), Dispatch((RSP,), (RSP,), _map_rsp(fn))]
    grad = None
    if dfn == 0:
        bname = "_backward_" + name
        register(OpDef(
            bname, inputs=("ograd", "data"),
            dispatch=(Dispatch((DNS, DNS), (DNS,), _zero_grad_like_ograd),
                      Dispatch((RSP, "*"), (RSP,), _zero_grad_like_ograd),
                      Dispatch((CSR, "*"), (CSR,), _zero_grad_like_ograd),
                      Dispatch((DNS, "*"), (DNS,), _zero_grad_like_ograd)),
            gradient=no_grad, doc=f"Zero gradient of {name} (keeps the ograd's storage)."))
    elif dfn is not None:
        bname = "_backward_" + name
        if grad_keeps:
            brows = (Dispatch((DNS, DNS), (DNS,), _dense_grad(dfn)),
                     Dispatch((RSP, RSP), (RSP,), _rsp_grad(dfn)),
                     Dispatch((CSR, CSR), (CSR,), _csr_grad(dfn)),
                     Dispatch(("*", "*"), (DNS,), _dense_grad(dfn)))
        else:
            # MXNet: R,R -> D [ex]; C,C -> D [fallback]; computed directly here
            brows = (Dispatch((DNS, DNS), (DNS,), _dense_grad(dfn)),
                     Dispatch(("*", "*"), (DNS,), _dense_grad(dfn)))
        register(OpDef(bname, inputs=("ograd", "data"), dispatch=brows,
                       gradient=_second_order(bname, d2),
                       doc=f"Gradient of {name}: ograd * {name}'(data)."))
    if dfn is not None:
        def grad(node, og, _b="_backward_" + name):
            return [bw(_b, [og[0], node.inputs[0]], node, "backward")]
    else:
        grad = no_grad
    sparse_alias = (f"_sparse_{name}",) if not name.startswith("_") else ()
    return register(OpDef(name, dispatch=tuple(rows), gradient=grad,
                          aliases=tuple(aliases) + sparse_alias,
                          doc=doc or f"Elementwise {name}; storage: "
                          + ("row_sparse -> row_sparse, csr -> csr." if keeps_zero else
                             "sparse inputs give a dense result.")))


def _erf(x):
    from scipy.special import erf
    return erf(x)


def _gamma(x):
    from scipy.special import gamma  # poles give inf/nan (math.gamma raises)
    return gamma(x)


def _lgamma(x):
    from scipy.special import gammaln
    return gammaln(x)


def _digamma(x):
    """psi(x) with MXNet's (cephes') value +inf at the poles 0, -1, -2, ... (scipy >= 1.1
    gives -inf at 0 and nan below), so gamma's and gammaln's gradients there match MXNet."""
    from scipy.special import digamma
    neg = x < 0
    if not np.any(neg):
        out = digamma(x)
    else:
        # negative arguments by reflection, as cephes does: scipy's own path there is ~1000x
        # slower (30 us per element); tan has period 1, so pi * frac(x) keeps it accurate
        xn = x[neg].astype(np.float64)
        out = np.empty_like(digamma(x[:0]), shape=x.shape)
        out[~neg] = digamma(x[~neg])
        with np.errstate(divide="ignore", invalid="ignore"):  # the poles are set below
            out[neg] = digamma(1.0 - xn) - np.pi / np.tan(np.pi * (xn - np.floor(xn)))
    # the pole at 0 too (scipy's -inf there): the gradients at exact zeros match MXNet's
    pole = (x <= 0) & (x == np.floor(x))
    if np.any(pole):
        out = np.where(pole, np.inf, out).astype(out.dtype, copy=False)
    return out



def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _exp(x):
    """exp correctly rounded for float32 (numpy's SIMD float32 exp is 1 ulp off at 1.0,
    where MXNet's expf is not)."""
    if x.dtype == np.float32:
        return np.exp(x, dtype=np.float64).astype(np.float32)
    return np.exp(x)


def _tanh_d2(t):
    return -2 * t * (1.0 - t * t)


def _tan_d2(t):
    return 2 * t * (t * t + 1.0)


def _sigmoid_d2(s):
    return s * (1.0 - s) * (1.0 - 2 * s)


# d2: second derivatives (higher-order gradients), as expressions of differentiable ops
unary("abs", np.abs, np.sign, grad_keeps=True, d2=0)
unary("sign", np.sign, 0)
unary("square", np.square, lambda x: 2 * x, grad_keeps=True, d2=2.0)
unary("relu", lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(x.dtype), grad_keeps=True,
      d2=0)
for _n, _f in (("ceil", np.ceil), ("floor", np.floor), ("round", round_half_away),
               ("rint", round_half_down),
               ("fix", np.fix), ("trunc", np.trunc)):
    unary(_n, _f, 0)
unary("sqrt", np.sqrt, lambda x: 0.5 / np.sqrt(x), d2=lambda x: -0.25 * x ** -1.5)
unary("cbrt", np.cbrt, lambda x: 1.0 / (3 * np.cbrt(x) ** 2),
      d2=lambda x: (-2.0 / 9.0) * x ** (-5.0 / 3.0))
unary("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2,
      d2=lambda x: _tanh_d2(x.op("tanh")))
unary("sin", np.sin, np.cos, d2=lambda x: -x.op("sin"))
unary("sinh", np.sinh, np.cosh, d2=lambda x: x.op("sinh"))
unary("tan", np.tan, lambda x: 1 + np.tan(x) ** 2, d2=lambda x: _tan_d2(x.op("tan")))
unary("arcsin", np.arcsin, lambda x: 1 / np.sqrt(1 - x * x),
      d2=lambda x: x * (1.0 - x * x) ** -1.5)
# NOTE: MXNet 1.9.1's second derivatives of arcsinh and arccosh have the wrong sign
unary("arcsinh", np.arcsinh, lambda x: 1 / np.sqrt(x * x + 1),
      d2=lambda x: -x * (x * x + 1.0) ** -1.5)
unary("arctan", np.arctan, lambda x: 1 / (1 + x * x), d2=lambda x: -2 * x * (x * x + 1.0) ** -2)
unary("arctanh", np.arctanh, lambda x: 1 / (1 - x * x), d2=lambda x: 2 * x * (1.0 - x * x) ** -2)
unary("expm1", np.expm1, np.exp, d2=lambda x: x.op("exp"))
unary("log1p", np.log1p, lambda x: 1 / (1 + x), d2=lambda x: -((x + 1.0) ** -2))
unary("degrees", np.degrees, lambda x: np.full_like(x, 180 / np.pi), d2=0)
unary("radians", np.radians, lambda x: np.full_like(x, np.pi / 180), d2=0)
unary("sigmoid", _sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x)), keeps_zero=False,
      d2=lambda x: _sigmoid_d2(x.op("sigmoid")))
unary("exp", _exp, _exp, keeps_zero=False, d2=lambda x: x.op("exp"))
unary("log", np.log, lambda x: 1 / x, keeps_zero=False, d2=lambda x: -(x ** -2))
unary("log2", np.log2, lambda x: 1 / (x * np.log(2)), keeps_zero=False,
      d2=lambda x: x ** -2 * (-1 / np.log(2)))
unary("log10", np.log10, lambda x: 1 / (x * np.log(10)), keeps_zero=False,
      d2=lambda x: x ** -2 * (-1 / np.log(10)))
unary("cos", np.cos, lambda x: -np.sin(x), keeps_zero=False, d2=lambda x: -x.op("cos"))
unary("cosh", np.cosh, np.sinh, keeps_zero=False, d2=lambda x: x.op("cosh"))
unary("arccos", np.arccos, lambda x: -1 / np.sqrt(1 - x * x), keeps_zero=False,
      d2=lambda x: -x * (1.0 - x * x) ** -1.5)
unary("arccosh", np.arccosh, lambda x: 1 / np.sqrt(x * x - 1), keeps_zero=False,
      d2=lambda x: -x * (x * x - 1.0) ** -1.5)
unary("rsqrt", lambda x: 1 / np.sqrt(x), lambda x: -0.5 * x ** -1.5, keeps_zero=False,
      d2=lambda x: 0.75 * x ** -2.5)
unary("rcbrt", lambda x: 1 / np.cbrt(x), lambda x: -1 / (3 * x * np.cbrt(x)), keeps_zero=False,
      d2=lambda x: (4.0 / 9.0) * x ** (-7.0 / 3.0))
unary("reciprocal", lambda x: 1 / x, lambda x: -1 / (x * x), keeps_zero=False,
      d2=lambda x: 2 * x ** -3)
unary("softsign", lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2,
      keeps_zero=False, d2=lambda x: -2 * x.op("sign") * (x.op("abs") + 1.0) ** -3)
unary("erf", _erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), keeps_zero=False,
      d2=lambda x: x * (-(x * x)).op("exp") * float(-4 / np.sqrt(np.pi)))
unary("gamma", _gamma, lambda x: _gamma(x) * _digamma(x), keeps_zero=False)
unary("gammaln", _lgamma, lambda x: _digamma(x), keeps_zero=False)


def _neg_grad(node, og):
    return [bw("negative", [og[0]], node, "backward")]


register(OpDef("negative", dispatch=(Dispatch((DNS,), (DNS,), dense1(np.negative)),
                                     Dispatch((CSR,), (CSR,), _map_csr(np.negative)),
                                     Dispatch((RSP,), (RSP,), _map_rsp(np.negative))),
               gradient=_neg_grad, aliases=("_sparse_negative",),
               doc="Elementwise negation; keeps the storage type."))


# ----------------------------------------------------------------------------- identity-like
def _copy_raw(x):
    return x.copy()


_same_rows = (Dispatch((DNS,), (DNS,), lambda a, xs: (_copy_raw(xs[0]),)),
              Dispatch((CSR,), (CSR,), lambda a, xs: (_copy_raw(xs[0]),)),
              Dispatch((RSP,), (RSP,), lambda a, xs: (_copy_raw(xs[0]),)))
register(OpDef("_copy", dispatch=_same_rows, gradient=identity_grad, aliases=("identity",),
               doc="Return a copy of the input (keeps the storage type)."))
register(OpDef(
    "_identity_with_attr_like_rhs", inputs=("lhs", "rhs"),
    dispatch=tuple(Dispatch((r.ins[0], "*"), r.outs, r.kernel) for r in _same_rows),
    gradient=lambda node, og: [og[0], None],
    doc="Return ``lhs``; its shape and dtype are tied to ``rhs``'s (MXNet uses it to pass "
        "shape constraints backwards). No gradient flows to ``rhs``."))
register(OpDef("BlockGrad", dispatch=_same_rows, gradient=no_grad,
               aliases=("stop_gradient", "_sparse_stop_gradient"),
               doc="Pass the input through; no gradient flows back."))
# straight-through estimators: rounded/sign forward, identity gradient (keeps R/C)
for _n, _f in (("_contrib_round_ste", round_half_away), ("_contrib_sign_ste", np.sign)):
    _g = same_dtype(_f)
    register(OpDef(_n, dispatch=(Dispatch((DNS,), (DNS,), dense1(_g)),
                                 Dispatch((CSR,), (CSR,), _map_csr(_g)),
                                 Dispatch((RSP,), (RSP,), _map_rsp(_g))),
                   gradient=identity_grad, aliases=(f"_sparse_{_n}",),
                   doc=f"{_f.__name__} forward with a straight-through (identity) gradient."))

_GM = Params(scalar=Field("float", 1.0, doc="gradient multiplier"),
             is_int=Field("bool", False, doc="treat the scalar as an integer"))


def _gm_grad(node, og):
    return [bw("_contrib_backward_gradientmultiplier", [og[0]], node, "backward",
               scalar=node.params.scalar)]


def _scale(a, xs):
    x = xs[0]
    if isinstance(x, np.ndarray):
        return ((x * a.scalar).astype(x.dtype, copy=False),)
    return (type(x)(*([(x.data * a.scalar).astype(x.dtype, copy=False)] + _struct(x))),)


def _struct(x):
    return [x.indices, x.indptr, x.shape] if isinstance(x, st.CSR) else [x.indices, x.shape]


register(OpDef("_contrib_gradientmultiplier", params=_GM, dispatch=_same_rows,
               gradient=_gm_grad, doc="Identity forward; the gradient is scaled by ``scalar``."))
register(OpDef("_contrib_backward_gradientmultiplier", params=_GM,
               dispatch=(Dispatch((DNS,), (DNS,), _scale), Dispatch((CSR,), (CSR,), _scale),
                         Dispatch((RSP,), (RSP,), _scale)),
               doc="ograd * scalar, keeping the storage type."))
register(OpDef(
    "zeros_like",
    dispatch=(Dispatch((DNS,), (DNS,), dense1(np.zeros_like)),
              Dispatch((CSR,), (CSR,),
                       lambda a, xs: (st.zeros_raw(CSR, xs[0].shape, xs[0].dtype),)),
              Dispatch((RSP,), (RSP,),
                       lambda a, xs: (st.zeros_raw(RSP, xs[0].shape, xs[0].dtype),))),
    gradient=no_grad, aliases=("_sparse_zeros_like",),
    doc="An all-zero array like the input, keeping its storage type."))
register(OpDef("ones_like", dispatch=(Dispatch((DNS,), (DNS,), dense1(np.ones_like)),),
               gradient=no_grad, doc="An all-one dense array like the input."))


# ----------------------------------------------------------------------------- cast_storage
def _cast(src, dst):
    """cast_storage kernel; csr <-> row_sparse are direct (MXNet: Operator not implemented)."""
    if src == CSR and dst == RSP:
        return lambda a, xs: (kcsr.csr_to_rsp(xs[0]),)
    if src == RSP and dst == CSR:
        return lambda a, xs: (kcsr.rsp_to_csr(xs[0]),)
    if src == dst:
        return lambda a, xs: (xs[0].copy(),)
    return lambda a, xs: (st.cast_raw(xs[0], dst),)


def _cast_row(src, dst):
    return Dispatch((src,), (dst,), _cast(src, dst), when=lambda a, s, _d=dst: a.stype == _d)


def _cast_grad(node, og):
    return [bw("cast_storage", [og[0]], node, "backward", stype=DNS)]


def _cast_shape(attrs, ins, outs):
    ins, outs = rules.same_shape(attrs, ins, outs)
    return ins, outs


register(OpDef(
    "cast_storage",
    params=Params(stype=Field("str", choices=(DNS, RSP, CSR), doc="output storage type")),
    dispatch=tuple(_cast_row(s, d) for s in (DNS, RSP, CSR) for d in (DNS, RSP, CSR)),
    infer_shape=_cast_shape, gradient=_cast_grad, aliases=("_sparse_cast_storage",),
    doc="""Cast to another storage type.

    Every direction is supported, including csr <-> row_sparse (MXNet 1.9.1 raises
    "Operator not implemented" there). csr needs a 2-D input. The gradient is dense.
    """))
