"""Numba loops of the fused block-sparse convolution: tile im2col, output scatter, col2im.

A *tile* is a bo_h x bo_w patch of convolution outputs, addressed like an SBNet block by
an int32 row (n, i, j): outputs oy in [i*bo_h, (i+1)*bo_h), ox in [j*bo_w, (j+1)*bo_w).
Its receptive field is SBNet's input block (bsize = (bo-1)*stride + k, bstride = bo*stride,
boffset = -pad).  Building the GEMM operand straight from the dense input fuses SBNet's
gather with im2col, so overlapping halos are never materialised twice.

The GEMM operand is channel-last: cols is [P, kh*kw*C], one row per output pixel, so
``cols @ w.reshape(F, -1).T`` (weights (F, kh, kw, C)) gives [P, F] rows of outputs.
NCHW data is first gathered into channel-last windows (conv.py); the "cf" scatter and
gather of outputs read / write NCHW tensors from / to [F, P] views.
P counts tiles t0..t1-1 times bo_h*bo_w (row r = (t-t0)*bo_h*bo_w + a*bo_w + b), including
positions past the output edge of partial border tiles (computed, never stored).

All loops are serial and ``nogil``: callers run independent chunks of tiles on worker
threads with single-threaded BLAS (see _parallel.py); a numba parallel region started
right after a GEMM stalls on a 2-core box (sparsym/kernels/block_sparse.py).  Nothing
here allocates; callers own every buffer.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ..block_sparse import clip_run

# --------------------------------------------------------------------------- streaming stores


@intrinsic
def _store_zero_nt(typingctx, arr, i):
    """arr.flat[i] = 0 as a non-temporal (streaming) store (LLVM's !nontemporal: movnti on
    x86-64, a plain store where the target has none; Numba only)."""
    if not isinstance(arr, types.Array) or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        st = builder.store(ir.Constant(ptr.type.pointee, None), ptr)
        st.set_metadata("nontemporal",
                        builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()
    return types.void(arr, i), codegen


@intrinsic
def store_fence(typingctx):
    """A full memory fence: orders the streaming stores before it ahead of every later
    access (another thread reading the output after the hand-off sees them; Numba only)."""
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()
    return types.void(), codegen


@njit(cache=True, nogil=True, inline="always")
def zero_run(flat, a, b):
    """flat[a:b] = 0 (a 1-D contiguous array): the whole 64-byte lines of the run through
    streaming stores, the partial lines at its ends with plain ones (a line shared with
    values written next to it stays cached). Streaming stores skip the read-for-ownership
    of each line: 27 MB of zeros took 1.2-1.3 ms of one core against 1.7-2.1 (load 6)."""
    a, b = np.int64(a), np.int64(b)
    isz = flat.itemsize
    per = 64 // isz
    base = flat.ctypes.data
    lo = a + ((-(base + a * isz)) % 64) // isz  # first element on a line boundary
    if lo >= b or per * isz != 64:
        for q in range(a, b):
            flat[q] = 0
        return
    hi = lo + ((b - lo) // per) * per
    for q in range(a, lo):
        flat[q] = 0
    for q in range(lo, hi):
        _store_zero_nt(flat, q)
    for q in range(hi, b):
        flat[q] = 0

# --------------------------------------------------------------------------- masks


@njit(cache=True, nogil=True)
def active_tiles(mo, boh, bow, flags):
    """flags[n,i,j] = any(mo over tile (i,j)); returns the number of active tiles."""
    n_img, oh, ow = mo.shape
    cnt = 0
    for n in range(n_img):
        for i in range(flags.shape[1]):
            for j in range(flags.shape[2]):
                hit = False
                for a in range(i * boh, min((i + 1) * boh, oh)):
                    for b in range(j * bow, min((j + 1) * bow, ow)):
                        if mo[n, a, b]:
                            hit = True
                            break
                    if hit:
                        break
                flags[n, i, j] = hit
                if hit:
                    cnt += 1
    return cnt


@njit(cache=True, nogil=True)
def tile_at(idx, t, t0, boh, bow):
    """(image, first output row, first output column, first GEMM row) of tile ``t`` in a
    chunk of tiles starting at ``t0``."""
    return idx[t, 0], idx[t, 1] * boh, idx[t, 2] * bow, (t - t0) * boh * bow


@njit(cache=True, nogil=True)
def live(mo, n, oy, ox):
    """True for a real output pixel (inside the output, not past a border tile's edge) whose
    mask is set."""
    return oy < mo.shape[1] and ox < mo.shape[2] and mo[n, oy, ox] != 0


@njit(cache=True, nogil=True)
def zero_inactive_cl(y, mo):
    """y (N,OH,OW,F): zero every output pixel whose mask is 0."""
    n_img, oh, ow = mo.shape
    f = y.shape[3]
    for n in range(n_img):
        for a in range(oh):
            for b in range(ow):
                if not mo[n, a, b]:
                    for k in range(f):
                        y[n, a, b, k] = 0


@njit(cache=True, nogil=True)
def zero_inactive_cf(y, mo):
    """y (N,F,OH,OW): zero every output pixel whose mask is 0 (channel planes outer, so
    the writes walk memory in order)."""
    n_img, oh, ow = mo.shape
    f = y.shape[1]
    for n in range(n_img):
        for k in range(f):
            for a in range(oh):
                for b in range(ow):
                    if not mo[n, a, b]:
                        y[n, k, a, b] = 0


# --------------------------------------------------------------------------- channel-last
@njit(cache=True, nogil=True)
def im2col_cl(x, idx, t0, t1, cols, boh, bow, kh, kw, sh, sw, ph, pw):
    """cols[r, (i*kw + j)*C + c] = x[n, oy*sh - ph + i, ox*sw - pw + j, c] (0 outside).

    The copies index flat views with unsigned offsets: numba then drops the negative-index
    wraparound and LLVM vectorises the kw*C runs (measured 4.3x faster than 4-D indexing).
    x and cols must be C-contiguous.
    """
    n_img, h, w, c = x.shape
    kwc = np.uint64(kw * c)
    row = cols.shape[1]
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    for t in range(t0, t1):
        n, oy0, ox0, rb = tile_at(idx, t, t0, boh, bow)
        for a in range(boh):
            iy0 = (oy0 + a) * sh - ph
            for b in range(bow):
                r = rb + a * bow + b
                ix0 = (ox0 + b) * sw - pw
                jlo, jhi = clip_run(ix0, kw, w)
                lo = np.uint64(jlo * c)
                hi = np.uint64(jhi * c)
                for i in range(kh):
                    iy = iy0 + i
                    o = np.uint64(r * row + i * kw * c)
                    if iy < 0 or iy >= h:
                        for q in range(kwc):
                            cf[o + q] = 0
                        continue
                    for q in range(lo):
                        cf[o + q] = 0
                    src = np.uint64(((n * h + iy) * w + ix0) * c)
                    for q in range(lo, hi):
                        cf[o + q] = xf[src + q]
                    for q in range(hi, kwc):
                        cf[o + q] = 0


@njit(cache=True, nogil=True)
def col2im_add_cl(dcols, idx, t0, t1, dx, boh, bow, kh, kw, sh, sw, ph, pw, oh, ow):
    """Adjoint of im2col_cl restricted to real outputs: dx[...] += dcols[r, ...].

    Flat views with unsigned offsets, as im2col_cl; dcols and dx must be C-contiguous.
    """
    n_img, h, w, c = dx.shape
    row = dcols.shape[1]
    df = dcols.reshape(-1)
    xf = dx.reshape(-1)
    for t in range(t0, t1):
        n, oy0, ox0, rb = tile_at(idx, t, t0, boh, bow)
        for a in range(min(boh, oh - oy0)):
            iy0 = (oy0 + a) * sh - ph
            for b in range(min(bow, ow - ox0)):
                r = rb + a * bow + b
                ix0 = (ox0 + b) * sw - pw
                jlo, jhi = clip_run(ix0, kw, w)
                lo = np.uint64(jlo * c)
                hi = np.uint64(jhi * c)
                for i in range(kh):
                    iy = iy0 + i
                    if iy < 0 or iy >= h:
                        continue
                    o = np.uint64(r * row + i * kw * c)
                    dst = np.uint64(((n * h + iy) * w + ix0) * c)
                    for q in range(lo, hi):
                        xf[dst + q] += df[o + q]


@njit(cache=True, nogil=True)
def scatter_out_cl(out, idx, t0, t1, y, boh, bow, bias, mo, add):
    """y[n,oy,ox,:] (=|+=) (out[r,:] + bias) for real outputs with mo[n,oy,ox] != 0."""
    n_img, oh, ow, f = y.shape
    use_bias = bias.shape[0] > 0
    for t in range(t0, t1):
        n, oy0, ox0, rb = tile_at(idx, t, t0, boh, bow)
        for a in range(min(boh, oh - oy0)):
            for b in range(min(bow, ow - ox0)):
                if not mo[n, oy0 + a, ox0 + b]:
                    continue
                r = rb + a * bow + b
                for k in range(f):
                    v = out[r, k]
                    if use_bias:
                        v += bias[k]
                    if add:
                        y[n, oy0 + a, ox0 + b, k] += v
                    else:
                        y[n, oy0 + a, ox0 + b, k] = v


@njit(cache=True, nogil=True)
def gather_out_cl(dy, idx, t0, t1, g, boh, bow, mo):
    """g[r,:] = dy[n,oy,ox,:] where mo != 0, else 0 (also past the output edge)."""
    f = dy.shape[3]
    for t in range(t0, t1):
        n, oy0, ox0, rb = tile_at(idx, t, t0, boh, bow)
        for a in range(boh):
            for b in range(bow):
                r = rb + a * bow + b
                oy, ox = oy0 + a, ox0 + b
                if live(mo, n, oy, ox):
                    for k in range(f):
                        g[r, k] = dy[n, oy, ox, k]
                else:
                    for k in range(f):
                        g[r, k] = 0


# --------------------------------------------------------------------------- channel-first
@njit(cache=True, nogil=True)
def scatter_out_cf(out, idx, t0, t1, y, boh, bow, bias, mo, add):
    """y[n,f,oy,ox] (=|+=) out[f,r] + bias[f] for real outputs with mo != 0."""
    n_img, f, oh, ow = y.shape
    use_bias = bias.shape[0] > 0
    for t in range(t0, t1):
        n, oy0, ox0, rb = tile_at(idx, t, t0, boh, bow)
        na = min(boh, oh - oy0)
        nb = min(bow, ow - ox0)
        for k in range(f):
            bk = bias[k] if use_bias else 0.0
            for a in range(na):
                rr = rb + a * bow
                for b in range(nb):
                    if mo[n, oy0 + a, ox0 + b]:
                        if add:
                            y[n, k, oy0 + a, ox0 + b] += out[k, rr + b] + bk
                        else:
                            y[n, k, oy0 + a, ox0 + b] = out[k, rr + b] + bk


@njit(cache=True, nogil=True)
def gather_out_cf(dy, idx, t0, t1, g, boh, bow, mo):
    """g[f,r] = dy[n,f,oy,ox] where mo != 0, else 0."""
    # tile addressing kept written out: with tile_at()/live() this plane-by-plane loop
    # measured 5-20% slower in A/B runs (benchmarks/_ab_kernels.py)
    n_img, f, oh, ow = dy.shape
    tile = boh * bow
    for t in range(t0, t1):
        n = idx[t, 0]
        oy0 = idx[t, 1] * boh
        ox0 = idx[t, 2] * bow
        rb = (t - t0) * tile
        for k in range(f):
            for a in range(boh):
                rr = rb + a * bow
                oy = oy0 + a
                for b in range(bow):
                    ox = ox0 + b
                    if oy < oh and ox < ow and mo[n, oy, ox]:
                        g[k, rr + b] = dy[n, k, oy, ox]
                    else:
                        g[k, rr + b] = 0


# --------------------------------------------------------------------------- bottleneck
@njit(cache=True, nogil=True)
def bn_relu(v, scale, shift, rowmask, out):
    """out[r, c] = max(v[r, c]*scale[c] + shift[c], 0) * rowmask[r] (rowmask may be empty)."""
    rows, c = v.shape
    use_mask = rowmask.shape[0] > 0
    for r in range(rows):
        if use_mask and rowmask[r] == 0:
            for k in range(c):
                out[r, k] = 0
            continue
        for k in range(c):
            z = v[r, k] * scale[k] + shift[k]
            out[r, k] = z if z > 0 else 0


@njit(cache=True, nogil=True)
def bn_grad_sums(dz, v, mean, inv, sums):
    """sums[0] = column sums of dz, sums[1] = of dz * xhat (xhat = (v - mean) * inv), in
    float64; dz and v are (rows, C)."""
    rows, c = v.shape
    for r in range(rows):
        for k in range(c):
            d = dz[r, k]
            sums[0, k] += d
            sums[1, k] += d * ((v[r, k] - mean[k]) * inv[k])


@njit(cache=True, nogil=True)
def bn_grad_input(dz, v, mean, inv, gamma, w, wscale, sg, sgx, dv):
    """dv = inv * (g - w*wscale * (sg + xhat * sgx)) with g = dz * gamma (the weighted
    batch-statistics gradient; ``w`` empty: every row weighs 1)."""
    rows, c = v.shape
    use_w = w.shape[0] > 0
    for r in range(rows):
        wr = (w[r] if use_w else 1.0) * wscale
        for k in range(c):
            xh = (v[r, k] - mean[k]) * inv[k]
            dv[r, k] = inv[k] * (dz[r, k] * gamma[k] - wr * (sg[k] + xh * sgx[k]))


# --------------------------------------------------------------------------- block batches
# The oneDNN path (dnn.py) convolves the active tiles' input windows as one batch of
# channel-last blocks (gathered by block_sparse's loops), on ranges of tiles handed to the
# worker threads. Blocks are visited one by one: walking a tile row's blocks together
# (each NCHW image row read left to right) measured 1.7x slower, the writes then jumping
# between blocks.
@njit(cache=True, nogil=True)
def row_end(idx, g0, t1):
    """One past the last tile of ``g0``'s tile row (same image and row) before ``t1``."""
    g1 = g0 + 1
    while g1 < t1 and idx[g1, 0] == idx[g0, 0] and idx[g1, 1] == idx[g0, 1]:
        g1 += 1
    return g1


@njit(cache=True, nogil=True)
def scatter_add_in(blk, idx, rows, dx, bh, bw, sh, sw, oh, ow, cf):
    """dx[window of tile t] += blk[t] (channel-last blocks; parts outside dx dropped) for the
    tiles of the tile rows ``rows`` ([g0, g1) pairs). dx is NCHW when ``cf``, else NHWC.
    Windows of one tile row overlap: a row must not be split between threads."""
    if cf:
        c, h, w = dx.shape[1], dx.shape[2], dx.shape[3]
    else:
        h, w, c = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(rows.shape[0]):
        for t in range(rows[r, 0], rows[r, 1]):
            n = idx[t, 0]
            h0 = oh + idx[t, 1] * sh
            w0 = ow + idx[t, 2] * sw
            lo, hi = clip_run(w0, bw, w)
            alo, ahi = clip_run(h0, bh, h)
            if cf:
                for k in range(c):
                    for a in range(alo, ahi):
                        for b in range(lo, hi):
                            dx[n, k, h0 + a, w0 + b] += blk[t, a, b, k]
            else:
                for a in range(alo, ahi):
                    for b in range(lo, hi):
                        for k in range(c):
                            dx[n, h0 + a, w0 + b, k] += blk[t, a, b, k]
