"""Optimizer update operators (``nd.sgd_update``, ``nd.sparse.adam_update``...).

MXNet 1.9.1 semantics (inventory section 2, probed):

- The op returns the updated weight; the states (mom, mean, var, z, n, history) are updated
  in place. ``out=weight`` updates the weight in place too (what optimizers do); the
  row_sparse kernels then touch only the gradient's rows. MXNet *requires* out=weight for
  sparse updates; here a new weight is returned when it is omitted.
- A row_sparse gradient with ``lazy_update=True`` (and, for the stateful ops, states of the
  weight's stype) updates only the gradient's rows of the weight and states, weight decay
  included. Otherwise the standard update runs on every row (missing rows: zero gradient).
- Row_sparse weights and states are completed to hold every row, as MXNet does.
- ftrl: all row_sparse -> lazy; a dense weight with a row_sparse gradient -> full update.
- _sparse_adagrad_update: lazy on the gradient's rows. MXNet refuses wd != 0 and dense
  gradients ("Operator not implemented"); here wd enters the gradient (``g + wd*w``) and a
  dense gradient runs the dense update.
- nag_mom, rmsprop(alex), signsgd, signum, ftml: dense updates (sparse inputs are
  densified, as MXNet's fallback does, but states stay the caller's arrays).
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import StorageError
from ...kernels import optim as kopt
from ..core import rules
from ..core.helpers import DNS, RSP
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_COMMON = dict(
    wd=Field("float", 0.0, doc="weight decay"),
    rescale_grad=Field("float", 1.0, doc="gradient scale"),
    clip_gradient=Field("float", -1.0, doc="clip the scaled gradient to [-c, c]; < 0: off"))


def _params(lazy=True, after=None, **fields):
    """The op's own fields, then wd/rescale_grad/clip_gradient, then ``after`` (fields MXNet
    declares after the common ones) and lazy_update: MXNet's declaration order."""
    extra = {"lazy_update": Field("bool", True, doc="update only the row_sparse gradient's "
                                                     "rows")} if lazy else {}
    return Params(**fields, **_COMMON, **(after or {}), **extra)


# ----------------------------------------------------------------------------- storage views
def _complete_rsp(r: st.RSP):
    """Make a row_sparse raw hold every row, in place (its data becomes the full array)."""
    n = r.shape[0]
    if len(r.indices) != n:
        r.data = st.todense(r)
        r.indices = np.arange(n, dtype=np.int64)
    elif not r.data.flags.c_contiguous or not r.data.flags.writeable:
        r.data = np.ascontiguousarray(r.data).copy()
    return r.data


def _state_view(s, op_name, i):
    """(dense array updated in place, write-back callable or None) for a state."""
    if isinstance(s, np.ndarray):
        if not s.flags.c_contiguous or not s.flags.writeable:
            raise StorageError(f"{op_name}: state {i} must be a writeable contiguous array "
                               "(it is updated in place)")
        return s, None
    if isinstance(s, st.RSP):
        return _complete_rsp(s), None
    arr = st.todense(s).copy()  # a csr state: update densely, store compressed again

    def back():
        new = st.dense_to_csr(arr)
        s.data, s.indices, s.indptr = new.data, new.indices, new.indptr
    return arr, back


def _weight_view(w, inplace):
    """(dense array to update, finish() -> raw result in the weight's stype)."""
    if isinstance(w, np.ndarray):
        if inplace and w.flags.c_contiguous and w.flags.writeable:
            return w, lambda: w
        arr = np.array(w, order="C", copy=True)
        return arr, lambda: arr
    if isinstance(w, st.RSP):
        if inplace:
            arr = _complete_rsp(w)
            return arr, lambda: w
        arr = st.todense(w).copy() if len(w.indices) != w.shape[0] else w.data.copy()
        return arr, lambda: st.RSP(arr, np.arange(w.shape[0], dtype=np.int64), w.shape)
    arr = st.todense(w).copy()  # csr weight: dense update, compressed again
    return arr, lambda: st.dense_to_csr(arr)


def _grad_as(g, dtype):
    if isinstance(g, st.RSP):
        return g if g.data.dtype == dtype else st.RSP(g.data.astype(dtype), g.indices, g.shape)
    return np.ascontiguousarray(st.todense(g), dtype=dtype)


