"""Convolution and Deconvolution (1-D/2-D/3-D, groups, stride, dilation, padding, bias) on
oneDNN: forward, backward data, backward weights (+ bias).

The functions take and return the arrays of ``kernels/conv.py`` (same signatures: NCHW or
channel-last data, MXNet's weight layouts) and raise :class:`OneDNNUnimplemented` where
oneDNN has no implementation (float64, an unsupported dtype or geometry): the caller falls
back to the Numba kernels. Data and weights are handed to oneDNN with their own strides;
the primitives pick their layouts (``format_tag_any``, blocked on AVX-512), reorders are
cached primitives, and results come back as NumPy arrays in the caller's layout (or as
:class:`Tensor` with ``plain=False``, for plans that keep blocked layouts between steps).
A convolution of one-pixel data into a one-pixel output that only one kernel tap reaches
runs as the 1x1 convolution of that tap (:func:`_single_tap`); a strided 1x1 forward of
NumPy data runs at stride 1 on the pixels it reads (:func:`_subsampled`).
"""
from __future__ import annotations

import numpy as np

from .. import blas
from . import _lib, core
from ._lib import E, OneDNNError, OneDNNUnimplemented
from .core import Attr, Tensor, create_pd, dims, from_plain, md_plain, md_tag, to_plain

__all__ = ["conv_forward", "conv_backward", "deconv_forward", "deconv_backward",
           "ConvGeom", "supported_dtype"]

_CL = ("NWC", "NHWC", "NDHWC")
_CL_TAGS = {1: E.acb, 2: E.acdb, 3: E.acdeb}  # nwc, nhwc, ndhwc over logical NC<spatial>
_PLAIN_TAGS = {1: E.abc, 2: E.abcd, 3: E.abcde}  # ncw, nchw, ncdhw


_SUPPORTED = {np.dtype(np.float32): E.f32, np.dtype(np.float16): E.f16}
# channel-blocked layouts (nCw8c, nChw8c, ...; 16 channels on AVX-512) by (spatial dims, block)
_BLOCK_TAGS = {(1, 8): E.aBc8b, (2, 8): E.aBcd8b, (3, 8): E.aBcde8b,
               (1, 16): E.aBc16b, (2, 16): E.aBcd16b, (3, 16): E.aBcde16b}
_ISA = []


def _channel_block():
    """The channel block of oneDNN's direct kernels here: 16 on AVX-512, else 8."""
    if not _ISA:
        _ISA.append(_lib.lib().dnnl_get_effective_cpu_isa())
    return 16 if _ISA[0] >= E.cpu_isa_avx512_core else 8


def supported_dtype(dt):
    """oneDNN data type for a NumPy dtype the conv primitives may take, else None."""
    return _SUPPORTED.get(dt if isinstance(dt, np.dtype) else np.dtype(dt))


def _perm(nd, cl):
    """Axis order that views an array of the layout as logical (N, C, spatial...)."""
    return (0, nd + 1) + tuple(range(1, nd + 1)) if cl else tuple(range(nd + 2))


