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
from . import service

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


# ----------------------------------------------------------------------------- kernels
def _update_kernel(name, kind, scalars, lazy_rule, out_stype, renamed=None):
    """The kernel of one dispatch row of update ``name``: the service's ``kind`` update on
    views of the weight and states; ``lazy_rule`` decides a row_sparse gradient
    (service.LAZY_RULES); ``scalars`` are the attrs passed to the kernel (``renamed`` maps
    an attr to the kernel's keyword); the result has stype ``out_stype``."""
    renamed = renamed or {}
    has_std = service.UPDATES[kind].std_rsp is not None

    def kernel(attrs, xs):
        w, g, states = xs[0], xs[1], xs[2:]
        arr, finish = _weight_view(w, bool(attrs.get("__inplace__")))
        pairs = [_state_view(s, name, i) for i, s in enumerate(states)]
        views = [v for v, _ in pairs]
        kw = {renamed.get(k, k): attrs[k] for k in scalars}
        if kw.get("clip_gradient") is not None and kw["clip_gradient"] < 0:
            kw["clip_gradient"] = None
        lazy = service.lazy_update_applies(
            lazy_rule, st.stype_of(g), attrs.get("lazy_update", True), st.stype_of(w),
            [st.stype_of(s) for s in states])

        def run(work, gg, wviews):
            if not lazy and not (isinstance(gg, st.RSP) and has_std):
                gg = _grad_as(st.todense(gg) if isinstance(gg, st.RSP) else gg, work.dtype)
            service.run_update(kind, lazy, work, gg, wviews, std_rsp=True, **kw)

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
        if st.stype_of(res) != out_stype:
            res = st.cast_raw(res, out_stype)
        return (res,)
    return kernel


def _rows(name, kind, scalars, rows, lazy_rule="never", renamed=None):
    """The dispatch rows of update ``name`` from (input stypes, output stype) pairs.

    ``weight_inplace``: with out=weight, nd.* passes __inplace__ and the weight is updated
    where it lies."""
    return tuple(Dispatch(ins, (out,), _update_kernel(name, kind, scalars, lazy_rule, out,
                                                      renamed), weight_inplace=True)
                 for ins, out in rows)


def _states(inputs):
    """The state inputs (updated in place): every input after weight and grad."""
    return tuple(range(2, len(inputs)))


_ANY = ("*",)
_SGD_SCALARS = ("lr", "wd", "rescale_grad", "clip_gradient")
_SGD_IN = ("weight", "grad")
_SGD_MOM_IN = ("weight", "grad", "mom")
_ADAM_IN = ("weight", "grad", "mean", "var")
_FTRL_IN = ("weight", "grad", "z", "n")
_ADAGRAD_IN = ("weight", "grad", "history")

register(OpDef(
    "sgd_update", inputs=_SGD_IN, params=_params(lr=Field("float", doc="learning rate")),
    dispatch=_rows("sgd_update", "sgd", _SGD_SCALARS,
                   [((DNS, DNS), DNS), ((DNS, RSP), DNS), ((RSP, RSP), RSP), (_ANY * 2, DNS)],
                   lazy_rule="param"),
    mutates=_states(_SGD_IN), infer_shape=rules.same_shape, infer_type=rules.same_type,
    aliases=("_sparse_sgd_update",),
    doc="""SGD: ``w = (1 - lr*wd)*w - lr*clip(rescale_grad*g)``.

    Storage: a row_sparse gradient with lazy_update updates only its rows (weight decay too);
    the result has the weight's stype (row_sparse weight -> row_sparse). Other mixes are
    computed densely. ``out=weight`` updates in place.
    """))
register(OpDef(
    "sgd_mom_update", inputs=_SGD_MOM_IN,
    params=_params(lr=Field("float", doc="learning rate"), momentum=Field("float", 0.0)),
    dispatch=_rows("sgd_mom_update", "sgd_mom",
                   ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
                   [((DNS, DNS, DNS), DNS), ((DNS, RSP, DNS), DNS), ((RSP, RSP, RSP), RSP),
                    ((RSP, RSP, DNS), RSP), (_ANY * 3, DNS)], lazy_rule="states"),
    mutates=_states(_SGD_MOM_IN), infer_shape=rules.same_shape, infer_type=rules.same_type,
    aliases=("_sparse_sgd_mom_update",),
    doc="""SGD with momentum: ``m = momentum*m - lr*wd*w - lr*clip(rescale_grad*g)``;
    ``w += m``. ``mom`` is updated in place.

    Storage: lazy rows when the gradient is row_sparse, lazy_update is set and ``mom`` has
    the weight's stype; a row_sparse weight with a dense ``mom`` takes the standard update.
    """))
register(OpDef(
    "adam_update", inputs=_ADAM_IN,
    params=_params(lr=Field("float", doc="learning rate"), beta1=Field("float", 0.9),
                   beta2=Field("float", 0.999), epsilon=Field("float", 1e-8)),
    dispatch=_rows("adam_update", "adam",
                   ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient"),
                   [((DNS, DNS, DNS, DNS), DNS), ((DNS, RSP, DNS, DNS), DNS),
                    ((RSP, RSP, RSP, RSP), RSP), ((RSP, RSP, DNS, DNS), RSP),
                    (_ANY * 4, DNS)], lazy_rule="states"),
    mutates=_states(_ADAM_IN), infer_shape=rules.same_shape, infer_type=rules.same_type,
    aliases=("_sparse_adam_update",),
    doc="""Adam without bias correction (pass ``lr*sqrt(1-beta2**t)/(1-beta1**t)``):
    ``G = clip(rescale_grad*g + wd*w)``; mean and var updated in place;
    ``w -= lr*mean/(sqrt(var) + epsilon)``. Storage as :func:`sgd_mom_update`.
    """))
