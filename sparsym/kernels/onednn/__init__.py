"""oneDNN primitives from Python (ctypes over oneDNN 3.2's C API), and whether to use them.

Dense NN kernels (convolution, pooling, normalization, inner product, RNN) run on oneDNN
where its wheel (``onednn-cpu-gomp==2023.2.0``, Linux x86-64) is installed; the Numba kernels
are the fallback. Nothing is loaded until a kernel first asks (:func:`enabled`): load, engine
and stream cost ~80 ms once.

Selection
---------
``SPARSYM_ONEDNN=0`` forces the Numba kernels, ``SPARSYM_ONEDNN=1`` requires oneDNN (an
absent library raises :class:`OneDNNUnavailable` at the first kernel call), unset means
oneDNN when loadable. :func:`use` switches within a process (tests run both paths).
``mx.runtime.Features()`` reports ``MKLDNN`` (and ``ONEDNN``) as :func:`enabled` says.

Threads
-------
One policy for oneDNN, Numba and BLAS: OpenMP waits passively (``OMP_WAIT_POLICY=PASSIVE``,
set by ``sparsym._threading_env`` before libgomp loads), OpenBLAS stays at one thread
(``kernels.blas``), and a primitive of fewer than ``SMALL_WORK`` multiply-adds, or any
primitive on a machine without an idle core, runs on one OpenMP thread
(:func:`threads_for`; the count is part of the cache key, since oneDNN sizes its work split
when a primitive is created). A convolution offered more threads is timed once on one
thread and on those, and keeps one where that was faster (``primitive(..., tune=True)``).

How an operator uses it
-----------------------
::

    from sparsym.kernels import onednn as dnn
    from sparsym.kernels.onednn import E          # generated constants, prefix dropped

    if dnn.enabled():                               # selection + library loaded
        def create():                               # builds the primitive descriptor
            src = dnn.md_tag(x.shape, np.float32)   # format_tag_any: oneDNN picks (blocked)
            wei = dnn.md_tag(w.shape, np.float32)
            dst = dnn.md_tag(out_shape, np.float32)
            return dnn.create_pd("dnnl_convolution_forward_primitive_desc_create",
                                 E.forward_training, E.convolution_direct, src.ptr, wei.ptr,
                                 None, dst.ptr, dnn.dims(stride), dnn.dims(dilate_minus_1),
                                 dnn.dims(pad), dnn.dims(pad),
                                 attr=dnn.Attr([("eltwise", E.eltwise_relu, 0.0, 0.0)]))
        key = ("conv_fwd", x.shape, w.shape, stride, pad, "f32", attr.key)
        prim = dnn.primitive(key, create, work=macs)   # cached; OneDNNUnimplemented -> fall back
        xs = dnn.from_plain(x, prim.md(E.ARG_SRC))     # reorder only if layouts differ
        ws = dnn.from_plain(w, prim.md(E.ARG_WEIGHTS))
        y = dnn.Tensor(prim.md(E.ARG_DST))             # or a NumPy array when md is plain
        prim.execute({E.ARG_SRC: xs, E.ARG_WEIGHTS: ws, E.ARG_DST: y})
        out = dnn.to_plain(y)                          # NumPy NCHW for the user

- ``create`` calls any ``dnnl_*_primitive_desc_create`` through :func:`create_pd`
  (signatures are generated from the headers; pass ``md.ptr`` and :func:`dims`; None is a
  NULL descriptor such as "no bias").
- ``key`` names everything the descriptor depends on; :func:`primitive` adds the thread
  count and caches unimplemented combinations as such.
- ``execute`` takes NumPy arrays (C-contiguous, in the md's layout) or :class:`Tensor`
  (a oneDNN-laid buffer). It waits for the stream; arrays in ``args`` stay referenced by
  the caller for the call.
- ``prim.md(E.ARG_WORKSPACE).size`` tells whether a workspace is needed (pooling max,
  LRN): allocate ``Tensor(prim.md(E.ARG_WORKSPACE))`` and keep it for the backward.
- Layout conversion between plan steps: :func:`from_plain` / :func:`to_plain` /
  :func:`reorder_md` (cached reorder primitives). Plain NCHW arrays pass through untouched.

Blocked layouts inside a plan
-----------------------------
A dispatch row with ``blocked=True`` (``ops.registry.Dispatch``) tells the executor its
kernel takes :class:`Tensor` inputs and, when its attrs carry ``__blocked__`` (set by the
plan for such rows only, never in imperative ``nd.*`` calls), may return Tensors: the
convolution returns its blocked dst (and dx) as they are. The executor converts a Tensor to
a NumPy array once, before the first step whose row is not ``blocked``, and at the plan's
edges (outputs, gradients, monitors). Elementwise kernels with f(0) = 0 (relu, add) work on
the buffers of Tensors brought to one layout (:func:`one_layout`, ``Tensor.values()``). A
normalization or pooling kernel joins by accepting a Tensor (build its primitive on
``x.md``), returning its dst/diff_src as a Tensor under ``__blocked__``, and setting
``blocked=True`` on its row; anything else it gets is a plain array, as today.
"""
from __future__ import annotations

