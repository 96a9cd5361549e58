"""Batch normalization over the channel axis 1 of 4-D data, forward (batch or given
statistics) and backward, on oneDNN in the channel-blocked layout.

oneDNN's batch normalization is fast on channel-blocked data (nChw16c: 8-15x its plain NCHW
kernel, measured) and slower than the Numba kernels on plain NCHW. A :class:`core.Tensor`
already in a blocked layout (from a oneDNN convolution) is used as it lies and the outputs
stay in it; a plain array is reordered into nChw16c and the results back to plain arrays.

Storage contract: ``x``, ``dy`` float32 (N, C, H, W) arrays or Tensors; ``scale``,
``shift``, ``mean``, ``var`` float32-convertible (C,). Outputs are fresh. Variances are
biased (divided by N*H*W), as MXNet's.
"""
from __future__ import annotations

import math

import numpy as np

from . import core
from ._lib import E

__all__ = ["forward", "backward", "supported"]


def supported(x):
    """Whether the operator should run here: data already in a oneDNN layout (a 4-D
    :class:`core.Tensor`). Plain arrays stay on the Numba kernels, which beat the reorders
    into and out of nChw16c plus oneDNN's kernel (measured on ResNet-18's shapes: forward
    about even, backward 1.5-10x slower)."""
    return isinstance(x, core.Tensor) and len(x.shape) == 4


def _f32(v):
    return np.ascontiguousarray(v, dtype=np.float32)


def _md(x):
    """The layout BN runs in for ``x``: a Tensor's own, else nChw16c."""
    if isinstance(x, core.Tensor):
        return x.md
    return core.md_tag(tuple(x.shape), np.float32, E.nChw16c)


def _fwd_prim(md, eps, flags, prop):
    def create():
        return core.create_pd("dnnl_batch_normalization_forward_primitive_desc_create", prop,
                              md.ptr, md.ptr, eps, flags)
    return core.primitive(("bnorm_fwd", md.key, eps, flags, prop), create,
                          work=math.prod(md.shape) * 2)


def _back(like, t):
    """``t`` in the kind of ``like``: a Tensor for a Tensor, else a plain array."""
    return t if isinstance(like, core.Tensor) else core.to_plain(t)


def forward(x, scale, shift, eps, mean=None, var=None, relu=False):
    """(y, mean, var): ``x`` normalised with its batch statistics (``mean`` None) or the
    given ``mean``/``var``, then ``* scale + shift`` (then ReLU with ``relu``: oneDNN's
    fused normalization + ReLU, for an inference plan's BatchNorm -> relu)."""
    md = _md(x)
    c = md.shape[1]
    flags = E.use_scale | E.use_shift | (E.fuse_norm_relu if relu else 0)
    if mean is None:
        prim = _fwd_prim(md, float(eps), flags, E.forward_training)
        mean, var = np.empty(c, np.float32), np.empty(c, np.float32)
    else:
        prim = _fwd_prim(md, float(eps), flags | E.use_global_stats, E.forward_inference)
        mean, var = _f32(mean), _f32(var)
    src = core.from_plain(x, md)
    y = core.Tensor(md)
    args = {E.ARG_SRC: src, E.ARG_DST: y, E.ARG_SCALE: _f32(scale), E.ARG_SHIFT: _f32(shift),
            E.ARG_MEAN: mean, E.ARG_VARIANCE: var}
    ws = prim.md(E.ARG_WORKSPACE)  # the fused ReLU's mask in training
    if ws.size:
        args[E.ARG_WORKSPACE] = core.Tensor(ws, np.empty(ws.size, np.uint8))
    prim.execute(args)
    return _back(x, y), mean, var


def backward(dy, x, scale, mean, var, eps, global_stats):
    """(dx, dscale, dshift) of :func:`forward`; with ``global_stats`` the statistics are
    constants (their gradient paths are dropped)."""
    md = _md(x)
    c = md.shape[1]
    eps = float(eps)
    flags = E.use_scale | E.use_shift | (E.use_global_stats if global_stats else 0)
    fwd = _fwd_prim(md, eps, flags,
                    E.forward_inference if global_stats else E.forward_training)

    def create():
        return core.create_pd("dnnl_batch_normalization_backward_primitive_desc_create",
                              E.backward, md.ptr, md.ptr, md.ptr, eps, flags, fwd.pd)
    prim = core.primitive(("bnorm_bwd", md.key, eps, flags), create,
                          work=math.prod(md.shape) * 3)
    dx = core.Tensor(md)
    dscale, dshift = np.empty(c, np.float32), np.empty(c, np.float32)
    prim.execute({E.ARG_SRC: core.from_plain(x, md), E.ARG_DIFF_DST: core.from_plain(dy, md),
                  E.ARG_SCALE: _f32(scale), E.ARG_MEAN: _f32(mean), E.ARG_VARIANCE: _f32(var),
                  E.ARG_DIFF_SRC: dx, E.ARG_DIFF_SCALE: dscale, E.ARG_DIFF_SHIFT: dshift})
    return _back(x, dx), dscale, dshift
