"""The other samplers of MXNet 1.9.1: gamma, exponential, poisson, negative_binomial,
generalized_negative_binomial (scalar ``_random_*``, array ``_sample_*`` and ``*_like``
forms), randint, multinomial, shuffle, _sample_unique_zipfian, and the densities
``_random_pdf_*`` with their gradients. Draws come from ``mx.random``'s generator."""
from __future__ import annotations

import numpy as np

from ... import _rng
from ...base import MXNetError, ParamError, ShapeError, dtype_of
from ...kernels import pdf as kpdf
from ...kernels import sampling as ksamp
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef
from .samplers import (
    _COMMON,
    _SAMPLE,
    _like_kernel,
    _out_shape,
    _param_shape,
    _param_type,
    _sample_shape,
    _sample_type,
    register,  # marks the ops random
)


# ----------------------------------------------------------------------------- draws
def _gen_neg_binomial(rng, mu, alpha, size):
    """Gamma-Poisson mixture with mean mu and variance mu + alpha mu^2 (alpha 0: Poisson)."""
    mu = np.broadcast_to(mu, size)
    alpha = np.broadcast_to(alpha, size)
    safe = np.where(alpha > 0, alpha, 1.0)
    lam = np.where(alpha > 0, rng.gamma(1.0 / safe, mu * safe, size=size), mu)
    return rng.poisson(lam)


_DRAW = {
    "gamma": lambda rng, a, b, size: rng.gamma(a, b, size=size),
    "exponential": lambda rng, lam, size: rng.exponential(1.0 / np.asarray(lam, np.float64),
                                                          size=size),
    "poisson": lambda rng, lam, size: rng.poisson(lam, size=size),
    "negative_binomial": lambda rng, k, p, size: rng.negative_binomial(k, p, size=size),
    "generalized_negative_binomial": _gen_neg_binomial,
}
# (parameter names, defaults and kinds, checks) per distribution, in MXNet's order
_DIST = {
    "gamma": ((("alpha", "float", 1.0), ("beta", "float", 1.0)),
              lambda op, a: require(a.alpha > 0 and a.beta > 0, op,
                                    f"alpha and beta must be positive, got {a.alpha}, {a.beta}")),
    "exponential": ((("lam", "float", 1.0),),
                    lambda op, a: require(a.lam > 0, op, f"lam must be positive, got {a.lam}")),
    "poisson": ((("lam", "float", 1.0),),
                lambda op, a: require(a.lam >= 0, op, f"lam must be non-negative, got {a.lam}")),
    "negative_binomial": ((("k", "int", 1), ("p", "float", 1.0)),
                          lambda op, a: require(a.k > 0 and 0 < a.p <= 1, op,
                                                f"need k > 0 and 0 < p <= 1, got {a.k}, {a.p}")),
    "generalized_negative_binomial": (
        (("mu", "float", 1.0), ("alpha", "float", 1.0)),
        lambda op, a: require(a.mu >= 0 and a.alpha >= 0, op,
                              f"mu and alpha must be non-negative, got {a.mu}, {a.alpha}")),
}


DISTRIBUTIONS = tuple(_DIST)


def arrays_or_numbers(params, array_type):
    """True when the (name, value) parameters of a front-end sampler are all ``array_type``
    (the ``_sample_*`` form), False when all are numbers; a mix raises (MXNet's rule)."""
    arrays = [isinstance(v, array_type) for _, v in params]
    if any(arrays) and not all(arrays):
        names = " and ".join(n for n, _ in params)
        raise ValueError(f"{names} must all be {array_type.__name__}s or all numbers, got "
                         f"{[type(v).__name__ for _, v in params]}")
    return any(arrays)


def _fdt(a):
    return dtype_of(a.dtype) if a.get("dtype") else np.dtype(np.float32)


def _scalar_kernel(dist):
    names = [n for n, _, _ in _DIST[dist][0]]

    def k(a, xs):
        out = _DRAW[dist](_rng.rng(), *[a[n] for n in names], size=_out_shape(a))
        return (np.asarray(out).astype(_fdt(a)),)
    return k


def _array_kernel(dist):
    def k(a, xs):
        extra = tuple(a.shape or ())
        b = (Ellipsis,) + (None,) * len(extra)
        size = xs[0].shape + extra
        params = [np.asarray(x, np.float64)[b] for x in xs]
        try:
            out = _DRAW[dist](_rng.rng(), *params, size=size)
        except ValueError as err:   # NumPy's parameter checks ("scale < 0", "lam < 0"...)
            raise ParamError(f"operator _sample_{dist}: invalid parameter array: {err}, got "
                             f"{[p.ravel()[:8].tolist() for p in params]}") from err
        dt = dtype_of(a.dtype) if a.dtype else xs[0].dtype
        return (np.asarray(out).astype(dt),)
    return k


