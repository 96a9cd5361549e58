"""The block-sparse convolution over strips of active output pixels (stride 1).

Square output tiles cover more than the active outputs: at SBNet's 400x704 blob mask of
10% density (11.4% of the outputs active after the 3x3 receptive field), 8x8 tiles compute
15.5% of the outputs (24% of the inputs gathered), 4x4 tiles 13.1% (30%). Here the output
rows are cut into bands of ``R`` rows; in each band the columns where any row is active
form *segments* (``segs``: band, x0, x1). Each segment's input window, (R + kh - 1) rows by
(x1 - x0 + kw - 1) columns, is copied next to the previous one into a wide image; the
images go to one dense valid convolution (oneDNN's, else the Numba kernel) as a batch, and
the outputs of each segment are read back from its columns (the kw - 1 columns where two
windows meet are computed and dropped). With R = 2 that computes 12.4% of the outputs and
gathers 25% of the inputs on that mask.

Every output row is written once, by the band holding it: zeros between the segments and
where the output mask is 0, the convolution plus bias elsewhere; the fresh output needs no
zero fill beforehand.

The backward (stride 1 only):

- dW: the weight gradient of the same dense convolution, from the forward's images (kept
  with the data, else gathered again) and the masked output gradient laid out like the
  outputs;
- dx: the correlation of the masked dy with the flipped kernel, computed only at the input
  pixels some active output reads, by this same strip convolution (the gather reads zeros
  where the output mask is 0) and written row by row like the forward's output: each dx
  pixel is written once, by one thread, with no zero fill and no scatter-add.

Channel-first data is transposed into the channel-last images by the gather, and the
outputs back by the row writer.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np
from numba import njit

from .. import _parallel
from .. import conv as kconv
from .. import onednn as dnn
from ._kernels import store_fence, zero_run
from .geometry import ConvGeom, conv_geometry, output_mask

__all__ = ["STRIPS", "StripPlan", "supported", "plan", "forward", "backward"]

# the "tile" of this path in the fused ops' plans and tile caches: ("strips", R)
STRIPS = "strips"
# output columns of an image of the batch: segments are cut where an image ends (a halo
# more per image). oneDNN's weight gradient (jit:avx2, 24 channels, one core) took 200-210
# ns an output pixel on 16-32 columns, 240-290 on 64-128 and 900 on 2046, its forward
# 130-165 on all; on SBNet's mask (R = 2, load 6) the forward + backward cost 9.4 + 21.0 ms
# of one core at 64 columns, 9.7 + 20.6 at 32 and 11.8 + 22.6 at 16
IMAGE_W = 64
# the same for a forward that keeps no images for a backward (inference): no weight gradient
# to suit, and oneDNN's forward gains on wider images (SBNet's mask, one core, load 6-7:
# 5.8-5.9 ms at 512 or 1024 columns against 6.1 at 256 and 6.3 at 64 with R = 2, 7.3 at 64
# with R = 1: fewer images, fewer seams cut at image ends)
IMAGE_W_INFER = 512
_NOMASK = np.zeros((0, 0, 0), np.uint8)


def is_strip(tile) -> bool:
    """Whether a plan's tile names this path."""
    return isinstance(tile, tuple) and len(tile) == 2 and tile[0] == STRIPS


def supported(geom: ConvGeom) -> bool:
    """Whether the strip path computes this geometry: stride 1 (dx as a correlation) and
    paddings within the kernel."""
    return geom.stride == (1, 1) and all(0 <= geom.pad[a] <= geom.kernel[a] - 1
                                         for a in range(2))


