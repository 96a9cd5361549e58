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


_CL_TAGS = {3: E.acb, 4: E.acdb, 5: E.acdeb}  # nwc, nhwc, ndhwc
_MDS: dict = {}  # (shape, tag) -> descriptor (created once: the keys are queried once)


def _md(shape, tag):
    return core.memo(_MDS, (shape, tag), lambda: core.md_tag(shape, np.float32, tag), 1024)


def _tag_like(md, ndim):
    """The format tag of ``md``'s layout when it is one pooling's JIT kernels take (8- or
    16-channel blocks, channel-last), else channel-last."""
    k = md.key
    if k[2] == E.blocked and len(k[4]) == 1 and k[5] == (1,) and k[4][0] in (8, 16):
        return {(3, 8): E.nCw8c, (4, 8): E.nChw8c, (5, 8): E.nCdhw8c, (3, 16): E.nCw16c,
                (4, 16): E.nChw16c, (5, 16): E.nCdhw16c}[(ndim, k[4][0])]
    return _CL_TAGS[ndim]


def _fwd_prim(src, osh, alg, g, prop):
    k, s, pl, pr = g
    key = ("pool_fwd", src.key, osh, alg, g, prop)

    def create():
        dst = core.md_tag(osh, np.float32)  # the JIT kernels' dst layout follows the src
        return core.create_pd("dnnl_pooling_forward_primitive_desc_create", prop, ALGS[alg],
                              src.ptr, dst.ptr, core.dims(s), core.dims(k),
                              core.dims((0,) * len(k)), core.dims(pl), core.dims(pr))
    return core.primitive(key, create, work=math.prod(osh) * math.prod(k))


def _as_tensor(x, md):
    """``x`` in layout ``md`` as a Tensor (an array already so laid out is wrapped)."""
    t = core.from_plain(x, md)
    return t if isinstance(t, core.Tensor) else core.Tensor(md, t.reshape(-1).view(np.uint8))


def _run_fwd(prim, x):
    return core.run_forward(prim, x, core.Tensor(prim.md(E.ARG_DST)))


# oneDNN pools plain NC<spatial> arrays with its simple_nchw code: 3-15 ms for LeNet's and
# ResNet's pools at batch 32-64 on one thread, against 0.4-0.9 ms for a channel-last copy,
# its JIT kernel and the copy back (AVX2). So arrays run channel-last, Tensors (inside a
# plan) in their own layout, and the other operand of a backward follows the Tensor's.
def forward(x, out_shape, alg, kernel, stride, pad_l, pad_r):
    """Pooled ``x`` (a NumPy array for an array, a Tensor for a Tensor); a max pooling
    keeps its workspace for :func:`backward`."""
    g = (tuple(kernel), tuple(stride), tuple(pad_l), tuple(pad_r))
    osh, tensor = tuple(out_shape), isinstance(x, core.Tensor)
    if not tensor:
        x = _as_tensor(x, _md(tuple(x.shape), _CL_TAGS[x.ndim]))
    prop = E.forward_training if alg == "max" else E.forward_inference
    prim = _fwd_prim(x.md, osh, alg, g, prop)
    y, ws = _run_fwd(prim, x)
    if not tensor:
        y = core.to_plain(y)
    if ws is not None:
        _keep(y, ws, (x.md.key, osh, g))
    return y


def backward(dy, x, alg, kernel, stride, pad_l, pad_r, y=None):
    """Gradient of :func:`forward` with respect to ``x``, given the output gradient ``dy``
    (and the forward's output ``y``, whose kept workspace a max pooling reads); a Tensor
    when ``x`` or ``dy`` is one, else a NumPy array."""
    g = (tuple(kernel), tuple(stride), tuple(pad_l), tuple(pad_r))
    k, s, pl, pr = g
    tensor = isinstance(x, core.Tensor) or isinstance(dy, core.Tensor)
    if isinstance(x, core.Tensor):
        src = x.md
    else:
        src = _md(tuple(x.shape), _tag_like(dy.md, x.ndim) if tensor else _CL_TAGS[x.ndim])
    osh = tuple(dy.shape)
    fwd = _fwd_prim(src, osh, alg, g, E.forward_training)
    key = ("pool_bwd", src.key, osh, alg, g)

    def create():
        ddst = core.md_tag(osh, np.float32)
        return core.create_pd("dnnl_pooling_backward_primitive_desc_create", ALGS[alg],
                              src.ptr, ddst.ptr, core.dims(s), core.dims(k),
                              core.dims((0,) * len(k)), core.dims(pl), core.dims(pr),
                              fwd.pd)
    bwd = core.primitive(key, create, work=math.prod(osh) * math.prod(k))
    args = {E.ARG_DIFF_DST: core.from_plain(dy, bwd.md(E.ARG_DIFF_DST))}
    if alg == "max":
        ws = _kept(y, (src.key, osh, g)) if y is not None else None
        if ws is None:  # the forward again, for the positions of the maxima
            _, ws = _run_fwd(fwd, _as_tensor(x, src))
        args[E.ARG_WORKSPACE] = ws.data
    dx = core.Tensor(bwd.md(E.ARG_DIFF_SRC))
    args[E.ARG_DIFF_SRC] = dx
    bwd.execute(args)
    return dx if tensor else core.to_plain(dx)