_DOC = """Draw samples from the {dist} distribution ({params}).

    ``_random_{dist}`` takes scalar parameters and ``shape``; ``_sample_{dist}`` takes
    parameter arrays and draws ``shape`` samples per element (output param.shape + shape);
    ``_random_{dist}_like`` draws samples shaped and typed like its input.
    """

for _dist, (_fields, _check) in _DIST.items():
    _pf = {n: Field(kind, default) for n, kind, default in _fields}
    _doc = _DOC.format(dist=_dist, params=", ".join(n for n, _, _ in _fields))
    register(OpDef(
        f"_random_{_dist}", params=Checked(_check, **_pf, **_COMMON), inputs=(),
        dispatch=(Dispatch((), (DNS,), _scalar_kernel(_dist)),), infer_shape=_param_shape,
        infer_type=_param_type, gradient=lambda node, og: [], needs_out_shapes=True,
        aliases=(f"random_{_dist}",), doc=_doc))
    register(OpDef(
        f"_random_{_dist}_like", params=Checked(_check, **_pf),
        dispatch=(Dispatch((DNS,), (DNS,), _like_kernel(_scalar_kernel(_dist))),),
        infer_shape=rules.same_shape, infer_type=rules.same_type,
        gradient=lambda node, og: [None], doc=_doc))
    _ins = tuple(n for n, _, _ in _fields)
    register(OpDef(
        f"_sample_{_dist}", params=_SAMPLE, inputs=_ins,
        dispatch=(Dispatch((DNS,) * len(_ins), (DNS,), _array_kernel(_dist)),),
        infer_shape=_sample_shape, infer_type=_sample_type,
        gradient=lambda node, og: [None] * len(node.inputs), aliases=(f"sample_{_dist}",),
        doc=_doc))


# ----------------------------------------------------------------------------- randint
def _randint_check(op, a):
    require(a.low < a.high, op, f"low ({a.low}) must be less than high ({a.high})")


_RANDINT = Checked(_randint_check, low=Field("int"), high=Field("int"),
                   shape=Field("shape", ()), ctx=Field("str", ""),
                   dtype=Field("dtype", None, choices=(None, "int32", "int64")))


def _randint(a, xs):
    dt = dtype_of(a.dtype) if a.dtype else np.dtype(np.int32)
    return (_rng.rng().integers(a.low, a.high, size=_out_shape(a), dtype=np.int64)
            .astype(dt),)


def _int_type(attrs, ins, outs):
    rules.set_type(outs, 0, dtype_of(attrs.dtype) if attrs.dtype else np.dtype(np.int32),
                   "output")
    return ins, outs


register(OpDef(
    "_random_randint", params=_RANDINT, inputs=(), dispatch=(Dispatch((), (DNS,), _randint),),
    infer_shape=_param_shape, infer_type=_int_type, gradient=lambda node, og: [],
    needs_out_shapes=True, aliases=("random_randint",),
    doc="""Uniform integers in [low, high) (int32 unless ``dtype='int64'``).

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.random.randint(-1, 3, shape=(4,))
    >>> bool(((x >= -1) * (x < 3)).asnumpy().all()), x.dtype.__name__
    (True, 'int32')
    """))


# ----------------------------------------------------------------------------- multinomial
_MULTI = Params(shape=Field("shape", (), doc="samples per distribution"),
                get_prob=Field("bool", False, doc="also output the log probability of each draw"),
                dtype=Field("dtype", "int32",
                            choices=("float16", "float32", "float64", "int32", "uint8")))


def _multi_shape(attrs, ins, outs):
    x = ins[0]
    if x is not None:
        out = tuple(x[:-1]) + tuple(attrs.shape or ())
        for i in range(len(outs)):
            rules.set_shape(outs, i, out or (1,), "output")
    return ins, outs


def _multi_type(attrs, ins, outs):
    rules.set_type(outs, 0, dtype_of(attrs.dtype), "output")
    if len(outs) > 1 and ins[0] is not None:
        rules.set_type(outs, 1, ins[0], "output")
    return ins, outs


