"""Reductions: sum, mean, max, min, prod, nansum, nanprod, norm, argmax, argmin
(axis / keepdims / exclude), with csr and row_sparse rows for sum, mean and norm."""
from __future__ import annotations

import math

import numpy as np

from ... import storage as st
from ...base import MXNetError, ShapeError, dtype_of
from ...kernels import csr as kcsr
from ...kernels import reduce as kred
from ...kernels import rsp as krsp
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import CSR, DNS, RSP, Checked, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_RED = Params(axis=Field("shape_or_none", None, doc="axes to reduce (None = all)"),
              keepdims=Field("bool", False, doc="keep reduced axes as size 1"),
              exclude=Field("bool", False, doc="reduce the axes NOT in ``axis``"))


_AXES: dict = {}


def red_axes(a, nd, op="reduce"):
    """Normalised tuple of reduced axes (None or () means all axes); memoised per
    (attrs, ndim): a kernel and its shape rule ask several times per call."""
    try:
        hit = _AXES.get((a, nd))
    except TypeError:  # unhashable attrs
        hit = None
    if hit is not None:
        return hit
    if not a.axis:
        axes = tuple(range(nd))
    else:
        listed = [norm_axis(x, nd, op) for x in a.axis]
        given = set(listed)
        if len(given) != len(listed):  # MXNet's check (numpy's sum raises too)
            raise ShapeError(f"operator {op}: Reduction axes have duplicates "
                             f"[{','.join(str(x) for x in a.axis)}]")
        axes = tuple(i for i in range(nd) if i not in given) if a.exclude else \
            tuple(sorted(given))
    if len(_AXES) < 4096:
        try:
            _AXES[(a, nd)] = axes
        except TypeError:
            pass
    return axes


def red_out_shape(a, s, op="reduce"):
    axes = red_axes(a, len(s), op)
    if a.keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(s))
    out = tuple(d for i, d in enumerate(s) if i not in axes)
    return out if out else (1,)


def _red_shape(op):
    def rule(attrs, ins, outs):
        if ins[0] is not None:
            rules.set_shape(outs, 0, red_out_shape(attrs, tuple(ins[0]), op), "output")
        return ins, outs
    return rule


def _keep(a, y, x):
    """y reshaped with the reduced axes kept (for broadcasting back to x)."""
    axes = red_axes(a, x.ndim)
    return np.asarray(y).reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))


def _count(a, x):
    axes = red_axes(a, x.ndim)
    return math.prod([x.shape[i] for i in axes]) if axes else 1


def _sum_trailing(x, axes):
    """sum of a C-contiguous float array over its trailing ``axes`` as a product with a ones
    vector, or None when that does not apply. BLAS is 3-20x faster than NumPy's reduction
    over a short last axis (256 x 8: 1.5 vs 6.3 us; 5000 x 8: 4 vs 95 us) and accumulates in
    the array's dtype, as MXNet's reduce does."""
    nd = x.ndim
    if (not axes or axes != tuple(range(nd - len(axes), nd)) or len(axes) == nd or not x.size
            or x.dtype not in (np.float32, np.float64) or not x.flags.c_contiguous):
        return None
    lead = x.shape[:nd - len(axes)]
    inner = math.prod(x.shape[nd - len(axes):])
    return (x.reshape(math.prod(lead), inner) @ np.ones(inner, x.dtype)).reshape(lead)


_NO_IDENTITY = {np.max: "max", np.min: "min", np.argmax: "argmax", np.argmin: "argmin"}


def _no_empty_reduce(fn, x, axes):
    """max/min/argmax/argmin of nothing has no value (sum and prod have identities)."""
    if fn in _NO_IDENTITY and (
            x.size == 0 if axes is None else any(x.shape[i] == 0 for i in np.atleast_1d(axes))):
        raise MXNetError(f"{_NO_IDENTITY[fn]}: cannot reduce an empty axis of an array of "
                         f"shape {x.shape} (there is no identity)")


