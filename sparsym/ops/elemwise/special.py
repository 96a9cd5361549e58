"""Elementwise functions with parameters or special derivatives: erfinv, hard_sigmoid and
smooth_l1 (MXNet 1.9.1 has no sparse rows for them: sparse inputs fall back to dense)."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ..core.grad import bw, kept
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


def param_unary(name, params, fn, dfn, doc):
    """Register ``name(data)`` and ``_backward_<name>(ograd, data)``: y = fn(attrs, x) and
    dx = ograd * dfn(attrs, x), both in the input's dtype."""
    def fwd(a, xs):
        x = xs[0]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (np.asarray(fn(a, x)).astype(x.dtype, copy=False),)

    def bwd(a, xs):
        og, x = st.todense(xs[0]), st.todense(xs[1])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ((og * dfn(a, x)).astype(og.dtype, copy=False),)

    bname = "_backward_" + name
    register(OpDef(bname, params=params, inputs=("ograd", "data"),
                   dispatch=(Dispatch((DNS, DNS), (DNS,), bwd), Dispatch(("*", "*"), (DNS,), bwd)),
                   doc=f"Gradient of {name}: ograd * {name}'(data)."))
    register(OpDef(name, params=params, dispatch=(Dispatch((DNS,), (DNS,), fwd),),
                   gradient=lambda node, og: [bw(bname, [og[0], node.inputs[0]], node,
                                                 "backward", **kept(node))],
                   doc=doc))


def _erfinv(a, x):
    from scipy.special import erfinv
    return erfinv(x)


def _derfinv(a, x):
    # d/dx erfinv(x) = sqrt(pi)/2 * exp(erfinv(x)**2)
    return 0.5 * np.sqrt(np.pi) * np.exp(np.square(_erfinv(a, x)))


param_unary("erfinv", Params(), _erfinv, _derfinv, """Inverse Gauss error function.

    ``erfinv(+-1)`` is ``+-inf``; outside [-1, 1] the result is NaN.

    Parameters
    ----------
    data : NDArray or Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> round(float(mx.nd.erfinv(mx.nd.array([0.5])).asscalar()), 4)
    0.4769
    """)


def _hard_sigmoid(a, x):
    return np.clip(a.alpha * x + a.beta, 0.0, 1.0)


def _dhard_sigmoid(a, x):
    z = a.alpha * x + a.beta
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return ((z > 0) & (z < 1)) * dt.type(a.alpha)  # float x's dtype: no float64 temporaries


param_unary("hard_sigmoid", Params(alpha=Field("float", 0.2, doc="slope"),
                                   beta=Field("float", 0.5, doc="offset")),
            _hard_sigmoid, _dhard_sigmoid, """Hard sigmoid: max(0, min(1, alpha * x + beta)).

    Parameters
    ----------
    data : NDArray or Symbol
    alpha : float, default 0.2
    beta : float, default 0.5

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.hard_sigmoid(mx.nd.array([-5., 0., 1.])).asnumpy().tolist()
    [0.0, 0.5, 0.699999988079071]
    """)


def _smooth_l1(a, x):
    s2 = a.scalar * a.scalar
    ax = np.abs(x)
    return np.where(ax < 1.0 / s2, 0.5 * s2 * x * x, ax - 0.5 / s2)


def _dsmooth_l1(a, x):
    s2 = a.scalar * a.scalar
    return np.where(np.abs(x) < 1.0 / s2, s2 * x, np.sign(x))


param_unary("smooth_l1", Params(scalar=Field("float", 1.0, doc="sigma")),
            _smooth_l1, _dsmooth_l1, """Smooth L1 loss, elementwise (sigma = ``scalar``).

    ``0.5 * (sigma * x)**2`` where ``|x| < 1 / sigma**2``, else ``|x| - 0.5 / sigma**2``.

    Parameters
    ----------
    data : NDArray or Symbol
    scalar : float, default 1.0

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.smooth_l1(mx.nd.array([-2., 0.5]), scalar=1.0).asnumpy().tolist()
    [1.5, 0.125]
    """)