def _multinomial(a, xs):
    p = xs[0]
    k = p.shape[-1]
    if k == 0:  # MXNet: SIGFPE
        raise ShapeError("sample_multinomial: the distribution has no categories (data of "
                         f"shape {tuple(p.shape)})")
    extra = tuple(a.shape or ())
    n = int(np.prod(extra, dtype=np.int64)) if extra else 1
    u = _rng.rng().random((p.size // max(k, 1), n))
    idx = ksamp.draw_rows(p.reshape(-1, k), u)
    out_shape = (p.shape[:-1] + extra) or (1,)
    res = (idx.reshape(out_shape).astype(dtype_of(a.dtype)),)
    if a.get_prob:
        rows = np.asarray(p, np.float64).reshape(-1, k)
        lp = np.log(np.take_along_axis(rows, idx, axis=1))
        res += (lp.reshape(out_shape).astype(xs[0].dtype),)
    return res


def _multinomial_bwd(a, xs):
    g, p, idx = xs
    k = p.shape[-1]
    rows = p.reshape(-1, k).astype(np.float64)
    n = rows.shape[0]
    ii = idx.reshape(n, -1).astype(np.int64)
    gg = g.reshape(n, -1).astype(np.float64)
    dp = np.zeros_like(rows)
    # d log p[i] / d p[i] = 1 / p[i], summed over the draws of each row
    np.add.at(dp, (np.repeat(np.arange(n), ii.shape[1]), ii.reshape(-1)),
              (gg / np.take_along_axis(rows, ii, axis=1)).reshape(-1))
    return (dp.reshape(p.shape).astype(p.dtype),)


def _multinomial_grad(node, og):
    if not node.params.get_prob:
        return [None]
    return multi_bw("_backward_sample_multinomial", [og[1], node.inputs[0], (node, 0)], node,
                    "backward", 1, **kept(node))


register(OpDef(
    "_sample_multinomial", params=_MULTI, dispatch=(Dispatch((DNS,), (DNS,), _multinomial),),
    num_outputs=lambda a: 2 if a.get_prob else 1, infer_shape=_multi_shape,
    infer_type=_multi_type, gradient=_multinomial_grad, aliases=("sample_multinomial",),
    doc="""Draw class indices from the categorical distributions in the last axis of
    ``data`` (``shape`` draws each; output data.shape[:-1] + shape). With ``get_prob`` a
    second output holds the log probability of each draw, differentiable w.r.t. ``data``.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.random.multinomial(mx.nd.array([[0., 1.], [1., 0.]]), shape=3).asnumpy()
    array([[1, 1, 1],
           [0, 0, 0]], dtype=int32)
    """))
register(OpDef(
    "_backward_sample_multinomial", params=_MULTI, inputs=("ograd_prob", "data", "sample"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _multinomial_bwd),),
    infer_shape=lambda a, ins, outs: (ins, [ins[1]]),
    infer_type=lambda a, ins, outs: (ins, [ins[1]])))


# ----------------------------------------------------------------------------- shuffle
register(OpDef(
    "_shuffle", dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (
        xs[0][_rng.rng().permutation(xs[0].shape[0])] if xs[0].ndim else xs[0].copy(),)),),
    aliases=("shuffle",),
    doc="A random permutation of the input along its first axis (new array)."))


# ----------------------------------------------------------------------------- unique zipfian
_ZIPF = Checked(lambda op, a: require(a.range_max >= 1 and len(a.shape or ()) == 2, op,
                                      f"need range_max >= 1 and a 2-D shape (batch, "
                                      f"num_sampled), got {a.range_max}, {a.shape}"),
                range_max=Field("int", doc="classes are in [0, range_max)"),
                shape=Field("shape", (), doc="(batch_size, num_sampled)"))


def _zipf_shape(attrs, ins, outs):
    s = tuple(attrs.shape)
    rules.set_shape(outs, 0, s, "output")
    rules.set_shape(outs, 1, (s[0],), "output")
    return ins, outs


def _unique_zipfian(a, xs):
    batch, num = a.shape
    if num > a.range_max:
        raise MXNetError(f"_sample_unique_zipfian: cannot draw {num} unique classes from "
                         f"range_max={a.range_max}")
    rng = _rng.rng()
    log_range = np.log(a.range_max + 1.0)
    out = np.empty((batch, num), np.int64)
    tries = np.empty(batch, np.int64)
    for b in range(batch):
        seen: dict = {}
        count = 0
        while len(seen) < num:
            # approximately log-uniform draws, in blocks; keep the first ``num`` distinct
            block = np.floor(np.exp(rng.random(max(64, 2 * (num - len(seen)))) * log_range))
            for v in (block.astype(np.int64) - 1) % a.range_max:
                count += 1
                if v not in seen:
                    seen[v] = None
                    if len(seen) == num:
                        break
        out[b] = list(seen)
        tries[b] = count
    return out, tries


