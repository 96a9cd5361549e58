"""Local response normalization across channels and softmax / log-softmax on oneDNN,
forward and backward.

Storage contract: float32 NumPy arrays (any strides: a non-contiguous input is reordered);
outputs are fresh C-contiguous arrays. LRN: 4-D (N, C, H, W), ``y = x * (k + alpha / n *
sum(x[c-h..c+h] ** 2)) ** -beta`` with h = (n - 1) // 2 (MXNet's window). Softmax along
``axis`` of any array (forward only: oneDNN 3.2's softmax backward is its reference code,
slower than kernels/softmax.py). The LRN backward recomputes the forward's workspace from
``x``.
"""
from __future__ import annotations

import math

import numpy as np

from . import core
from ._lib import E

__all__ = ["lrn_forward", "lrn_backward", "softmax_forward"]


def _lrn_fwd_prim(shape, n, alpha, beta, k, prop):
    key = ("lrn_fwd", shape, n, alpha, beta, k, prop)

    def create():
        md = core.md_plain(shape, np.float32)
        return core.create_pd("dnnl_lrn_forward_primitive_desc_create", prop,
                              E.lrn_across_channels, md.ptr, md.ptr, n, alpha, beta, k)
    return core.primitive(key, create, work=math.prod(shape) * n)


def _lrn_run(prim, x):
    return core.run_forward(prim, x, np.empty(x.shape, np.float32))


def lrn_forward(x, n, alpha, beta, k):
    """LRN of ``x`` (inference)."""
    prim = _lrn_fwd_prim(tuple(x.shape), int(n), float(alpha), float(beta), float(k),
                         E.forward_inference)
    return _lrn_run(prim, x)[0]


def lrn_backward(dy, x, n, alpha, beta, k):
    """Gradient of :func:`lrn_forward` with respect to ``x``."""
    shape, n, alpha, beta, k = tuple(x.shape), int(n), float(alpha), float(beta), float(k)
    fwd = _lrn_fwd_prim(shape, n, alpha, beta, k, E.forward_training)

    def create():
        md = core.md_plain(shape, np.float32)
        return core.create_pd("dnnl_lrn_backward_primitive_desc_create",
                              E.lrn_across_channels, md.ptr, md.ptr, md.ptr, n, alpha, beta,
                              k, fwd.pd)
    bwd = core.primitive(("lrn_bwd", shape, n, alpha, beta, k), create,
                         work=math.prod(shape) * n)
    _, ws = _lrn_run(fwd, x)
    dx = np.empty(shape, np.float32)
    args = {E.ARG_SRC: core.from_plain(x, bwd.md(E.ARG_SRC)),
            E.ARG_DIFF_DST: core.from_plain(dy, bwd.md(E.ARG_DIFF_DST)), E.ARG_DIFF_SRC: dx}
    if ws is not None:
        args[E.ARG_WORKSPACE] = ws.data
    bwd.execute(args)
    return dx


def _alg(log):
    return E.softmax_log if log else E.softmax_accurate


def _sm_fwd_prim(shape, axis, log, prop):
    def create():
        md = core.md_plain(shape, np.float32)
        return core.create_pd("dnnl_softmax_forward_primitive_desc_create", prop, _alg(log),
                              md.ptr, md.ptr, axis)
    return core.primitive(("softmax_fwd", shape, axis, log, prop), create,
                          work=math.prod(shape) * 4)


def softmax_forward(x, axis, log=False):
    """softmax (or log-softmax) of ``x`` along ``axis`` (non-negative)."""
    shape = tuple(x.shape)
    prim = _sm_fwd_prim(shape, int(axis), bool(log), E.forward_inference)
    y = np.empty(shape, np.float32)
    prim.execute({E.ARG_SRC: core.from_plain(x, prim.md(E.ARG_SRC)), E.ARG_DST: y})
    return y