def _np_reduce(fn):
    def k(a, xs):
        x = xs[0]
        axes = red_axes(a, x.ndim)
        y = None
        if fn is np.sum or fn is np.mean:
            y = _sum_trailing(x, axes)
            if y is None:
                y = kred.sum_block(x, axes)
        if y is not None:
            if fn is np.mean:
                y /= _count(a, x)
            return (y.reshape(red_out_shape(a, x.shape)),)
        _no_empty_reduce(fn, x, axes)
        with np.errstate(invalid="ignore"):
            y = fn(x, axis=axes, keepdims=a.keepdims)
        y = np.asarray(y, dtype=x.dtype)
        return (y.reshape(red_out_shape(a, x.shape)),)
    return k


# d out / d x per element given (a, x, y_kept); ograd is broadcast and multiplied by it
_DERIV = {
    "sum": lambda a, x, y: 1.0,
    "mean": lambda a, x, y: 1.0 / _count(a, x),
    "max": lambda a, x, y: (x == y).astype(x.dtype),
    "min": lambda a, x, y: (x == y).astype(x.dtype),
    "prod": lambda a, x, y: _prod_deriv(a, x, y),
    "nansum": lambda a, x, y: (~np.isnan(x)).astype(x.dtype),
    "nanprod": lambda a, x, y: np.where(np.isnan(x), 0,
                                        y / np.where((x != 0) & ~np.isnan(x), x, 1)),
}


def _prod_deriv(a, x, y):
    """y / x, and where x == 0 the product of the other reduced elements (exact)."""
    nz = x != 0
    d = y / np.where(nz, x, 1)
    return d if nz.all() else np.where(nz, d, _prod_others(a, x))


def _prod_others(a, x):
    """Product of the other reduced elements: the products before and after each element
    (exclusive cumulative products from both ends), O(n)."""
    axes = red_axes(a, x.ndim)
    xm = np.moveaxis(x, axes, tuple(range(len(axes))))
    lead = xm.shape[:len(axes)]
    flat = xm.reshape((-1,) + xm.shape[len(axes):])
    one = np.ones_like(flat[:1])
    before = np.cumprod(np.concatenate([one, flat[:-1]]), axis=0)
    after = np.cumprod(np.concatenate([one, flat[::-1][:-1]]), axis=0)[::-1]
    out = before * after
    return np.moveaxis(out.reshape(lead + xm.shape[len(axes):]), tuple(range(len(axes))), axes)


def _red_bwd(kind):
    def k(a, xs):
        g, x, y = st.todense(xs[0]), st.todense(xs[1]), xs[2]
        if kind in ("sum", "mean"):  # a constant derivative: one broadcast write
            out = kred.broadcast_block(g, x.shape, red_axes(a, x.ndim)) if g.dtype == x.dtype \
                else None
            if out is not None:
                if kind == "mean":
                    out *= _DERIV[kind](a, x, None)
                return (out,)
            out = np.empty(x.shape, dtype=x.dtype)
            np.multiply(_keep(a, g, x), _DERIV[kind](a, x, None), out=out, casting="unsafe")
            return (out,)
        yk = _keep(a, st.todense(y), x)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = _DERIV[kind](a, x, yk)
        return ((_keep(a, g, x) * d * np.ones_like(x)).astype(x.dtype, copy=False),)
    return k


def _csr_sum(mean):
    def k(a, xs):
        x = xs[0]
        ax = None if a.axis is None else red_axes(a, 2)
        if ax is None or len(ax) == 2:
            y = np.asarray(kcsr.sum_csr(x, None)).reshape(1)
            n = x.shape[0] * x.shape[1]
        else:
            y = kcsr.sum_csr(x, ax[0])
            n = x.shape[ax[0]]
        if mean:
            y = y / max(n, 1)
        return (np.asarray(y, dtype=x.dtype).reshape(red_out_shape(a, x.shape)),)
    return k


def _rsp_sum(mean):
    def k(a, xs):
        x = xs[0]
        axes = red_axes(a, len(x.shape))
        if len(axes) == len(x.shape):
            y = np.asarray(krsp.sum_rsp(x, None))
        elif len(axes) == 1:
            y = krsp.sum_rsp(x, axes[0])
        else:
            y = st.todense(x).sum(axis=axes)
        if mean:
            y = y / max(int(np.prod([x.shape[i] for i in axes], dtype=np.int64)), 1)
        return (np.asarray(y, dtype=x.dtype).reshape(red_out_shape(a, x.shape)),)
    return k