register(OpDef(
    "ftrl_update", inputs=_FTRL_IN,
    params=_params(lazy=False, lr=Field("float", doc="learning rate"),
                   lamda1=Field("float", 0.01), beta=Field("float", 1.0)),
    dispatch=_rows("ftrl_update", "ftrl",
                   ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient"),
                   [((DNS, DNS, DNS, DNS), DNS), ((RSP, RSP, RSP, RSP), RSP), (_ANY * 4, DNS)],
                   lazy_rule="all_rsp"),
    mutates=_states(_FTRL_IN), infer_shape=rules.same_shape, infer_type=rules.same_type,
    aliases=("_sparse_ftrl_update",),
    doc="""FTRL-proximal; z and n are updated in place. All row_sparse: only the gradient's
    rows; a dense weight with a row_sparse gradient: every row (MXNet's fallback).
    """))
register(OpDef(
    "_sparse_adagrad_update", inputs=_ADAGRAD_IN,
    params=_params(lazy=False, lr=Field("float", doc="learning rate"),
                   epsilon=Field("float", 1e-7)),
    dispatch=_rows("_sparse_adagrad_update", "adagrad",
                   ("lr", "epsilon", "wd", "rescale_grad", "clip_gradient"),
                   [((DNS, RSP, DNS), DNS), ((RSP, RSP, RSP), RSP), ((DNS, DNS, DNS), DNS),
                    (_ANY * 3, DNS)], lazy_rule="always"),
    mutates=_states(_ADAGRAD_IN), infer_shape=rules.same_shape, infer_type=rules.same_type,
    aliases=("adagrad_update",),
    doc="""AdaGrad: ``G = clip(rescale_grad*g) + wd*w``; ``history += G**2``;
    ``w -= lr*G/sqrt(history + epsilon)``; only the row_sparse gradient's rows change.

    Beyond MXNet (which raises "Operator not implemented"): wd != 0 and dense gradients.
    """))

# Dense updates (MXNet has no sparse kernel for them: sparse inputs are densified)
_DENSE_ONLY = [
    ("nag_mom_update", "nag_mom", ("weight", "grad", "mom"),
     dict(lr=Field("float"), momentum=Field("float", 0.0)),
     ("lr", "momentum", "wd", "rescale_grad", "clip_gradient")),
    ("rmsprop_update", "rmsprop", ("weight", "grad", "n"),
     dict(lr=Field("float"), gamma1=Field("float", 0.95), epsilon=Field("float", 1e-8),
          after=dict(clip_weights=Field("float", -1.0))),
     ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights")),
    ("rmspropalex_update", "rmspropalex", ("weight", "grad", "n", "g", "delta"),
     dict(lr=Field("float"), gamma1=Field("float", 0.95), gamma2=Field("float", 0.9),
          epsilon=Field("float", 1e-8), after=dict(clip_weights=Field("float", -1.0))),
     ("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient",
      "clip_weights")),
    ("signsgd_update", "signsgd", ("weight", "grad"), dict(lr=Field("float")), _SGD_SCALARS),
    ("signum_update", "signum", ("weight", "grad", "mom"),
     dict(lr=Field("float"), momentum=Field("float", 0.0),
          after=dict(wd_lh=Field("float", 0.0))),
     ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh")),
]
for _name, _kind, _inputs, _fields, _scal in _DENSE_ONLY:
    _n = len(_inputs)
    register(OpDef(
        _name, inputs=_inputs, params=_params(lazy=False, **_fields),
        dispatch=_rows(_name, _kind, _scal, [((DNS,) * _n, DNS), (_ANY * _n, DNS)]),
        mutates=_states(_inputs), infer_shape=rules.same_shape, infer_type=rules.same_type,
        doc=f"{_name}: dense update (kernels.optim.{service.UPDATES[_kind].dense.__name__}); "
            "states in place. Sparse inputs are densified (MXNet falls back)."))

_FTML_IN = ("weight", "grad", "d", "v", "z")
register(OpDef(
    "ftml_update", inputs=_FTML_IN,
    params=Params(lr=Field("float"), beta1=Field("float", 0.6), beta2=Field("float", 0.999),
                  epsilon=Field("float", 1e-8), t=Field("int"), wd=Field("float", 0.0),
                  rescale_grad=Field("float", 1.0), clip_grad=Field("float", -1.0)),
    dispatch=_rows("ftml_update", "ftml",
                   ("lr", "beta1", "beta2", "epsilon", "t", "wd", "rescale_grad", "clip_grad"),
                   [((DNS,) * 5, DNS), (_ANY * 5, DNS)],
                   renamed={"clip_grad": "clip_gradient"}),
    mutates=_states(_FTML_IN), infer_shape=rules.same_shape, infer_type=rules.same_type,
    doc="FTML step t (dense); d, v and z are updated in place."))