def _logical(a, nd, cl):
    """(dims, strides in elements) of ``a`` as logical NC<spatial>."""
    p = _perm(nd, cl)
    return tuple(a.shape[i] for i in p), tuple(a.strides[i] // a.itemsize for i in p)


_MDS: dict = {}  # _md_of's answers: a call sees the same few shapes and strides


def _md_of(a, nd, cl, dt):
    """The oneDNN descriptor of NumPy array ``a`` as logical NC<spatial>."""
    return core.memo(_MDS, (a.shape, a.strides, a.itemsize, cl, dt),
                     lambda: _md_strided(_logical(a, nd, cl), dt))


def _md_strided(dims_strides, dt):
    """md_plain of a (dims, strides) pair."""
    return md_plain(dims_strides[0], dt, dims_strides[1])


def _wdims(w, nd, cl, g, deconv):
    """Logical oneDNN weight dims and strides of an MXNet weight array.

    Convolution: MXNet (F, C/g, *k) (channel-last (F, *k, C/g)) -> oneDNN ([G,] O, I, *k).
    Deconvolution: MXNet (C_in, F/g, *k) -> oneDNN ([G,] O=F/g, I=C_in/g, *k)."""
    st = [s // w.itemsize for s in w.strides]
    if cl:  # (F, *k, C/g) -> (F, C/g, *k)
        shape = (w.shape[0], w.shape[-1]) + w.shape[1:-1]
        st = [st[0], st[-1]] + st[1:-1]
    else:
        shape = w.shape
    sp, sps = tuple(shape[2:]), st[2:]
    if deconv:
        cin, fg = shape[0], shape[1]
        ig = cin // g
        # rows of MXNet's weight are (group, i); oneDNN wants (group, o, i)
        out = (g, fg, ig) + sp, (st[0] * ig, st[1], st[0]) + tuple(sps)
    else:
        f, cg = shape[0], shape[1]
        og = f // g
        out = (g, og, cg) + sp, (st[0] * og, st[0], st[1]) + tuple(sps)
    if g == 1:
        return out[0][1:], out[1][1:]
    return out


class ConvGeom:
    """One convolution's geometry and descriptors' key (internal)."""

    __slots__ = ("nd", "cl", "g", "s", "p", "pr", "d", "dt", "xdims", "wdims", "ydims",
                 "bias", "deconv", "key", "macs", "ok_gemm", "hint")

    def __init__(self, x_shape, w_ldims, y_shape, stride, pad, pad_r, dilate, g, dt, bias,
                 deconv, cl):
        nd = len(x_shape) - 2
        self.nd, self.cl, self.g, self.dt, self.bias, self.deconv = nd, cl, g, dt, bias, deconv
        self.s, self.p, self.pr = tuple(stride), tuple(pad), tuple(pad_r)
        self.d = tuple(v - 1 for v in dilate)  # oneDNN counts the gaps between taps
        p = _perm(nd, cl)
        self.xdims = tuple(x_shape[i] for i in p)
        self.ydims = tuple(y_shape[i] for i in p)
        self.wdims = tuple(w_ldims)
        self.key = ("deconv" if deconv else "conv", self.xdims, self.wdims, self.ydims,
                    self.s, self.p, self.pr, self.d, g, dt, bias, cl)
        k = int(np.prod(self.wdims))
        sp = self.xdims[2:] if deconv else self.ydims[2:]
        self.macs = int(self.xdims[0] * k * int(np.prod(sp)))
        self.ok_gemm = None  # _batch_gemm_weights's answer
        self.hint = None  # _hint's primitive

    def _mds(self):
        # channel-last callers keep channel-last data: at SBNet's 24 channels the backward
        # primitives on nhwc took 14.5 ms against 26-40 ms on blocked nChw16c (padded to 32
        # channels) with the reorders; NCHW callers let oneDNN pick (blocked, ~1.6x faster
        # than plain NCHW over ResNet's shapes) unless the input channels pad badly to 16:
        # fewer than 8 (LeNet's and ResNet's first layers) keep the data plain (backward
        # 1.6-5x faster: the blocked data gradient was 16 channels for 1), other counts
        # not a multiple of 16 go channel-last (backward 1.3x faster at 20 and 24)
        dt = self.dt
        tag = ytag = _CL_TAGS[self.nd] if self.cl else None
        cin = self.xdims[1] // self.g
        if not self.cl and not self.deconv and cin % 16:
            if cin < 8:
                tag = _PLAIN_TAGS[self.nd]
            else:
                tag = ytag = _CL_TAGS[self.nd]
        elif self.deconv and not self.cl:
            # oneDNN 3.2 gives an NCHW deconvolution its channel-last brgconv kernel; the
            # direct kernel on channel blocks (MXNet 1.9's) runs about as fast, and the
            # reorders to and from NCHW cost less: 4x4s2 64->32 @16, one thread, the
            # forward with its reorders took 4.4-4.8 ms against 4.7-5.1 (the output's
            # reorder from nhwc alone 0.65 ms against 0.2 from 8-channel blocks)
            blk = _channel_block()
            if (self.xdims[1] // self.g) % blk == 0 and (self.ydims[1] // self.g) % blk == 0:
                tag = ytag = _BLOCK_TAGS[(self.nd, blk)]
        return (md_tag(self.xdims, dt, tag), md_tag(self.wdims, dt),
                md_plain((self.ydims[1],), dt) if self.bias else None,
                md_tag(self.ydims, dt, ytag))

    def _geo(self):
        return dims(self.s), dims(self.d), dims(self.p), dims(self.pr)

    def _name(self, which):
        return f"dnnl_{'deconvolution' if self.deconv else 'convolution'}_{which}" \
               "_primitive_desc_create"

    def _alg(self):
        return E.deconvolution_direct if self.deconv else E.convolution_direct

    def _pd(self, create):
        """``create()``, except that a 1x1 convolution for which oneDNN picks a brgemm kernel
        on AVX2 takes its jit_1x1 one (the kernel of oneDNN 2.x, MXNet 1.9's) when there is
        one: on ResNet-18's 1x1 shapes at batch 32 it ran 1.1-2x faster forward (brgconv_1x1,
        inference) and 1.4-2.6x on the data gradient (brgconv_strided), one thread, and
        keeps the 8-channel blocks of the other primitives where brgconv took nhwc."""
        pd = create()
        if self.deconv or any(k != 1 for k in self.wdims[-self.nd:]):
            return pd
        name = core.impl_name(pd)
        if not (name.startswith("brg") and name.endswith(":avx2")):
            return pd
        _lib.lib().dnnl_primitive_desc_destroy(pd)
        return core.prefer_impl(create, lambda n: n.startswith("jit_1x1"))

    def fwd(self, prop, attr=None):
        """Forward primitive (``prop``: E.forward_training or E.forward_inference)."""
        attr = attr or _NO
        key = self.key + ("fwd", prop, attr.key)

        def create():
            x, w, b, y = self._mds()
            return create_pd(self._name("forward"), prop, self._alg(), x.ptr, w.ptr,
                             None if b is None else b.ptr, y.ptr, *self._geo(), attr=attr)
        return core.primitive(key, lambda: self._pd(create), self.macs, tune=True)

    def _hint(self):
        """The training forward that hints the backward primitives (kept: looking it up
        cost as much as the backward primitive's own lookup, on every call)."""
        if self.hint is None:
            self.hint = self.fwd(E.forward_training)
        return self.hint

    def bwd_data(self):
        """Backward-data primitive (hinted by the training forward)."""
        hint = self._hint()

        def create():
            x, w, _, y = self._mds()
            return create_pd(self._name("backward_data"), self._alg(), x.ptr, w.ptr, y.ptr,
                             *self._geo(), hint.pd)
        return core.primitive(self.key + ("bwd_data",), lambda: self._pd(create), self.macs,
                              tune=True)

    def bwd_weights(self):
        """Backward-weights (+ bias) primitive (hinted by the training forward)."""
        hint = self._hint()

        def create():
            x, w, b, y = self._mds()
            return create_pd(self._name("backward_weights"), self._alg(), x.ptr, w.ptr,
                             None if b is None else b.ptr, y.ptr, *self._geo(), hint.pd)
        return core.primitive(self.key + ("bwd_weights",), lambda: self._pd(create),
                              self.macs, tune=True)


_NO = Attr()


def _dtype(*arrs):
    """The common float dtype, or OneDNNUnimplemented (float64, ints: the Numba path)."""
    dt = np.result_type(*[a.dtype for a in arrs if a is not None])
    if supported_dtype(dt) is None:
        raise OneDNNUnimplemented(f"oneDNN convolution: dtype {dt} is not supported")
    return dt


def _check(x, w, nd):
    if nd not in (1, 2, 3) or w.ndim != x.ndim:
        raise OneDNNUnimplemented(f"oneDNN convolution: data {x.shape}, weight {w.shape}")


def _tup(v, nd, default):
    return tuple(int(t) for t in v) if v else (default,) * nd


_GEOMS: dict = {}  # conv_geom's answers: a plan runs the same few geometries every call


def conv_geom(x, w, stride, pad, dilate, num_group, layout, bias, dt):
    """ConvGeom of a convolution of ``x`` by MXNet weight ``w`` (and y's shape)."""
    key = (tuple(x.shape), w.shape, w.strides, tuple(stride or ()), tuple(pad or ()),
           tuple(dilate or ()), num_group, layout, bias, np.dtype(dt))
    return core.memo(_GEOMS, key, lambda: _conv_geom(x, w, stride, pad, dilate, num_group,
                                                     layout, bias, dt))


def _conv_geom(x, w, stride, pad, dilate, num_group, layout, bias, dt):
    nd = x.ndim - 2
    _check(x, w, nd)
    cl = layout in _CL
    s, p, d = _tup(stride, nd, 1), _tup(pad, nd, 0), _tup(dilate, nd, 1)
    g = int(num_group)
    wl, _ = _wdims(w, nd, cl, g, False)
    ksp = wl[-nd:]
    xsp = x.shape[1:-1] if cl else x.shape[2:]
    osp = tuple((xsp[i] + 2 * p[i] - d[i] * (ksp[i] - 1) - 1) // s[i] + 1 for i in range(nd))
    if min(osp) <= 0:
        raise OneDNNUnimplemented("empty convolution output")
    f = w.shape[0]
    yshape = (x.shape[0],) + osp + (f,) if cl else (x.shape[0], f) + osp
    # oneDNN's right padding makes (x + pl + pr - dk) / s + 1 equal MXNet's floor output
    pr = tuple((osp[i] - 1) * s[i] + d[i] * (ksp[i] - 1) + 1 - xsp[i] - p[i]
               for i in range(nd))
    return ConvGeom(x.shape, wl, yshape, s, p, pr, d, g, supported_dtype(dt), bias, False,
                    cl), yshape


def _out(shape, dt, nd, cl):
    """A NumPy output array in the caller's layout and its logical md."""
    y = np.empty(shape, dt)
    return y, _md_of(y, nd, cl, supported_dtype(dt))


def _run_into(prim, arg, md_user, arr, args, pending, plain=True):
    """Bind output ``arg``: the user's array when layouts agree, else a Tensor (reordered
    into ``arr`` after the call unless ``plain`` is False); returns what the caller gets."""
    want = prim.md(arg)
    if want.key == md_user.key:
        args[arg] = arr
        return arr
    t = Tensor(want, np.empty(want.size, np.uint8))  # outputs come zero-padded
    args[arg] = t
    if not plain:
        return t
    pending.append((t, md_user, arr))
    return arr


def _finish(pending):
    for t, md_user, arr in pending:
            core.reorder_md(t.md, md_user).execute({E.ARG_FROM: t.data, E.ARG_TO: arr})


def _in(arr, nd, cl, dt, want):
    """``arr`` bound for a primitive expecting ``want`` (reordered when needed)."""
    if isinstance(arr, Tensor):
        return from_plain(arr, want)
    md = _md_of(arr, nd, cl, supported_dtype(dt))
    if md.key == want.key:
        return arr
    out = Tensor(want, np.empty(want.size, np.uint8))  # a reorder zero-pads
    core.reorder_md(md, want).execute({E.ARG_FROM: arr, E.ARG_TO: out.data})
    return out


class _Contiguous:
    """Shape, dtype and C-order strides of an array (what ``_wdims`` reads of one)."""

    def __init__(self, a):
        self.shape, self.itemsize, self.dtype = a.shape, a.itemsize, a.dtype
        st, acc = [], a.itemsize
        for n in reversed(a.shape):
            st.append(acc)
            acc *= n
        self.strides = tuple(reversed(st))


def _win(w, geom, want, scale=None):
    """MXNet weight ``w`` in the primitive's weight layout (a cached copy while ``w`` is
    unchanged: ``core.reordered``); ``scale`` (per output channel) multiplies it first."""
    if scale is not None:
        bshape = (-1,) + (1,) * (w.ndim - 1)  # MXNet's weight: output channels first

        def scaled(w):  # C-contiguous, whatever w's strides
            return np.ascontiguousarray(w * scale.reshape(bshape), w.dtype)
        wl, ws = _wdims(_Contiguous(w), geom.nd, geom.cl, geom.g, geom.deconv)
        return core.reordered(w, md_plain(wl, geom.dt, ws), want, derive=scaled, key=(scale,))
    key = (w.shape, w.strides, w.itemsize, geom.nd, geom.cl, geom.g, geom.deconv, geom.dt)
    md = core.memo(_WMDS, key, lambda: _md_strided(
        _wdims(w, geom.nd, geom.cl, geom.g, geom.deconv), geom.dt))
    if md.key == want.key:
        return w
    return core.reordered(w, md, want)  # kept while w is unchanged (inference)


_WMDS: dict = {}  # _win's descriptors of MXNet weights, by shape, strides and geometry


def _wout(w_shape, dt, geom, prim, args, pending):
    dw = np.empty(w_shape, dt)
    wl, ws = _wdims(dw, geom.nd, geom.cl, geom.g, geom.deconv)
    return _run_into(prim, E.ARG_DIFF_WEIGHTS, md_plain(wl, geom.dt, ws), dw, args, pending)


def _forward(geom, prim, x, w, b, yshape, dt, plain=True, scale=None, acc=None):
    """Run forward primitive ``prim`` of ``geom``: y as a NumPy array in the caller's layout
    (``plain=False``: a Tensor when the primitive's layout is blocked); ``acc``: the dst
    starts as a copy of it (a sum post-op accumulates into it)."""
    args = {E.ARG_SRC: _in(x, geom.nd, geom.cl, dt, prim.md(E.ARG_SRC)),
            E.ARG_WEIGHTS: _win(w, geom, prim.md(E.ARG_WEIGHTS), scale)}
    if b is not None:
        args[E.ARG_BIAS] = np.ascontiguousarray(b, dt)
    pending = []
    if acc is not None:
        y = _accumulator(prim.md(E.ARG_DST), acc, geom, dt)
        args[E.ARG_DST] = y
        if plain and isinstance(y, Tensor):
            pending.append((y, _out(yshape, dt, geom.nd, geom.cl)))
        prim.execute(args)
        if pending:
            (t, (arr, md)), = pending
            core.reorder_md(t.md, md).execute({E.ARG_FROM: t.data, E.ARG_TO: arr})
            return arr
        return y
    y, ymd = _out(yshape, dt, geom.nd, geom.cl)
    y = _run_into(prim, E.ARG_DST, ymd, y, args, pending, plain)
    prim.execute(args)
    _finish(pending)
    return y


def _accumulator(want, acc, geom, dt):
    """A fresh buffer in layout ``want`` holding ``acc`` (NumPy in the caller's layout, or
    a Tensor): the dst of a convolution with a sum post-op."""
    if isinstance(acc, Tensor):
        if acc.md.key == want.key:
            return Tensor(want, acc.data.copy())
        src_md, src = acc.md, acc.data
    else:
        src = np.asarray(acc, dt)
        src_md = _md_of(src, geom.nd, geom.cl, supported_dtype(dt))
    if want.key == src_md.key:
        return np.array(src, copy=True) if want.is_plain else Tensor(want, src.copy())
    out = Tensor(want, np.empty(want.size, np.uint8))
    core.reorder_md(src_md, want).execute({E.ARG_FROM: src, E.ARG_TO: out.data})
    return out


def _backward(geom, x, w, dy, yshape, dt, nbias, plain=True, need_data=True,
              need_weights=True):
    """(dx, dw, db) of ``geom`` (db None unless ``nbias``, its length; ``plain=False``: dx
    may be a Tensor; ``need_data=False``: dx is None, its primitive does not run;
    ``need_weights=False``: dw and db are None, the weight-gradient primitive does not
    run)."""
    if tuple(dy.shape) != tuple(yshape):
        raise OneDNNUnimplemented(f"dy {dy.shape} is not the output shape {yshape}")
    nd, cl = geom.nd, geom.cl
    pending = []
    dyd = dx = None
    if need_data:
        bd = geom.bwd_data()
        dyd = _in(dy, nd, cl, dt, bd.md(E.ARG_DIFF_DST))
        args = {E.ARG_DIFF_DST: dyd, E.ARG_WEIGHTS: _win(w, geom, bd.md(E.ARG_WEIGHTS))}
        dx, dxmd = _out(x.shape, dt, nd, cl)
        dx = _run_into(bd, E.ARG_DIFF_SRC, dxmd, dx, args, pending, plain)
        bd.execute(args)
    if not need_weights:
        _finish(pending)
        return dx, None, None
    bw = geom.bwd_weights()
    if _batch_gemm_weights(geom, bw):
        _finish(pending)
        dw, db = _dw_gemm(geom, x, dy, w.shape, dt, nbias)
        return dx, dw, db
    want = bw.md(E.ARG_DIFF_DST)  # both backward primitives usually take one dy layout
    args = {E.ARG_SRC: _in(x, nd, cl, dt, bw.md(E.ARG_SRC)),
            E.ARG_DIFF_DST: dyd if isinstance(dyd, Tensor) and dyd.md.key == want.key
            else _in(dy, nd, cl, dt, want)}
    dw = _wout(w.shape, dt, geom, bw, args, pending)
    db = None
    if nbias:
        db = np.empty(nbias, dt)
        args[E.ARG_DIFF_BIAS] = db
    bw.execute(args)
    _finish(pending)
    return dx, dw, db


_GEMM_MAX_PIXELS = 64


def _batch_gemm_weights(geom, bw):
    """Whether the weight gradient runs as one im2col GEMM over the whole batch: where
    oneDNN picked its GEMM-based kernel (``gemm`` in the name), which runs one GEMM per
    image, whose inner dimension is that image's few output pixels on small maps (ResNet's
    256- and 512-channel stages on 32x32 images, 2x2 and 1x1 pixels: 6.7-12.8 ms against
    2.5-4.5 ms here, one thread). 2-D, channel-first, ungrouped float32 maps of at most
    ``_GEMM_MAX_PIXELS`` output pixels (the im2col matrix stays batch x a few pixels)."""
    ok = geom.ok_gemm
    if ok is None:
        ok = geom.ok_gemm = (geom.nd == 2 and not geom.cl and geom.g == 1
                             and not geom.deconv and geom.dt == E.f32
                             and geom.ydims[2] * geom.ydims[3] <= _GEMM_MAX_PIXELS
                             and "gemm" in bw.impl())
    return ok


def _nhwc(a, dt):
    """``a`` (a channel-first NumPy array or a Tensor) as a C-contiguous NHWC array."""
    n, c, h, w = a.shape
    dst = md_plain((n, c, h, w), supported_dtype(dt), (h * w * c, 1, w * c, c))
    if isinstance(a, Tensor) and a.md.key == dst.key:  # already NHWC: its buffer as it is
        return a.values().reshape(n, h, w, c)
    out = np.empty((n, h, w, c), dt)
    if isinstance(a, Tensor):
        core.reorder_md(a.md, dst).execute({E.ARG_FROM: a.data, E.ARG_TO: out})
    else:
        out[...] = a.transpose(0, 2, 3, 1)
    return out


def _dw_gemm(geom, x, dy, w_shape, dt, nbias):
    """(dw, db) of a 2-D convolution as one GEMM: dw (F, C*KH*KW) = dy (F, N*OH*OW) times
    the im2col matrix of x (N*OH*OW, C*KH*KW), rows in (n, oh, ow) order."""
    (_, _, kh, kw), (n, f, oh, ow) = geom.wdims, geom.ydims
    (s0, s1), (p0, p1), (r0, r1) = geom.s, geom.p, geom.pr
    d0, d1 = geom.d[0] + 1, geom.d[1] + 1
    xh = _nhwc(x, dt)
    c = xh.shape[3]
    xp = np.pad(xh, ((0, 0), (p0, max(r0, 0)), (p1, max(r1, 0)), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(
        xp, (d0 * (kh - 1) + 1, d1 * (kw - 1) + 1), axis=(1, 2))
    col = win[:, ::s0, ::s1][:, :oh, :ow][..., ::d0, ::d1].reshape(n * oh * ow, c * kh * kw)
    dyh = _nhwc(dy, dt).reshape(n * oh * ow, f)
    dw = np.empty(w_shape, dt)  # owns its buffer: the executor adopts it as the gradient
    with blas.gemm_threads(col.size * f):
        np.matmul(dyh.T, col, out=dw.reshape(f, c * kh * kw))
    return dw, (dyh.sum(axis=0) if nbias else None)


def _arrays(dt, *xs):
    """NumPy arrays of ``dt`` (Tensors pass: they are already in a oneDNN layout)."""
    return [x if isinstance(x, Tensor) else np.asarray(x, dt) for x in xs]


def _single_tap(x, w, stride, pad, dilate, layout):
    """The kernel position every output reads when the data and the output are one pixel
    and only one tap of the kernel meets the data (the others read padding: a ResNet's
    last stage on small images), else None. Such a convolution is a 1x1 one with that tap's
    weights: 1/k^d of the multiply-adds, and of the weight's reorders."""
    if layout in _CL or w.ndim != x.ndim or x.ndim < 3:
        return None
    nd = x.ndim - 2
    s, p, d = _tup(stride, nd, 1), _tup(pad, nd, 0), _tup(dilate, nd, 1)
    taps = []
    for n, k, si, pi, di in zip(x.shape[2:], w.shape[2:], s, p, d):
        if n != 1 or (n + 2 * pi - di * (k - 1) - 1) // si + 1 != 1 or pi % di \
                or pi // di >= k:
            return None
        taps.append(pi // di)
    if all(k == 1 for k in w.shape[2:]):
        return None  # already a 1x1 convolution
    return tuple(taps)


def _subsampled(x, w, stride, pad, layout):
    """The index of the strided view of NumPy data ``x`` that a 1x1 convolution without
    padding but with a stride > 1 reads (it is then a stride-1 one of that view), else None.
    The reorder into the primitive's layout then copies only the pixels read, and the
    convolution runs without its own gather: forward 8-15% faster on ResNet-18's 1x1
    stride-2 shapes, one thread (0.41-0.65 ms against 0.45-0.72, load 5.5)."""
    if layout in _CL or not isinstance(x, np.ndarray) or w.ndim != x.ndim or x.ndim < 3:
        return None
    nd = x.ndim - 2
    s, p = _tup(stride, nd, 1), _tup(pad, nd, 0)
    if any(k != 1 for k in w.shape[2:]) or any(p) or all(v == 1 for v in s):
        return None
    index = (slice(None), slice(None)) + tuple(slice(None, None, v) for v in s)
    dt = supported_dtype(x.dtype)
    try:  # oneDNN refuses strides whose rows it takes for overlapping (odd extents)
        _md_of(x[index], nd, False, dt)
    except OneDNNError:
        return None
    return index


_REWRITES: dict = {}  # _rewrites' answers by geometry


def _key(v):
    """A parameter (tuple, list or None) as a hashable key."""
    return v if type(v) is tuple else tuple(v or ())


def _rewrites(x, w, stride, pad, dilate, layout):
    """(:func:`_single_tap`'s taps, :func:`_subsampled`'s index of the data after the taps'
    rewrite) for this geometry, each None when it does not apply; cached, as both depend
    only on shapes, strides and parameters (a call costs 13 us otherwise)."""
    arr = isinstance(x, np.ndarray)
    key = (arr, x.shape, x.strides if arr else None, x.dtype, w.shape, _key(stride),
           _key(pad), _key(dilate), layout)

    def make():
        taps = _single_tap(x, w, stride, pad, dilate, layout)
        wt, s, p = (w, stride, pad) if taps is None else (_tap_view(w, taps), (), ())
        return taps, _subsampled(x, wt, s, p, layout)
    return core.memo(_REWRITES, key, make)


def _tap_view(w, taps):
    """The weights of kernel position ``taps`` as a (F, C/g, 1, ...) view."""
    return w[(slice(None), slice(None)) + tuple(slice(t, t + 1) for t in taps)]


def conv_forward(x, w, b, stride, pad, dilate, num_group=1, layout=None, post_ops=(),
                 prop=None, plain=True, scale=None, acc=None):
    """y = Convolution(x, w, b) as ``kernels.conv.conv_forward``; ``post_ops`` are
    :class:`Attr` items (fused ReLU...). 3-D data and weights work here too. ``x`` may be
    a :class:`Tensor`; ``plain=False`` returns y as a Tensor when its layout is blocked.
    ``scale`` (one factor per output channel) multiplies the weight: a BatchNorm folded in
    (``b`` then holds its shift); the scaled weight is cached with the reordered one.
    ``acc`` (y's shape; NumPy or Tensor): y starts as a copy of it, for a leading
    ``("sum", 1.0)`` post-op (a residual add)."""
    dt = _dtype(x, w, b)
    x, w = _arrays(dt, x, w)
    taps, sub = _rewrites(x, w, stride, pad, dilate, layout)
    if taps is not None:
        w, stride, pad, dilate = _tap_view(w, taps), (), (), ()
    if sub is not None:
        x, stride, dilate = x[sub], (), ()
    geom, yshape = conv_geom(x, w, stride, pad, dilate, num_group, layout, b is not None, dt)
    prim = geom.fwd(prop or E.forward_inference, Attr(post_ops) if post_ops else None)
    if acc is not None and tuple(acc.shape) != tuple(yshape):
        raise OneDNNUnimplemented(f"sum of {tuple(acc.shape)} into {tuple(yshape)}")
    return _forward(geom, prim, x, w, b, yshape, dt, plain, scale, acc)


def conv_backward(x, w, dy, stride, pad, dilate, num_group=1, need_bias=True, layout=None,
                  plain=True, need_data=True, need_weights=True):
    """(dx, dw, db) as ``kernels.conv.conv_backward`` (``x``, ``dy`` may be Tensors;
    ``plain=False``: dx may be one; ``need_data=False``: dx is None and not computed, as
    for a first layer whose data takes no gradient; ``need_weights=False``: dw and db are
    None and not computed, as for a frozen layer)."""
    dt = _dtype(x, w, dy)
    x, w, dy = _arrays(dt, x, w, dy)
    taps = _rewrites(x, w, stride, pad, dilate, layout)[0]
    if taps is None:
        geom, yshape = conv_geom(x, w, stride, pad, dilate, num_group, layout, need_bias, dt)
        return _backward(geom, x, w, dy, yshape, dt, w.shape[0] if need_bias else 0, plain,
                         need_data, need_weights)
    wt = _tap_view(w, taps)
    geom, yshape = conv_geom(x, wt, (), (), (), num_group, layout, need_bias, dt)
    dx, dwt, db = _backward(geom, x, wt, dy, yshape, dt, w.shape[0] if need_bias else 0,
                            plain, need_data, need_weights)
    if not need_weights:
        return dx, None, None
    dw = np.zeros(w.shape, dt)  # the other taps read only padding: zero gradient
    _tap_view(dw, taps)[...] = dwt
    return dx, dw, db


def deconv_geom(x, w, stride, pad, dilate, num_group, adj, bias, dt):
    """ConvGeom of a deconvolution (MXNet's padding and ``adj``, already resolved)."""
    nd = x.ndim - 2
    _check(x, w, nd)
    g = int(num_group)
    s, p, d, a = (_tup(stride, nd, 1), _tup(pad, nd, 0), _tup(dilate, nd, 1),
                  _tup(adj, nd, 0))
    wl, _ = _wdims(w, nd, False, g, True)
    ksp = wl[-nd:]
    xsp = x.shape[2:]
    osp = tuple((xsp[i] - 1) * s[i] - 2 * p[i] + d[i] * (ksp[i] - 1) + 1 + a[i]
                for i in range(nd))
    if min(osp) <= 0:
        raise OneDNNUnimplemented("empty deconvolution output")
    f = w.shape[1] * g
    pr = tuple(p[i] - a[i] for i in range(nd))
    if min(pr) < 0:
        raise OneDNNUnimplemented("deconvolution with adj > pad")
    yshape = (x.shape[0], f) + osp
    return ConvGeom(x.shape, wl, yshape, s, p, pr, d, g, supported_dtype(dt), bias, True,
                    False), yshape


def deconv_forward(x, w, b, stride, pad, dilate, num_group=1, adj=None):
    """y = Deconvolution(x, w, b) (NCHW/NCW; ``pad``/``adj`` as MXNet resolves them)."""
    dt = _dtype(x, w, b)
    x, w = (np.asarray(a, dt) for a in (x, w))
    geom, yshape = deconv_geom(x, w, stride, pad, dilate, num_group, adj, b is not None, dt)
    return _forward(geom, geom.fwd(E.forward_inference), x, w, b, yshape, dt)


def deconv_backward(x, w, dy, stride, pad, dilate, num_group=1, adj=None, need_bias=True,
                    need_data=True, need_weights=True):
    """(dx, dw, db) of :func:`deconv_forward` (``need_data``/``need_weights`` as in
    :func:`conv_backward`: what is not needed is None and not computed)."""
    dt = _dtype(x, w, dy)
    x, w, dy = (np.asarray(a, dt) for a in (x, w, dy))
    geom, yshape = deconv_geom(x, w, stride, pad, dilate, num_group, adj, need_bias, dt)
    return _backward(geom, x, w, dy, yshape, dt, w.shape[1] * geom.g if need_bias else 0,
                     need_data=need_data, need_weights=need_weights)


__all__ += ["conv_geom", "deconv_geom", "to_plain"]