def _csr_axis_ok(a, s):
    # MXNet: csr with axis 0 or 1 and no keepdims; beyond MXNet: no axis (a scalar) too
    return not a.keepdims and not a.exclude and (a.axis is None or len(a.axis) == 1)


def reduction(kind, fn, aliases=(), sparse=False):
    rows = [Dispatch((DNS,), (DNS,), _np_reduce(fn))]
    if sparse:
        mean = kind == "mean"
        rows += [Dispatch((CSR,), (DNS,), _csr_sum(mean), when=_csr_axis_ok),
                 Dispatch((RSP,), (DNS,), _rsp_sum(mean))]
    bname = "_backward_" + kind
    register(OpDef(
        kind, params=_RED, dispatch=tuple(rows), infer_shape=_red_shape(kind),
        gradient=lambda node, og: [bw(bname, [og[0], node.inputs[0], (node, 0)], node,
                                      "backward", **kept(node))],
        aliases=tuple(aliases),
        doc=f"""Reduce with ``{kind}`` over ``axis`` (all axes when None).

    A full reduction without keepdims has shape (1,) as in MXNet.{
        " Storage: csr with axis 0/1 (or no axis) and row_sparse -> dense without fallback."
        if sparse else ""}

    Parameters
    ----------
    data : Symbol or NDArray
    axis : int, tuple of int or None
    keepdims : bool, default False
    exclude : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.{kind}(mx.nd.array([[1., 2.], [3., 4.]]), axis=1).shape
    (2,)
    """))
    register(OpDef(
        bname, params=_RED, inputs=("ograd", "data", "out"),
        dispatch=(Dispatch(("*", "*", "*"), (DNS,), _red_bwd(kind)),),
        infer_shape=rules.shape_of_input(1),
        infer_type=rules.type_of_input((1, 0)),
        gradient=_linear_bwd_grad(kind) if kind in ("sum", "mean") else None))


def _linear_bwd_grad(kind):
    """sum and mean are linear: the gradient of their backward is the reduction again."""
    def grad(node, og):
        return [bw(kind, [og[0]], node, "grad_ograd", **kept(node)), None, None]
    return grad


reduction("sum", np.sum, ("sum_axis", "_sparse_sum"), sparse=True)
reduction("mean", np.mean, ("_sparse_mean",), sparse=True)
reduction("max", np.max, ("max_axis",))
reduction("min", np.min, ("min_axis",))
reduction("prod", np.prod)
reduction("nansum", np.nansum)
reduction("nanprod", np.nanprod)


# ----------------------------------------------------------------------------- norm
def _norm_check(op, a):
    require(a.ord in (1, 2), op, f"ord must be 1 or 2, got {a.ord}")


_NORM = Checked(_norm_check, ord=Field("int", 2), axis=Field("shape_or_none", None),
                out_dtype=Field("dtype", None), keepdims=Field("bool", False))


def _norm_axes(a, nd):
    if a.axis is None:
        return tuple(range(nd))
    return tuple(sorted({norm_axis(x, nd, "norm") for x in a.axis}))


def _norm_out(a, s):
    axes = _norm_axes(a, len(s))
    if a.keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(s))
    out = tuple(d for i, d in enumerate(s) if i not in axes)
    return out if out else (1,)


def _norm_dense(a, xs):
    x = st.todense(xs[0])
    axes = _norm_axes(a, x.ndim)
    xd = x.astype(np.float64) if x.dtype.kind != "f" else x
    y = np.abs(xd).sum(axis=axes) if a.ord == 1 else np.sqrt((xd * xd).sum(axis=axes))
    dt = dtype_of(a.out_dtype) if a.out_dtype else x.dtype
    return (np.asarray(y).astype(dt).reshape(_norm_out(a, x.shape)),)


def _norm_csr(a, xs):
    x = xs[0]
    axes = _norm_axes(a, 2)
    y = kcsr.norm_csr(x, None if len(axes) == 2 else axes[0])
    dt = dtype_of(a.out_dtype) if a.out_dtype else x.dtype
    return (np.asarray(y).astype(dt).reshape(_norm_out(a, x.shape)),)


def _norm_rsp(a, xs):
    x = xs[0]
    dt = dtype_of(a.out_dtype) if a.out_dtype else x.dtype
    return (np.asarray(krsp.norm_rsp(x)).astype(dt).reshape(_norm_out(a, x.shape)),)


