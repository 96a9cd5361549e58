"""Dense kernels of MXNet's contrib fft, ifft and count_sketch (GPU-only in MXNet 1.9.1;
here on the CPU with NumPy/SciPy).

Complex values are interleaved along the last axis ([re0, im0, re1, im1, ...]), as MXNet
stores them. Every function returns a new array in float64; the ops cast back.
"""
from __future__ import annotations

import numpy as np


def fft(x):
    """Unnormalised DFT of the real rows (last axis, length d) as (..., 2d) interleaved."""
    z = np.fft.fft(np.asarray(x, np.float64), axis=-1)
    out = np.empty(z.shape[:-1] + (2 * z.shape[-1],), np.float64)
    out[..., 0::2] = z.real
    out[..., 1::2] = z.imag
    return out


def ifft(x):
    """Real part of the unnormalised inverse DFT (cuFFT's, no 1/d) of (..., 2d) interleaved
    complex rows: (..., d)."""
    x = np.asarray(x, np.float64)
    z = x[..., 0::2] + 1j * x[..., 1::2]
    d = z.shape[-1]
    return np.real(np.fft.ifft(z, axis=-1)) * d


def sketch_matrix(h, s, in_dim, out_dim):
    """The (in_dim, out_dim) CSR matrix with s[j] at (j, h[j]): count_sketch is x @ it."""
    hh = np.asarray(h).reshape(-1)[:in_dim].astype(np.int64)
    ss = np.asarray(s, np.float64).reshape(-1)[:in_dim]
    if hh.size and (hh.min() < 0 or hh.max() >= out_dim):
        from ..base import MXNetError
        raise MXNetError(f"count_sketch: hash indices must lie in [0, {out_dim}), got "
                         f"[{hh.min()}, {hh.max()}]")
    import scipy.sparse as sp  # imported on use: scipy.sparse costs ~0.25 s at package import

    return sp.csr_matrix((ss, (np.arange(in_dim), hh)), shape=(in_dim, out_dim))


def count_sketch(x, h, s, out_dim):
    """out[..., h[j]] += x[..., j] * s[j] (duplicate hashes add up)."""
    x = np.asarray(x, np.float64)
    m = sketch_matrix(h, s, x.shape[-1], out_dim)
    flat = x.reshape(-1, x.shape[-1])
    return np.asarray(m.T @ flat.T).T.reshape(x.shape[:-1] + (out_dim,))


def count_sketch_grad(g, h, s, in_dim):
    """d data[..., j] = g[..., h[j]] * s[j]."""
    g = np.asarray(g, np.float64)
    m = sketch_matrix(h, s, in_dim, g.shape[-1])
    flat = g.reshape(-1, g.shape[-1])
    return np.asarray(m @ flat.T).T.reshape(g.shape[:-1] + (in_dim,))