# --------------------------------------------------------------------------- plans
@njit(cache=True, nogil=True)
def _segments(m, r):
    """int32 (S, 3) rows (n * bands + b, x0, x1): the runs of columns where any row of
    band b (rows b*r .. b*r+r-1) of image n is nonzero, in order."""
    n_img, h, w = m.shape
    nb = (h + r - 1) // r
    anyc = np.zeros(w, np.bool_)
    out = np.empty((n_img * nb * (w // 2 + 1), 3), np.int32)
    k = 0
    for n in range(n_img):
        for b in range(nb):
            anyc[:] = False
            for y in range(b * r, min(h, b * r + r)):
                for x in range(w):
                    if m[n, y, x] != 0:
                        anyc[x] = True
            x = 0
            while x < w:
                if anyc[x]:
                    x0 = x
                    while x < w and anyc[x]:
                        x += 1
                    out[k, 0] = n * nb + b
                    out[k, 1] = x0
                    out[k, 2] = x
                    k += 1
                else:
                    x += 1
    return out[:k].copy()


@njit(cache=True, nogil=True)
def _pack(segs, kw, wimg):
    """Place the segments' windows (x1 - x0 + kw - 1 columns) one after another in images
    of ``wimg`` columns, splitting a segment where an image ends (each piece then has its
    own halo). Returns the pieces (band, x0, x1) in order, each piece's (image, first
    column) and each image's used width."""
    s_n = segs.shape[0]
    cap = (segs[:, 2] - segs[:, 1]).sum() + 1  # every piece holds an output at least
    pieces = np.empty((cap, 3), np.int32)
    img = np.empty(cap, np.int32)
    col = np.empty(cap, np.int32)
    used = np.zeros(cap + 1, np.int32)
    k, cur, c = 0, 0, 0
    for s in range(s_n):
        x0, x1 = segs[s, 1], segs[s, 2]
        while x0 < x1:
            room = wimg - c - (kw - 1)  # outputs that still fit in this image
            if room < 1:
                used[cur] = c
                cur += 1
                c = 0
                continue
            take = min(room, x1 - x0)
            pieces[k, 0] = segs[s, 0]
            pieces[k, 1] = x0
            pieces[k, 2] = x0 + take
            img[k] = cur
            col[k] = c
            k += 1
            c += take + kw - 1
            x0 += take
    used[cur] = c
    return pieces[:k].copy(), img[:k].copy(), col[:k].copy(), used[:cur + 1].copy()


class Side(NamedTuple):
    """Segments of one pixel set (outputs, or the inputs of the dx correlation) and where
    their windows sit in the batch of images."""

    segs: np.ndarray       # int32 (S, 3): band, x0, x1 of the pieces of segments
    img: np.ndarray        # int32 (S,)
    col: np.ndarray        # int32 (S,)
    used: np.ndarray       # int32 (B,): columns of each image holding windows
    band_seg: np.ndarray   # int64 (bands + 1,): first segment of each band
    r: int                 # band height
    nb: int                # bands per image
    wimg: int

    @property
    def n_images(self):
        return self.used.shape[0] if self.segs.shape[0] else 0


def _side(m, r, kw, wimg):
    n, h, _ = m.shape
    segs, img, col, used = _pack(_segments(m, r), kw, wimg)
    nb = -(-h // r)
    band_seg = np.searchsorted(segs[:, 0], np.arange(n * nb + 1)).astype(np.int64)
    return Side(segs, img, col, used, band_seg, r, nb, wimg)


class StripPlan:
    """The output-side segments of a mask (``out``) and, for the backward, the segments of
    the input pixels that active outputs read (:meth:`inputs`, derived on first use)."""

    __slots__ = ("out", "mo", "geom", "_inp", "_wide")

    def __init__(self, out, mo, geom):
        self.out, self.mo, self.geom, self._inp, self._wide = out, mo, geom, None, None

    def wide(self):
        """The output segments packed into images of IMAGE_W_INFER columns (derived on
        first use), for a forward that keeps no images."""
        if self._wide is None:
            kw = self.geom.kernel[1]
            self._wide = _side(self.mo, self.out.r, kw, IMAGE_W_INFER + kw - 1)
        return self._wide

    @property
    def px(self):
        """Output pixels the convolution computes (seams included)."""
        s = self.out.segs
        return int(((s[:, 2] - s[:, 1]).sum() + s.shape[0] * (self.geom.kernel[1] - 1))
                   * self.out.r) if s.shape[0] else 0

    def inputs(self):
        """(Side, mask) of the input pixels in the receptive field of an active output."""
        if self._inp is None:
            mi = input_mask(self.mo, self.geom)
            self._inp = (_side(mi, self.out.r, self.geom.kernel[1], self.out.wimg), mi)
        return self._inp


def plan(mo, geom: ConvGeom, r) -> StripPlan:
    """StripPlan of output mask ``mo`` (uint8 (N, OH, OW)) with bands of ``r`` rows."""
    return StripPlan(_side(mo, r, geom.kernel[1], IMAGE_W + geom.kernel[1] - 1), mo, geom)


def input_mask(mo, geom: ConvGeom):
    """uint8 (N, H, W): 1 at the input pixels in the receptive field of an active output
    (stride 1): the output mask of mo under the flipped kernel's correlation."""
    (kh, kw), (ph, pw) = geom.kernel, geom.pad
    g = conv_geometry(geom.out, geom.kernel, (1, 1), (kh - 1 - ph, kw - 1 - pw))
    mi = output_mask(mo, g, 0)
    h, w = geom.size
    return np.ascontiguousarray(mi[:, :h, :w]) if mi.shape[1:] != (h, w) else mi


# --------------------------------------------------------------------------- kernels
@njit(cache=True, nogil=True)
def _gather(src, cf, segs, img, col, s0, s1, nb, r, strip, kw, ph, pw, smask):
    """Windows of segments s0..s1-1 into the images ``strip`` (B, r + kh - 1, W, C): the
    window of segment (band b, x0, x1) is src rows b*r - ph + i, columns x0 - pw + j; zeros
    outside src and, when ``smask`` (N, H, W) is not empty, where it is 0. src is NHWC,
    or NCHW when ``cf`` (transposed in 8x8 blocks: 2.7 ms for SBNet's 400x704x24 windows
    on one core, against 3.4 through a 16-pixel buffer and 4.4 plane by plane).

    Flat views and unsigned offsets: LLVM vectorises the copies."""
    if cf:
        c, h, w = src.shape[1], src.shape[2], src.shape[3]
    else:
        h, w, c = src.shape[1], src.shape[2], src.shape[3]
    rows, wimg = strip.shape[1], strip.shape[2]
    use_mask = smask.shape[0] > 0
    sf = src.reshape(-1)
    df = strip.reshape(-1)
    cu = np.uint64(c)
    hw = np.uint64(h * w)
    for s in range(s0, s1):
        n = segs[s, 0] // nb
        b = segs[s, 0] - n * nb
        wd = segs[s, 2] - segs[s, 1] + kw - 1
        xs = segs[s, 1] - pw
        jlo = min(max(-xs, 0), wd)
        jhi = max(min(w - xs, wd), jlo)
        for i in range(rows):
            iy = b * r - ph + i
            dst = np.uint64(((img[s] * rows + i) * wimg + col[s]) * c)
            if iy < 0 or iy >= h:
                for q in range(np.uint64(wd * c)):
                    df[dst + q] = 0
                continue
            for q in range(np.uint64(jlo * c)):
                df[dst + q] = 0
            if cf:  # 8x8 blocks of (pixels, channels): the strided writes stay in L1
                sb = np.uint64((n * c * h + iy) * w + xs)
                for jb in range(jlo, jhi, 8):
                    m = min(8, jhi - jb)
                    for kb in range(0, c, 8):
                        for k in range(kb, min(c, kb + 8)):
                            sk = sb + np.uint64(k) * hw + np.uint64(jb)
                            dk = dst + np.uint64(jb) * cu + np.uint64(k)
                            for j in range(m):
                                df[dk + np.uint64(j) * cu] = sf[sk + np.uint64(j)]
            else:
                sb = np.uint64(((n * h + iy) * w + xs) * c)
                for q in range(np.uint64(jlo * c), np.uint64(jhi * c)):
                    df[dst + q] = sf[sb + q]
            for q in range(np.uint64(jhi * c), np.uint64(wd * c)):
                df[dst + q] = 0
            if use_mask:
                for j in range(jlo, jhi):
                    if smask[n, iy, xs + j] == 0:
                        d0 = dst + np.uint64(j) * cu
                        for q in range(cu):
                            df[d0 + q] = 0


@njit(cache=True, nogil=True)
def _zero_tails(strip, used):
    """Zero each image's columns past its windows (finite values for the weight gradient,
    whose outputs there have zero gradient)."""
    rows, wimg, c = strip.shape[1], strip.shape[2], strip.shape[3]
    for b in range(strip.shape[0]):
        for i in range(rows):
            for x in range(used[b], wimg):
                for k in range(c):
                    strip[b, i, x, k] = 0


@njit(cache=True, nogil=True)
def _write(out, segs, img, col, band_seg, b0, b1, nb, r, y, bias, mask, cf):
    """Write the output rows of bands b0..b1-1 whole: at pixels of a segment where
    ``mask`` (N, OH, OW) is set, the convolution ``out`` (B, r, W', F) plus bias; zeros
    everywhere else. y is NHWC, or NCHW when ``cf``. The zeros between segments go out as
    streaming stores (zero_run): they are most of the output and nothing reads them soon
    (a next sparse layer reads the active windows only)."""
    if cf:
        f, h, w = y.shape[1], y.shape[2], y.shape[3]
    else:
        h, w, f = y.shape[1], y.shape[2], y.shape[3]
    use_bias = bias.shape[0] > 0
    wo = out.shape[2]
    yf = y.reshape(-1)
    of = out.reshape(-1)
    fu = np.uint64(f)
    buf = np.empty(16 * f, y.dtype)
    for band in range(b0, b1):
        n = band // nb
        b = band - n * nb
        sa, sz = band_seg[band], band_seg[band + 1]
        for i in range(r):
            oy = b * r + i
            if oy >= h:
                break
            if cf:
                # zeros between the pieces plane by plane, then each piece transposed 16
                # pixels at a time through a small buffer (contiguous reads of the strip,
                # contiguous writes along the planes' rows)
                plane = np.uint64(h * w)
                row0 = np.uint64((n * f * h + oy) * w)
                x = 0
                for s in range(sa, sz + 1):
                    x0 = segs[s, 1] if s < sz else w
                    if x0 > x:
                        for k in range(f):
                            base = row0 + np.uint64(k) * plane
                            zero_run(yf, base + np.uint64(x), base + np.uint64(x0))
                    if s == sz:
                        break
                    x1 = segs[s, 2]
                    src = np.uint64((img[s] * r + i) * wo + col[s]) * fu
                    for jb in range(x0, x1, 16):
                        m = min(16, x1 - jb)
                        for j in range(m):
                            o = src + np.uint64(jb - x0 + j) * fu
                            if mask[n, oy, jb + j]:
                                for k in range(f):
                                    buf[k * 16 + j] = of[o + np.uint64(k)] + (
                                        bias[k] if use_bias else 0.0)
                            else:
                                for k in range(f):
                                    buf[k * 16 + j] = 0
                        for k in range(f):
                            base = row0 + np.uint64(k) * plane + np.uint64(jb)
                            for j in range(m):
                                yf[base + np.uint64(j)] = buf[k * 16 + j]
                    x = x1
            else:
                base = np.uint64((n * h + oy) * w) * fu
                x = 0
                for s in range(sa, sz):
                    x0, x1 = segs[s, 1], segs[s, 2]
                    zero_run(yf, base + np.uint64(x) * fu, base + np.uint64(x0) * fu)
                    src = np.uint64((img[s] * r + i) * wo + col[s]) * fu
                    for j in range(x1 - x0):
                        d = base + np.uint64(x0 + j) * fu
                        if mask[n, oy, x0 + j]:
                            o = src + np.uint64(j) * fu
                            if use_bias:
                                for q in range(fu):
                                    yf[d + q] = of[o + q] + bias[q]
                            else:
                                for q in range(fu):
                                    yf[d + q] = of[o + q]
                        else:
                            for q in range(fu):
                                yf[d + q] = 0
                    x = x1
                zero_run(yf, base + np.uint64(x) * fu, base + np.uint64(w) * fu)
    store_fence()


@njit(cache=True, nogil=True)
def _gather_out(dy, cf, segs, img, col, s0, s1, nb, r, g, mask):
    """The masked output gradient laid out like the convolution's outputs: g[img, i,
    col + j, :] = dy at (band row i, x0 + j) where ``mask`` is set (g starts zeroed: the
    other positions, seams and image tails keep zero gradient)."""
    if cf:
        f, h, w = dy.shape[1], dy.shape[2], dy.shape[3]
    else:
        h, w, f = dy.shape[1], dy.shape[2], dy.shape[3]
    wo = g.shape[2]
    fu = np.uint64(f)
    plane = np.uint64(h * w)
    df = dy.reshape(-1)
    gf = g.reshape(-1)
    for s in range(s0, s1):
        n = segs[s, 0] // nb
        b = segs[s, 0] - n * nb
        x0, x1 = segs[s, 1], segs[s, 2]
        for i in range(r):
            oy = b * r + i
            if oy >= h:
                break
            dst = np.uint64((img[s] * r + i) * wo + col[s]) * fu
            if cf:  # 8x8 blocks of (pixels, channels), as _gather; masked pixels zeroed after
                src = np.uint64((n * f * h + oy) * w)
                for jb in range(x0, x1, 8):
                    m = min(8, x1 - jb)
                    d0 = dst + np.uint64(jb - x0) * fu
                    for k in range(f):
                        sk = src + np.uint64(k) * plane + np.uint64(jb)
                        for x in range(m):
                            gf[d0 + np.uint64(x) * fu + np.uint64(k)] = df[sk + np.uint64(x)]
                    for x in range(m):
                        if not mask[n, oy, jb + x]:
                            for q in range(fu):
                                gf[d0 + np.uint64(x) * fu + q] = 0
            else:
                src = np.uint64((n * h + oy) * w + x0) * fu
                for j in range(x1 - x0):
                    if mask[n, oy, x0 + j]:
                        o = np.uint64(j) * fu
                        for q in range(fu):
                            gf[dst + o + q] = df[src + o + q]


# --------------------------------------------------------------------------- drivers
# below this many values copied or written a loop runs whole on the calling thread: a
# hand-off to the workers costs tens of microseconds (milliseconds on a busy machine)
PAR_ELEMS = 1 << 17


def _ranges(m, elems, weights=None):
    """Ranges over 0..m-1: one, or about two a worker when ``elems`` (values the loops
    touch) is large enough (equal shares of ``weights`` when given)."""
    parts = 2 * _parallel.workers()
    if elems < PAR_ELEMS or parts < 4 or m < 2:
        return [(0, m)] if m else []
    if weights is None:
        return _parallel.split(m, parts)
    cum = np.cumsum(weights)
    edges = np.searchsorted(cum, cum[-1] * np.arange(1, parts) / parts, side="right")
    b = np.unique(np.r_[0, edges, m].clip(0, m))
    return [(int(b[i]), int(b[i + 1])) for i in range(len(b) - 1) if b[i + 1] > b[i]]


def _run(tasks):
    """Run the tasks: on the workers when there are several."""
    if len(tasks) == 1:
        tasks[0]()
    else:
        _parallel.run(tasks)


def _images(src, cf, side: Side, kh, kw, ph, pw, smask):
    """The batch of windows (B, r + kh - 1, W, C) of ``side``'s segments."""
    c = src.shape[1] if cf else src.shape[3]
    strip = np.empty((side.n_images, side.r + kh - 1, side.wimg, c), src.dtype)
    seg = side.segs
    wts = seg[:, 2] - seg[:, 1] + kw - 1
    # channel-last windows are plain row copies, bound by memory: on the 2-vCPU machine a
    # second thread made them slower (SBNet's 400x704x24 NHWC windows, no other work on the
    # machine, medians of 25-40 interleaved calls: 1.02 / 1.13 ms on the calling thread
    # against 1.26 / 1.31 on two; under load 1.0-1.4 against 1.6-5.5). The channel-first
    # gather transposes and gains from two (2.81 -> 2.07 ms).
    tasks = [partial(_gather, src, cf, seg, side.img, side.col, a, b, side.nb, side.r, strip,
                     kw, ph, pw, smask)
             for a, b in _ranges(seg.shape[0], strip.size if cf else 0, wts)]
    _zero_tails(strip, side.used)  # a few columns an image
    _run(tasks)
    return strip


def _conv_forward(x, wc):
    """Valid convolution of the images with channel-last weights (F, kh, kw, C): oneDNN's
    when it runs it, else the Numba kernel."""
    from ..onednn import conv as oc
    y = dnn.attempt(oc.conv_forward, x, wc, None, (1, 1), (0, 0), (1, 1), 1, "NHWC") \
        if x.dtype == np.float32 and dnn.enabled() else NotImplemented
    if y is NotImplemented:
        y = kconv.conv_forward(x, wc, None, (1, 1), (0, 0), (1, 1), 1, "NHWC")
    return y


def _conv_dw(x, wc, g):
    """Weight gradient of :func:`_conv_forward` (oneDNN's skips the data gradient)."""
    from ..onednn import conv as oc
    res = dnn.attempt(oc.conv_backward, x, wc, g, (1, 1), (0, 0), (1, 1), 1, False, "NHWC",
                      True, False) if x.dtype == np.float32 and dnn.enabled() \
        else NotImplemented
    if res is NotImplemented:
        res = kconv.conv_backward(x, wc, g, (1, 1), (0, 0), (1, 1), 1, False, "NHWC")
    return res[1]


def _conv_into(src, cf, side: Side, wc, y, bias, pad, mask, smask):
    """y (written whole) = (the strip convolution of src over ``side``'s segments + bias)
    where ``mask`` is set, else 0; returns the images (None without segments)."""
    _, kh, kw, _ = wc.shape
    if side.segs.shape[0] == 0:
        y[...] = 0
        return None
    strip = _images(src, cf, side, kh, kw, pad[0], pad[1], smask)
    out = _conv_forward(strip, wc)
    _run([partial(_write, out, side.segs, side.img, side.col, side.band_seg, a, b, side.nb,
                  side.r, y, bias, mask, cf)
          for a, b in _ranges(side.band_seg.shape[0] - 1, y.size)])
    return strip


def _weights_cl(w, cl):
    """(F, kh, kw, C) weights."""
    return w if cl else np.ascontiguousarray(w.transpose(0, 2, 3, 1))


def forward(x, w, b, geom: ConvGeom, layout, sp: StripPlan, keep=None):
    """y = (conv(x, w) + b) * m_out on a fresh output (every value written once).
    ``keep`` (a dict) receives the gathered images ("strips") for :func:`backward`; without
    it the images are the wider ones of :meth:`StripPlan.wide`."""
    cl = layout == "NHWC"
    wc = _weights_cl(w, cl)
    n, f = x.shape[0], wc.shape[0]
    oh, ow = geom.out
    y = np.empty((n, oh, ow, f) if cl else (n, f, oh, ow), x.dtype)
    bias = b if b is not None else np.empty(0, x.dtype)
    side = sp.out if keep is not None else sp.wide()
    strip = _conv_into(x, not cl, side, wc, y, bias, geom.pad, sp.mo, _NOMASK)
    if keep is not None and strip is not None:
        keep["strips"] = strip
    return y


def backward(x, w, dy, mo, geom: ConvGeom, layout, sp: StripPlan, need_bias, strips=None):
    """(dx, dw, db) of :func:`forward` (db None unless ``need_bias``); ``strips``: the
    forward's images (else gathered again)."""
    cl = layout == "NHWC"
    wc = _weights_cl(w, cl)
    f, kh, kw, _ = wc.shape
    dt = x.dtype
    dy = np.ascontiguousarray(dy, dtype=dt)
    side = sp.out
    if side.segs.shape[0] == 0:
        return (np.zeros(x.shape, dt), np.zeros(w.shape, dt),
                np.zeros(f, dt) if need_bias else None)
    if strips is None:
        strips = _images(x, not cl, side, kh, kw, geom.pad[0], geom.pad[1], _NOMASK)
    g = np.zeros((side.n_images, side.r, side.wimg - kw + 1, f), dt)
    seg = side.segs
    _run([partial(_gather_out, dy, not cl, seg, side.img, side.col, a, b, side.nb, side.r, g,
                  mo) for a, b in _ranges(seg.shape[0], g.size)])
    dwc = _conv_dw(strips, wc, g)
    db = g.sum(axis=(0, 1, 2)) if need_bias else None
    # dx: the correlation of the masked dy with the flipped kernel, written whole
    wd = np.ascontiguousarray(wc[:, ::-1, ::-1, :].transpose(3, 1, 2, 0))
    dx = np.empty(x.shape, dt)
    inp, mi = sp.inputs()
    _conv_into(dy, not cl, inp, wd, dx, np.empty(0, dt),
               (kh - 1 - geom.pad[0], kw - 1 - geom.pad[1]), mi, mo)
    dw = dwc if cl else np.ascontiguousarray(dwc.transpose(0, 3, 1, 2))
    return dx, dw, db