import os

from ._lib import (E, OneDNNError, OneDNNUnavailable, OneDNNUnimplemented, library_path,
                   load, max_threads, version)
from .core import (DTYPES, SMALL_WORK, Attr, MemoryDesc, Primitive, Tensor, cache_clear,
                   cache_info, create_pd, dims, from_plain, md_plain, md_tag, primitive,
                   one_layout, reorder_md, threads_for, to_plain)

__all__ = ["E", "OneDNNError", "OneDNNUnavailable", "OneDNNUnimplemented", "available",
           "enabled", "attempt", "use", "mode", "load", "library_path", "version", "max_threads",
           "DTYPES", "SMALL_WORK", "Attr", "MemoryDesc", "Primitive", "Tensor", "cache_clear",
           "cache_info", "create_pd", "dims", "from_plain", "md_plain", "md_tag", "primitive",
           "one_layout", "reorder_md", "threads_for", "to_plain"]

ENV = "SPARSYM_ONEDNN"
# override: None (follow the environment) or a bool set by use(); ok: the load's outcome
_sel = {"override": None, "ok": None}


def available() -> bool:
    """Whether libdnnl loads here (tried once)."""
    if _sel["ok"] is None:
        try:
            load()
            _sel["ok"] = True
        except OneDNNUnavailable:
            _sel["ok"] = False
    return _sel["ok"]


def mode() -> str:
    """The requested selection: 'on', 'off' or 'auto' (``use`` first, then the env var)."""
    if _sel["override"] is not None:
        return "on" if _sel["override"] else "off"
    v = os.environ.get(ENV, "").strip().lower()
    if v in ("0", "off", "false", "no"):
        return "off"
    if v in ("1", "on", "true", "yes"):
        return "on"
    return "auto"


def enabled() -> bool:
    """Whether kernels should run on oneDNN now. Forced on (``SPARSYM_ONEDNN=1`` or
    ``use(True)``) without the library raises OneDNNUnavailable with the reason."""
    m = mode()
    if m == "off":
        return False
    if m == "on":
        load()
        return True
    return available()


def attempt(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on oneDNN when :func:`enabled`, else ``NotImplemented``; also
    ``NotImplemented`` when oneDNN refuses the combination (OneDNNError: an unsupported
    dtype or geometry), so the caller runs its Numba kernel::

        y = dnn.attempt(dconv.conv_forward, x, w, b, ...)
        if y is NotImplemented:
            y = kconv.conv_forward(x, w, b, ...)
    """
    if not enabled():
        return NotImplemented
    try:
        return fn(*args, **kwargs)
    except OneDNNError:
        return NotImplemented


class use:
    """``with use(False): ...`` runs kernels on the Numba path (``True``: on oneDNN);
    ``use(None)`` follows the environment again. Also callable as a plain setter."""

    def __init__(self, flag):
        self.prev = _sel["override"]
        _sel["override"] = None if flag is None else bool(flag)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _sel["override"] = self.prev
        return False