register(OpDef(
    "_sample_unique_zipfian", params=_ZIPF, inputs=(), num_outputs=2,
    dispatch=(Dispatch((), (DNS,), _unique_zipfian),), infer_shape=_zipf_shape,
    infer_type=lambda a, ins, outs: (ins, [np.dtype(np.int64)] * 2),
    doc="""Draw ``shape[1]`` distinct classes per batch row from the approximately
    log-uniform (Zipfian) distribution P(c) = log((c + 2) / (c + 1)) / log(range_max + 1);
    outputs (classes, number of draws it took per row), both int64."""))


# ----------------------------------------------------------------------------- pdfs
_PDF = Params(is_log=Field("bool", False, doc="return the log density"))


def _pdf_inputs(dist):
    return ("sample",) + kpdf.PDFS[dist][1]


def _pdf_bcast(dist, x, params):
    """Parameters broadcast against the samples (they lead the sample's shape)."""
    if dist == "dirichlet":
        a = params[0]
        extra = x.ndim - a.ndim
        return [a.reshape(a.shape[:-1] + (1,) * extra + a.shape[-1:])]
    return [p.reshape(p.shape + (1,) * (x.ndim - p.ndim)) for p in params]


def _pdf_fwd(dist):
    fn = kpdf.PDFS[dist][0]

    def k(a, xs):
        if not a.is_log and dist in kpdf.DENSITIES:  # the parameters lead the samples' axes
            return (kpdf.DENSITIES[dist](xs[0], *xs[1:]).astype(xs[0].dtype),)
        x = np.asarray(xs[0], np.float64)
        ps = _pdf_bcast(dist, x, [np.asarray(p, np.float64) for p in xs[1:]])
        with np.errstate(divide="ignore", invalid="ignore"):
            logp, _ = fn(x, *ps)
        return ((logp if a.is_log else np.exp(logp)).astype(xs[0].dtype),)
    return k


def _pdf_bwd(dist):
    fn = kpdf.PDFS[dist][0]

    def k(a, xs):
        g, x = np.asarray(xs[0], np.float64), np.asarray(xs[1], np.float64)
        raw = [np.asarray(p, np.float64) for p in xs[2:]]
        ps = _pdf_bcast(dist, x, raw)
        with np.errstate(divide="ignore", invalid="ignore"):
            logp, parts = fn(x, *ps)
            scale = g if a.is_log else g * np.exp(logp)
        if dist == "dirichlet":
            scale = scale[..., None]
        grads = [np.broadcast_to(scale * parts[0], x.shape)]
        for p, d in zip(raw, parts[1:]):
            full = np.broadcast_to(scale * d, np.broadcast_shapes(x.shape, (scale * d).shape))
            axes = tuple(range(p.ndim - (1 if dist == "dirichlet" else 0),
                               full.ndim - (1 if dist == "dirichlet" else 0)))
            grads.append(full.sum(axis=axes).reshape(p.shape))
        return tuple(v.astype(src.dtype) for v, src in zip(grads, xs[1:]))
    return k


def _pdf_shape(dist):
    def rule(attrs, ins, outs):
        x, p0 = ins[0], ins[1]
        for i in range(2, len(ins)):
            rules.set_shape(ins, i, p0)
            p0 = ins[i] if p0 is None else p0
        if x is not None:
            rules.set_shape(outs, 0, tuple(x[:-1]) if dist == "dirichlet" else x, "output")
        return ins, outs
    return rule


def _pdf_grad(bname):
    def grad(node, og):
        return multi_bw(bname, [og[0]] + list(node.inputs), node, "backward",
                        len(node.inputs), **kept(node))
    return grad


for _dist, (_fn, _pn) in kpdf.PDFS.items():
    register(OpDef(
        f"_random_pdf_{_dist}", params=_PDF, inputs=_pdf_inputs(_dist),
        dispatch=(Dispatch((DNS,) * (1 + len(_pn)), (DNS,), _pdf_fwd(_dist)),),
        infer_shape=_pdf_shape(_dist), infer_type=rules.same_type,
        gradient=_pdf_grad(f"_backward_pdf_{_dist}"), aliases=(f"random_pdf_{_dist}",),
        doc=f"""The {_dist} density (``is_log``: log density) of ``sample`` under the
    parameters {", ".join(_pn)}, one distribution per parameter element; the samples'
    leading axes are the parameters' shape{" (and the last axis the categories)"
                                           if _dist == "dirichlet" else ""}."""))
    register(OpDef(
        f"_backward_pdf_{_dist}", params=_PDF, inputs=("ograd",) + _pdf_inputs(_dist),
        num_outputs=1 + len(_pn), dispatch=(Dispatch((DNS,) * (2 + len(_pn)), (DNS,),
                                                     _pdf_bwd(_dist)),),
        infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))
