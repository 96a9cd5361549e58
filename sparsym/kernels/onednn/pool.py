"""Pooling (max, avg with or without padding) forward and backward on oneDNN.

Storage contract: ``x``, ``dy`` are float32 NumPy arrays laid out NC + spatial (1-D to 3-D),
any strides (a non-contiguous input is reordered), or :class:`core.Tensor` in a oneDNN
layout (inside a plan); outputs are fresh, C-contiguous arrays for array inputs and Tensors
in oneDNN's matching layout for Tensor inputs. Windows follow oneDNN's rule: output ``o``
covers ``[o*s - pad_l, o*s - pad_l + k)``; padded positions are -inf for max and zero for
avg, ``avg_include`` divides by the whole window, ``avg_exclude`` by its part inside the
data. The caller maps MXNet's conventions onto ``pad_l``/``pad_r`` (and falls back where
they differ).

Max backward needs the forward's workspace (where each maximum was). The forward keeps it
with its output (a weak reference: it lives as long as the output), so the backward, which
receives that output, finds it; when it cannot (the output was copied) it recomputes the
forward.
"""
from __future__ import annotations

import math

import numpy as np

from .._kept import KeptWith
from . import core
from ._lib import E

__all__ = ["forward", "backward", "ALGS"]

ALGS = {"max": E.pooling_max, "avg_include": E.pooling_avg_include_padding,
        "avg_exclude": E.pooling_avg_exclude_padding}

# a max pooling's workspace and its forward's geometry, kept with the output's buffer
_WS = KeptWith()


def _buf(t):
    return t.data if isinstance(t, core.Tensor) else t


def _keep(y, ws, key):
    _WS.put(_buf(y), (ws, key))


def _kept(y, key):
    hit = _WS.get(_buf(y))
    return hit[0] if hit is not None and hit[1] == key else None


def _src_key(x):
    """What the src descriptor depends on (a Tensor's layout, else the plain shape), without
    creating a descriptor per call."""
    return x.md.key if isinstance(x, core.Tensor) else tuple(x.shape)


def _src_md(x):
    return x.md if isinstance(x, core.Tensor) else core.md_plain(tuple(x.shape), np.float32)


def _fwd_prim(x, osh, alg, g, prop, blocked):
    k, s, pl, pr = g
    key = ("pool_fwd", _src_key(x), osh, alg, g, prop, blocked)

    def create():
        src = _src_md(x)
        dst = core.md_tag(osh, np.float32) if blocked else core.md_plain(osh, np.float32)
        return core.create_pd("dnnl_pooling_forward_primitive_desc_create", prop, ALGS[alg],
                              src.ptr, dst.ptr, core.dims(s), core.dims(k),
                              core.dims((0,) * len(k)), core.dims(pl), core.dims(pr))
    return core.primitive(key, create, work=math.prod(osh) * math.prod(k))


def _run_fwd(prim, x, blocked, osh):
    y = core.Tensor(prim.md(E.ARG_DST)) if blocked else np.empty(osh, np.float32)
    return core.run_forward(prim, x, y)


def forward(x, out_shape, alg, kernel, stride, pad_l, pad_r):
    """Pooled ``x``; a max pooling keeps its workspace for :func:`backward`."""
    g = (tuple(kernel), tuple(stride), tuple(pad_l), tuple(pad_r))
    osh, blocked = tuple(out_shape), isinstance(x, core.Tensor)
    prop = E.forward_training if alg == "max" else E.forward_inference
    prim = _fwd_prim(x, osh, alg, g, prop, blocked)
    y, ws = _run_fwd(prim, x, blocked, osh)
    if ws is not None:
        _keep(y, ws, (_src_key(x), osh, g))
    return y


def backward(dy, x, alg, kernel, stride, pad_l, pad_r, y=None):
    """Gradient of :func:`forward` with respect to ``x``, given the output gradient ``dy``
    (and the forward's output ``y``, whose kept workspace a max pooling reads)."""
    g = (tuple(kernel), tuple(stride), tuple(pad_l), tuple(pad_r))
    k, s, pl, pr = g
    blocked = isinstance(x, core.Tensor) or isinstance(dy, core.Tensor)
    if blocked and not isinstance(x, core.Tensor):
        x = core.from_plain(x, core.md_tag(tuple(x.shape), np.float32, _blocked_tag(x.ndim)))
    osh = tuple(dy.shape)
    fwd = _fwd_prim(x, osh, alg, g, E.forward_training, blocked)
    key = ("pool_bwd", _src_key(x), osh, alg, g, blocked)

    def create():
        src = _src_md(x)
        ddst = core.md_tag(osh, np.float32) if blocked else core.md_plain(osh, np.float32)
        return core.create_pd("dnnl_pooling_backward_primitive_desc_create", ALGS[alg],
                              src.ptr, ddst.ptr, core.dims(s), core.dims(k),
                              core.dims((0,) * len(k)), core.dims(pl), core.dims(pr),
                              fwd.pd)
    bwd = core.primitive(key, create, work=math.prod(osh) * math.prod(k))
    args = {E.ARG_DIFF_DST: core.from_plain(dy, bwd.md(E.ARG_DIFF_DST))}
    if alg == "max":
        ws = _kept(y, (_src_key(x), osh, g)) if y is not None else None
        if ws is None:
            _, ws = _run_fwd(fwd, x, blocked, osh)
        args[E.ARG_WORKSPACE] = ws.data
    dx = core.Tensor(bwd.md(E.ARG_DIFF_SRC)) if blocked else np.empty(tuple(x.shape),
                                                                      np.float32)
    args[E.ARG_DIFF_SRC] = dx
    bwd.execute(args)
    return dx


def _blocked_tag(ndim):
    return {3: E.nCw16c, 4: E.nChw16c, 5: E.nCdhw16c}[ndim]