# ----------------------------------------------------------------------------- kernel factory
def _update_kernel(name, dense, lazy=None, std=None, scalars=(), lazy_rule="param",
                   out_stype=None):
    """Build an update kernel.

    dense(w, g, *states, **scalars) / lazy(...) / std(...) are kernels.optim functions.
    lazy_rule: 'param' (lazy_update), 'states' (lazy_update and states' stype == weight's),
    'all_rsp' (weight and states row_sparse), 'always', 'never'.
    out_stype: force the result stype (the rows' declared output), else the weight's.
    """
    def kernel(attrs, xs):
        w, g, states = xs[0], xs[1], xs[2:]
        arr, finish = _weight_view(w, bool(attrs.get("__inplace__")))
        pairs = [_state_view(s, name, i) for i, s in enumerate(states)]
        views = [v for v, _ in pairs]
        kw = {k: attrs[k] for k in scalars}
        if "clip_gradient" in kw and kw["clip_gradient"] < 0:
            kw["clip_gradient"] = None
        def run(work, gg, wviews):
            if isinstance(gg, st.RSP) and lazy is not None \
                    and _use_lazy(lazy_rule, attrs, w, states):
                lazy(work, gg, *wviews, **kw)
            elif isinstance(gg, st.RSP) and std is not None:
                std(work, gg, *wviews, **kw)
            else:
                dense(work, _grad_as(st.todense(gg) if isinstance(gg, st.RSP) else gg,
                                     work.dtype), *wviews, **kw)

        # Numba has no half-precision arithmetic: float16 weights and states are updated as
        # float32 copies and stored back, by the kernels' one widening (via_float32)
        half = any(a.dtype == np.float16 for a in [arr, *views])
        gg = _grad_as(g, np.dtype(np.float32) if half else arr.dtype)
        if not kopt.via_float32(run, arr, gg, views):
            run(arr, gg, views)
        for _, back in pairs:
            if back is not None:
                back()
        res = finish()
        if out_stype is not None and st.stype_of(res) != out_stype:
            res = st.cast_raw(res, out_stype)
        return (res,)
    return kernel


def _use_lazy(rule, attrs, w, states):
    ws = st.stype_of(w)
    if rule == "always":
        return True
    if rule == "never":
        return False
    if rule == "all_rsp":
        return ws == RSP and all(st.stype_of(s) == RSP for s in states)
    if not attrs.get("lazy_update", True):
        return False
    return rule == "param" or all(st.stype_of(s) == ws for s in states)


def _shape_rule(attrs, ins, outs):
    return rules.same_shape(attrs, ins, outs)


def _type_rule(attrs, ins, outs):
    return rules.same_type(attrs, ins, outs)


def register_update(name, inputs, params, dense, lazy=None, std=None, scalars=(),
                    lazy_rule="param", rows=None, aliases=(), doc=""):
    """Register an update op; ``rows`` is a list of (input stypes, output stype)."""
    ns = len(inputs) - 2
    dispatch = []
    for ins, out in rows:
        # weight_inplace: with out=weight, nd.* passes __inplace__ and the weight is updated
        # where it lies
        dispatch.append(Dispatch(ins, (out,), _update_kernel(
            name, dense, lazy, std, scalars, lazy_rule, out_stype=out), weight_inplace=True))
    register(OpDef(name, inputs=tuple(inputs), params=params, dispatch=tuple(dispatch),
                   mutates=tuple(range(2, 2 + ns)), infer_shape=_shape_rule,
                   infer_type=_type_rule, aliases=aliases, doc=doc))


_ANY = ("*",)
_SGD_SCALARS = ("lr", "wd", "rescale_grad", "clip_gradient")

register_update(
    "sgd_update", ("weight", "grad"), _params(lr=Field("float", doc="learning rate")),
    kopt.sgd_update, kopt.sgd_update_lazy, kopt.sgd_update_std_rsp, _SGD_SCALARS,
    rows=[((DNS, DNS), DNS), ((DNS, RSP), DNS), ((RSP, RSP), RSP), (("*", "*"), DNS)],
    aliases=("_sparse_sgd_update",),
    doc="""SGD: ``w = (1 - lr*wd)*w - lr*clip(rescale_grad*g)``.

    Storage: a row_sparse gradient with lazy_update updates only its rows (weight decay too);
    the result has the weight's stype (row_sparse weight -> row_sparse). Other mixes are
    computed densely. ``out=weight`` updates in place.
    """)
register_update(
    "sgd_mom_update", ("weight", "grad", "mom"),
    _params(lr=Field("float", doc="learning rate"), momentum=Field("float", 0.0)),
    kopt.sgd_mom_update, kopt.sgd_mom_update_lazy, kopt.sgd_mom_update_std_rsp,
    ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"), lazy_rule="states",
    rows=[((DNS, DNS, DNS), DNS), ((DNS, RSP, DNS), DNS), ((RSP, RSP, RSP), RSP),
          ((RSP, RSP, DNS), RSP), (_ANY * 3, DNS)],
    aliases=("_sparse_sgd_mom_update",),
    doc="""SGD with momentum: ``m = momentum*m - lr*wd*w - lr*clip(rescale_grad*g)``;
    ``w += m``. ``mom`` is updated in place.

    Storage: lazy rows when the gradient is row_sparse, lazy_update is set and ``mom`` has
    the weight's stype; a row_sparse weight with a dense ``mom`` takes the standard update.
    """)