def _norm_bwd(a, xs):
    g, x, y = st.todense(xs[0]), st.todense(xs[1]), st.todense(xs[2])
    axes = _norm_axes(a, x.ndim)
    keep = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    gk, yk = g.reshape(keep), y.reshape(keep)
    if a.ord == 1:
        d = np.sign(x)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(yk != 0, x / np.where(yk != 0, yk, 1), 0)
    return ((gk * d).astype(x.dtype, copy=False),)


def _norm_type(attrs, ins, outs):
    if attrs.out_dtype:
        rules.set_type(outs, 0, dtype_of(attrs.out_dtype), "output")
    elif ins[0] is not None:
        rules.set_type(outs, 0, ins[0], "output")
    return ins, outs


register(OpDef(
    "norm", params=_NORM,
    dispatch=(Dispatch((DNS,), (DNS,), _norm_dense),
              Dispatch((CSR,), (DNS,), _norm_csr,
                       when=lambda a, s: a.ord == 2 and not a.keepdims and (
                           a.axis is None or len(a.axis) in (1, 2))),
              Dispatch((RSP,), (DNS,), _norm_rsp,
                       when=lambda a, s: a.ord == 2 and not a.keepdims and a.axis is None)),
    infer_shape=lambda a, i, o: (i, [o[0] if i[0] is None else _norm_out(a, tuple(i[0]))]),
    infer_type=_norm_type,
    gradient=lambda node, og: [bw("_backward_norm", [og[0], node.inputs[0], (node, 0)], node,
                                  "backward", **kept(node))],
    aliases=("_sparse_norm",),
    doc="""L1 (ord=1) or L2 (ord=2) norm over ``axis`` (all entries when None).

    Storage: csr (no axis or axis 0/1) and row_sparse (no axis) -> dense, L2 only.

    Parameters
    ----------
    data : Symbol or NDArray
    ord : {1, 2}, default 2
    axis : int, tuple of int or None
    out_dtype : dtype or None
    keepdims : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.norm(mx.nd.array([3., 4.])).asnumpy().tolist()
    [5.0]
    """))
register(OpDef(
    "_backward_norm", params=_NORM, inputs=("ograd", "data", "out"),
    dispatch=(Dispatch(("*", "*", "*"), (DNS,), _norm_bwd),),
    infer_shape=rules.shape_of_input(1),
    infer_type=rules.type_of_input((1, 0))))


# ----------------------------------------------------------------------------- argmax/argmin
_ARG = Params(axis=Field("int_or_none", None), keepdims=Field("bool", False))


def _arg_out(a, s):
    if a.axis is None:
        return (1,) * len(s) if a.keepdims else (1,)
    ax = norm_axis(a.axis, len(s), "argmax")
    return s[:ax] + ((1,) if a.keepdims else ()) + s[ax + 1:] or (1,)


def _arg(fn):
    def k(a, xs):
        x = xs[0]
        ax = None if a.axis is None else norm_axis(a.axis, x.ndim, "argmax")
        _no_empty_reduce(fn, x, ax)
        if ax is None:
            y = np.asarray(fn(x.reshape(-1)))
        else:
            y = fn(x, axis=ax)
        dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
        return (np.asarray(y).astype(dt).reshape(_arg_out(a, x.shape)),)
    return k


for _n, _f in (("argmax", np.argmax), ("argmin", np.argmin)):
    register(OpDef(
        _n, params=_ARG, dispatch=(Dispatch((DNS,), (DNS,), _arg(_f)),),
        infer_shape=lambda a, i, o: (i, [o[0] if i[0] is None else _arg_out(a, tuple(i[0]))]),
        gradient=lambda node, og: [None],
        doc=f"""Index of the {_n[3:]}imum along ``axis`` (flattened when None), as floats.

    Parameters
    ----------
    data : Symbol or NDArray
    axis : int or None, default None
    keepdims : bool, default False
    """))
register(OpDef(
    "argmax_channel", dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (
        np.argmax(xs[0], axis=-1).astype(xs[0].dtype),)),),
    infer_shape=lambda a, i, o: (i, [o[0] if i[0] is None else tuple(i[0][:-1])]),
    gradient=lambda node, og: [None],
    doc="argmax over the last axis (MXNet's argmax_channel)."))
