"""Pooling (max, avg with or without padding) forward and backward on oneDNN.

Storage contract: ``x``, ``dy`` are float32 NumPy arrays laid out NC + spatial (1-D to 3-D),
any strides (a non-contiguous input is reordered); outputs are fresh C-contiguous arrays in
the same layout. Windows follow oneDNN's rule: output ``o`` covers
``[o*s - pad_l, o*s - pad_l + k)``; padded positions are -inf for max and zero for avg,
``avg_include`` divides by the whole window, ``avg_exclude`` by its part inside the data.
The caller maps MXNet's conventions onto ``pad_l``/``pad_r`` (and falls back where they
differ). Max backward needs the forward's workspace: :func:`backward` recomputes it from
``x`` (one forward, cheaper than keeping it alive across the graph).
"""
from __future__ import annotations

import numpy as np

from . import core
from ._lib import E

__all__ = ["forward", "backward", "ALGS"]

ALGS = {"max": E.pooling_max, "avg_include": E.pooling_avg_include_padding,
        "avg_exclude": E.pooling_avg_exclude_padding}


def _fwd_prim(shape, osh, alg, k, s, pl, pr, prop):
    nd = len(k)
    key = ("pool_fwd", shape, osh, alg, k, s, pl, pr, prop)

    def create():
        src, dst = core.md_plain(shape, np.float32), core.md_plain(osh, np.float32)
        return core.create_pd("dnnl_pooling_forward_primitive_desc_create", prop, ALGS[alg],
                              src.ptr, dst.ptr, core.dims(s), core.dims(k),
                              core.dims((0,) * nd), core.dims(pl), core.dims(pr))
    return core.primitive(key, create, work=int(np.prod(osh)) * int(np.prod(k)))


def _run_fwd(prim, x, osh):
    y = np.empty(osh, np.float32)
    args = {E.ARG_SRC: core.from_plain(x, prim.md(E.ARG_SRC)), E.ARG_DST: y}
    ws = None
    wmd = prim.md(E.ARG_WORKSPACE)
    if wmd.size:
        ws = core.Tensor(wmd)
        args[E.ARG_WORKSPACE] = ws.data
    prim.execute(args)
    return y, ws


def forward(x, out_shape, alg, kernel, stride, pad_l, pad_r):
    """Pooled ``x`` (inference: no workspace kept)."""
    k, s, pl, pr = tuple(kernel), tuple(stride), tuple(pad_l), tuple(pad_r)
    prim = _fwd_prim(tuple(x.shape), tuple(out_shape), alg, k, s, pl, pr,
                     E.forward_inference)
    return _run_fwd(prim, x, tuple(out_shape))[0]


def backward(dy, x, alg, kernel, stride, pad_l, pad_r):
    """Gradient of :func:`forward` with respect to ``x``, given the output gradient ``dy``."""
    k, s, pl, pr = tuple(kernel), tuple(stride), tuple(pad_l), tuple(pad_r)
    shape, osh = tuple(x.shape), tuple(dy.shape)
    fwd = _fwd_prim(shape, osh, alg, k, s, pl, pr, E.forward_training)
    key = ("pool_bwd", shape, osh, alg, k, s, pl, pr)

    def create():
        dsrc, ddst = core.md_plain(shape, np.float32), core.md_plain(osh, np.float32)
        return core.create_pd("dnnl_pooling_backward_primitive_desc_create", ALGS[alg],
                              dsrc.ptr, ddst.ptr, core.dims(s), core.dims(k),
                              core.dims((0,) * len(k)), core.dims(pl), core.dims(pr),
                              fwd.pd)
    bwd = core.primitive(key, create, work=int(np.prod(osh)) * int(np.prod(k)))
    args = {E.ARG_DIFF_DST: core.from_plain(dy, bwd.md(E.ARG_DIFF_DST))}
    if alg == "max":
        _, ws = _run_fwd(fwd, x, osh)
        args[E.ARG_WORKSPACE] = ws.data
    dx = np.empty(shape, np.float32)
    args[E.ARG_DIFF_SRC] = dx
    bwd.execute(args)
    return dx
