"""Deformable 2-D convolution (DCN v1, and v2 with a modulation mask) on dense arrays.

Each kernel tap samples the input at its regular position plus a learned offset, with
bilinear interpolation (samples outside (-1, H) x (-1, W) read 0, as do corners outside the
image), scaled by the mask; the sampled columns then meet the weights in one GEMM per
group. Layouts: data (N, C, H, W), offset (N, 2*dg*K, Ho, Wo) holding (dy, dx) per tap,
mask (N, dg*K, Ho, Wo), weight (F, C/g, kh, kw), K = kh*kw, dg deformable groups.
Inputs are never written; results are new float arrays of the data's dtype.
"""
from __future__ import annotations

import numpy as np

__all__ = ["deform_conv_forward", "deform_conv_backward"]


def _positions(geom, off, ho, wo):
    """Sample coordinates (dg, K, Ho, Wo) for one batch item's offsets."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = geom
    ki, kj = np.divmod(np.arange(kh * kw), kw)
    dg = off.shape[0] // (2 * kh * kw)
    off = off.reshape(dg, kh * kw, 2, ho, wo)
    base_y = (np.arange(ho) * sh - ph)[None, :, None] + (ki * dh)[:, None, None]
    base_x = (np.arange(wo) * sw - pw)[None, None, :] + (kj * dw)[:, None, None]
    return base_y[None] + off[:, :, 0], base_x[None] + off[:, :, 1]


def _corners(py, px, h, w, v1):
    """Per bilinear corner: (flat index into an H*W plane, weight, d weight/dy,
    d weight/dx), with weight 0 outside the image or the sampling range.

    DCN v2 samples in (-1, H) x (-1, W), corners outside reading 0; DCN v1 (MXNet's
    deformable_im2col) samples in [0, H) x [0, W) and clamps at the last row/column."""
    if v1:
        valid = (py >= 0) & (px >= 0) & (py < h) & (px < w)
    else:
        valid = (py > -1) & (px > -1) & (py < h) & (px < w)
    y0, x0 = np.floor(py), np.floor(px)
    ly, lx = py - y0, px - x0
    sy = sx = 1.0
    if v1:  # clamped at the edge: the sample stops moving, its derivative is 0
        cy, cx = y0 >= h - 1, x0 >= w - 1
        y0, x0 = np.where(cy, h - 1, y0), np.where(cx, w - 1, x0)
        ly, lx = np.where(cy, 0.0, ly), np.where(cx, 0.0, lx)
        sy, sx = np.where(cy, 0.0, 1.0), np.where(cx, 0.0, 1.0)
    out = []
    for dy, dx, wgt, gy, gx in ((0, 0, (1 - ly) * (1 - lx), -(1 - lx) * sy, -(1 - ly) * sx),
                                (0, 1, (1 - ly) * lx, -lx * sy, (1 - ly) * sx),
                                (1, 0, ly * (1 - lx), (1 - lx) * sy, -ly * sx),
                                (1, 1, ly * lx, lx * sy, ly * sx)):
        yc, xc = y0 + dy, x0 + dx
        inside = valid & (yc >= 0) & (yc < h) & (xc >= 0) & (xc < w)
        idx = (np.clip(yc, 0, h - 1) * w + np.clip(xc, 0, w - 1)).astype(np.int64)
        out.append((idx, np.where(inside, wgt, 0.0), np.where(inside, gy, 0.0),
                    np.where(inside, gx, 0.0)))
    return out


def _sample(plane, corners):
    """Bilinear samples of (Cg, H*W) planes at the corners: (Cg, K, Ho, Wo)."""
    return sum(plane[:, idx] * wgt for idx, wgt, _, _ in corners)


def _columns(x, off, mask, geom, ho, wo):
    """(columns (C, K, Ho, Wo), unmasked samples, corners per deformable group)."""
    c, h, w = x.shape
    py, px = _positions(geom, off, ho, wo)
    dg = py.shape[0]
    cg = c // dg
    planes = x.reshape(dg, cg, h * w)
    cols, raw, corners = [], [], []
    for g in range(dg):
        cs = _corners(py[g], px[g], h, w, mask is None)
        v = _sample(planes[g], cs)
        raw.append(v)
        corners.append(cs)
        cols.append(v * mask[g] if mask is not None else v)
    return np.concatenate(cols), raw, corners


def deform_conv_forward(x, off, mask, weight, bias, geom, groups):
    """Output (N, F, Ho, Wo); ``mask`` (N, dg*K, Ho, Wo) or None (DCN v1)."""
    n = x.shape[0]
    f = weight.shape[0]
    k = weight.shape[2] * weight.shape[3]
    ho, wo = off.shape[2], off.shape[3]
    out = np.empty((n, f, ho * wo), np.float64)
    wg = weight.reshape(groups, f // groups, -1).astype(np.float64)
    for b in range(n):
        m = None if mask is None else mask[b].reshape(-1, k, ho, wo)
        cols, _, _ = _columns(x[b].astype(np.float64), off[b].astype(np.float64), m, geom,
                              ho, wo)
        cols = cols.reshape(groups, -1, ho * wo)
        out[b] = np.matmul(wg, cols).reshape(f, ho * wo)
    if bias is not None:
        out += bias.reshape(1, f, 1)
    return out.reshape(n, f, ho, wo).astype(x.dtype)


def deform_conv_backward(dy, x, off, mask, weight, geom, groups):
    """Gradients (data, offset, mask or None, weight, bias) of the forward above."""
    n, c, h, w = x.shape
    f = weight.shape[0]
    kh, kw = weight.shape[2], weight.shape[3]
    k = kh * kw
    ho, wo = off.shape[2], off.shape[3]
    wg = weight.reshape(groups, f // groups, -1).astype(np.float64)
    gx, goff = np.zeros(x.shape), np.zeros(off.shape)
    gmask = None if mask is None else np.zeros(mask.shape)
    gw = np.zeros(wg.shape)
    for b in range(n):
        m = None if mask is None else mask[b].reshape(-1, k, ho, wo).astype(np.float64)
        cols, raw, corners = _columns(x[b].astype(np.float64), off[b].astype(np.float64), m,
                                      geom, ho, wo)
        g_out = dy[b].reshape(groups, f // groups, ho * wo).astype(np.float64)
        gw += np.matmul(g_out, cols.reshape(groups, -1, ho * wo).transpose(0, 2, 1))
        dcol = np.matmul(wg.transpose(0, 2, 1), g_out).reshape(c, k, ho, wo)
        dg = len(raw)
        cg = c // dg
        planes = x[b].reshape(dg, cg, h * w).astype(np.float64)
        for g in range(dg):
            d = dcol[g * cg:(g + 1) * cg]
            if m is not None:
                gmask[b].reshape(dg, k, ho, wo)[g] = (d * raw[g]).sum(axis=0)
                d = d * m[g]
            plane_grad = np.zeros((cg, h * w))
            ch = np.arange(cg)[:, None] * (h * w)
            g_y = np.zeros((k, ho, wo))
            g_x = np.zeros((k, ho, wo))
            for idx, wgt, wy, wx in corners[g]:
                plane_grad += np.bincount((ch + idx.reshape(1, -1)).ravel(),
                                          (d * wgt).reshape(cg, -1).ravel(),
                                          minlength=cg * h * w).reshape(cg, h * w)
                v = planes[g][:, idx]
                g_y += (d * v * wy).sum(axis=0)
                g_x += (d * v * wx).sum(axis=0)
            gx[b].reshape(dg, cg, h * w)[g] += plane_grad
            o = goff[b].reshape(dg, k, 2, ho, wo)
            o[g, :, 0] = g_y
            o[g, :, 1] = g_x
    gbias = dy.sum(axis=(0, 2, 3))
    return (gx.astype(x.dtype), goff.astype(off.dtype),
            None if gmask is None else gmask.astype(mask.dtype),
            gw.reshape(weight.shape).astype(weight.dtype), gbias.astype(dy.dtype))
