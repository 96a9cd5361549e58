"""NumPy oracles and a finite-difference helper shared by the SBNet tests."""
import itertools

import numpy as np

import sparsym as mx


def to_nhwc(x, layout):
    return x if layout == "NHWC" else x.transpose(0, 2, 3, 1)


def from_nhwc(x, layout):
    return x if layout == "NHWC" else x.transpose(0, 3, 1, 2)


def oracle_gather(x, idx, bsize, bstride, boffset, transpose=False, layout="NHWC"):
    """Blocks [M,bh,bw,C] (or [M,C,bh,bw]) by explicit loops; n < 0 rows give zeros."""
    x = to_nhwc(x, layout)
    n, h, w, c = x.shape
    out = np.zeros((len(idx),) + tuple(bsize) + (c,), dtype=x.dtype)
    for m, (b, i, j) in enumerate(idx):
        if b < 0:
            continue
        h0, w0 = boffset[0] + i * bstride[0], boffset[1] + j * bstride[1]
        for y, xx in itertools.product(range(bsize[0]), range(bsize[1])):
            if 0 <= h0 + y < h and 0 <= w0 + xx < w:
                out[m, y, xx] = x[b, h0 + y, w0 + xx]
    return out.transpose(0, 3, 1, 2) if transpose else out


def oracle_scatter(blocks, idx, base, bsize, bstride, boffset, add, transpose=False,
                   layout="NHWC"):
    """Sequential scatter (later blocks win / sum) onto a copy of base."""
    y = to_nhwc(base, layout).copy()
    blocks = blocks.transpose(0, 2, 3, 1) if transpose else blocks
    n, h, w, c = y.shape
    for m, (b, i, j) in enumerate(idx):
        if b < 0:
            continue
        h0, w0 = boffset[0] + i * bstride[0], boffset[1] + j * bstride[1]
        for yy, xx in itertools.product(range(bsize[0]), range(bsize[1])):
            if 0 <= h0 + yy < h and 0 <= w0 + xx < w:
                if add:
                    y[b, h0 + yy, w0 + xx] += blocks[m, yy, xx]
                else:
                    y[b, h0 + yy, w0 + xx] = blocks[m, yy, xx]
    return from_nhwc(y, layout)


def tf_pads(size, k, s, padding):
    if padding == "VALID":
        return 0, 0
    out = -(-size // s)
    pad = max((out - 1) * s + k - size, 0)
    return pad // 2, pad - pad // 2


def naive_conv_nhwc(x, w_oihw, stride, pads):
    """Direct conv: x NHWC, w (F, C, kh, kw), pads ((top, bottom), (left, right))."""
    n, h, wd, c = x.shape
    f, _, kh, kw = w_oihw.shape
    (pt, pb), (pl, pr) = pads
    xp = np.zeros((n, h + pt + pb, wd + pl + pr, c), dtype=np.float64)
    xp[:, pt:pt + h, pl:pl + wd] = x
    oh = (h + pt + pb - kh) // stride[0] + 1
    ow = (wd + pl + pr - kw) // stride[1] + 1
    y = np.zeros((n, oh, ow, f))
    for a, b in itertools.product(range(oh), range(ow)):
        patch = xp[:, a * stride[0]:a * stride[0] + kh, b * stride[1]:b * stride[1] + kw]
        y[:, a, b] = np.einsum("nijc,fcij->nf", patch, w_oihw)
    return y


def receptive_mask(mask, k, stride, pad_begin, out_hw, tol=0.0):
    """m_out[n, oy, ox] = any(mask over the receptive field of (oy, ox)) > tol, by loops."""
    n, h, w = mask.shape
    mo = np.zeros((n,) + tuple(out_hw), dtype=bool)
    for b, a, c in itertools.product(range(n), range(out_hw[0]), range(out_hw[1])):
        y0, x0 = a * stride[0] - pad_begin[0], c * stride[1] - pad_begin[1]
        win = mask[b, max(y0, 0):max(y0 + k[0], 0), max(x0, 0):max(x0 + k[1], 0)]
        mo[b, a, c] = win.size > 0 and win.max() > tol
    return mo


def executor(sym, arrays, grad_req="write", aux=None):
    """Bind sym to copies of numpy ``arrays`` (dict), float64-aware; returns the executor."""
    args = {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
    grads = {k: mx.nd.zeros(v.shape, dtype=v.dtype) for k, v in arrays.items()}
    aux_states = None if aux is None else {k: mx.nd.array(v, dtype=v.dtype)
                                           for k, v in aux.items()}
    return sym.bind(mx.cpu(), args, args_grad=grads, grad_req=grad_req, aux_states=aux_states)


def _probe(sym, arrays, aux):
    """An executor without gradients on copies of ``arrays`` and ``aux``, for differences."""
    return executor(sym, arrays, "null", None if aux is None else
                    {k: v.copy() for k, v in aux.items()})


def _slope(exe, arrays, head, name, v, eps, is_train):
    """Central difference of <sym(arrays), head> along ``v`` in argument ``name``."""
    arr, base, vals = exe.arg_dict[name], arrays[name], []
    for sgn in (1, -1):
        arr[:] = base + sgn * eps * v
        vals.append((exe.forward(is_train=is_train)[0].asnumpy() * head).sum())
    arr[:] = base
    return (vals[0] - vals[1]) / (2 * eps)


def numeric_grads(sym, arrays, head, wrt, aux=None, eps=1e-6, is_train=False):
    """d<sym(arrays), head>/d arrays[name] by central differences, for names in wrt.

    One executor is reused; training-mode forwards update moving statistics, which do not
    change training-mode outputs.
    """
    exe = _probe(sym, arrays, aux)
    out = {}
    for name in wrt:
        base = arrays[name]
        g = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            unit = np.zeros_like(base)
            unit[i] = 1
            g[i] = _slope(exe, arrays, head, name, unit, eps, is_train)
        out[name] = g
    return out


def assert_numeric_grads(grads, sym, arrays, head, wrt, aux=None, eps=1e-6, is_train=False,
                         rtol=1e-5, atol=1e-6, small=64, directions=3, seed=0):
    """Compare ``grads`` (name -> array) with central differences of <sym(arrays), head>.

    Arrays of up to ``small`` elements are checked coordinate by coordinate; a larger one
    along ``directions`` random Gaussian directions v (<grad, v> against the difference
    quotient along v), which sees an error in any coordinate at a fraction of the forwards.
    """
    rng = np.random.default_rng(seed)
    exe = _probe(sym, arrays, aux)
    for name in wrt:
        base, got = arrays[name], np.asarray(grads[name])
        if base.size <= small:
            num = numeric_grads(sym, arrays, head, [name], aux, eps, is_train)[name]
            np.testing.assert_allclose(got, num, rtol=rtol, atol=atol, err_msg=name)
            continue
        for d in range(directions):
            v = rng.standard_normal(base.shape)
            np.testing.assert_allclose((got * v).sum(),
                                       _slope(exe, arrays, head, name, v, eps, is_train),
                                       rtol=rtol, atol=atol * np.sqrt(base.size),
                                       err_msg=f"{name} along direction {d}")