register_update(
    "adam_update", ("weight", "grad", "mean", "var"),
    _params(lr=Field("float", doc="learning rate"), beta1=Field("float", 0.9),
            beta2=Field("float", 0.999), epsilon=Field("float", 1e-8)),
    kopt.adam_update, kopt.adam_update_lazy, kopt.adam_update_std_rsp,
    ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient"),
    lazy_rule="states",
    rows=[((DNS, DNS, DNS, DNS), DNS), ((DNS, RSP, DNS, DNS), DNS), ((RSP, RSP, RSP, RSP), RSP),
          ((RSP, RSP, DNS, DNS), RSP),
          (_ANY * 4, DNS)],
    aliases=("_sparse_adam_update",),
    doc="""Adam without bias correction (pass ``lr*sqrt(1-beta2**t)/(1-beta1**t)``):
    ``G = clip(rescale_grad*g + wd*w)``; mean and var updated in place;
    ``w -= lr*mean/(sqrt(var) + epsilon)``. Storage as :func:`sgd_mom_update`.
    """)
register_update(
    "ftrl_update", ("weight", "grad", "z", "n"),
    _params(lazy=False, lr=Field("float", doc="learning rate"), lamda1=Field("float", 0.01),
            beta=Field("float", 1.0)),
    kopt.ftrl_update, kopt.ftrl_update_lazy, None,
    ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient"), lazy_rule="all_rsp",
    rows=[((DNS, DNS, DNS, DNS), DNS), ((RSP, RSP, RSP, RSP), RSP), (_ANY * 4, DNS)],
    aliases=("_sparse_ftrl_update",),
    doc="""FTRL-proximal; z and n are updated in place. All row_sparse: only the gradient's
    rows; a dense weight with a row_sparse gradient: every row (MXNet's fallback).
    """)
register_update(
    "_sparse_adagrad_update", ("weight", "grad", "history"),
    _params(lazy=False, lr=Field("float", doc="learning rate"),
            epsilon=Field("float", 1e-7)),
    kopt.adagrad_update, kopt.adagrad_update_lazy, None,
    ("lr", "epsilon", "wd", "rescale_grad", "clip_gradient"), lazy_rule="always",
    rows=[((DNS, RSP, DNS), DNS), ((RSP, RSP, RSP), RSP), ((DNS, DNS, DNS), DNS), (_ANY * 3, DNS)],
    aliases=("adagrad_update",),
    doc="""AdaGrad: ``G = clip(rescale_grad*g) + wd*w``; ``history += G**2``;
    ``w -= lr*G/sqrt(history + epsilon)``; only the row_sparse gradient's rows change.

    Beyond MXNet (which raises "Operator not implemented"): wd != 0 and dense gradients.
    """)

_DENSE_ONLY = [
    ("nag_mom_update", ("weight", "grad", "mom"),
     dict(lr=Field("float"), momentum=Field("float", 0.0)), kopt.nag_mom_update,
     ("lr", "momentum", "wd", "rescale_grad", "clip_gradient")),
    ("rmsprop_update", ("weight", "grad", "n"),
     dict(lr=Field("float"), gamma1=Field("float", 0.95), epsilon=Field("float", 1e-8),
          after=dict(clip_weights=Field("float", -1.0))), kopt.rmsprop_update,
     ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights")),
    ("rmspropalex_update", ("weight", "grad", "n", "g", "delta"),
     dict(lr=Field("float"), gamma1=Field("float", 0.95), gamma2=Field("float", 0.9),
          epsilon=Field("float", 1e-8), after=dict(clip_weights=Field("float", -1.0))),
     kopt.rmspropalex_update,
     ("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient",
      "clip_weights")),
    ("signsgd_update", ("weight", "grad"), dict(lr=Field("float")), kopt.signsgd_update,
     _SGD_SCALARS),
    ("signum_update", ("weight", "grad", "mom"),
     dict(lr=Field("float"), momentum=Field("float", 0.0),
          after=dict(wd_lh=Field("float", 0.0))),
     kopt.signum_update, ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh")),
]
for _name, _inputs, _fields, _fn, _scal in _DENSE_ONLY:
    _n = len(_inputs)
    register_update(_name, _inputs, _params(lazy=False, **_fields), _fn, None, None, _scal,
                    lazy_rule="never", rows=[((DNS,) * _n, DNS), (_ANY * _n, DNS)],
                    doc=f"{_name}: dense update (kernels.optim.{_fn.__name__}); states in "
                        "place. Sparse inputs are densified (MXNet falls back).")


def _ftml(w, g, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad):
    kopt.ftml_update(w, g, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale_grad,
                     None if clip_grad is None or clip_grad < 0 else clip_grad)


_ftml.__name__ = "ftml_update"
register_update(
    "ftml_update", ("weight", "grad", "d", "v", "z"),
    Params(lr=Field("float"), beta1=Field("float", 0.6), beta2=Field("float", 0.999),
           epsilon=Field("float", 1e-8), t=Field("int"), wd=Field("float", 0.0),
           rescale_grad=Field("float", 1.0), clip_grad=Field("float", -1.0)),
    _ftml, None, None, ("lr", "beta1", "beta2", "epsilon", "t", "wd", "rescale_grad",
                        "clip_grad"),
    lazy_rule="never", rows=[((DNS,) * 5, DNS), (_ANY * 5, DNS)],
    doc="FTML step t (dense); d, v and z are updated in place.")
