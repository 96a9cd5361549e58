"""Block-sparse convolution (SBNet, issue 8): speed-up over sparsym's dense path vs density.

Prints one JSON line per (test, size, density) and a summary line per (test, size).

- ``conv``: one 3x3 SAME conv K -> K on [1, H, W, K] (SBNet's ``--test conv``).
- ``res``: one pre-activation bottleneck block C -> K -> K -> C (SBNet's ``--test res``),
  BatchNorm in inference mode.
- Mask: SBNet's synthetic top-left rectangle covering ``density`` of the pixels, or random
  disks (``--mask blobs``).

Per point (medians of ``--reps`` runs, dense and sparse runs interleaved so that noise
from other processes hits both):

- ``dense_ms``: sparsym's dense path in the same layout (the registered Convolution op;
  for ``res`` the block built from the registered BatchNorm/Activation/Convolution ops and
  run by an executor); ``dense_best_ms``: the faster of the NCHW/NHWC dense convs (conv).
- ``sparse_ms``: gather + conv + scatter with the active tiles (or, at stride 1, strips
  of active outputs) given (SBNet's tables exclude reduce_mask too), autotuned tile or
  band height, dispatch off; ``speedup = dense / sparse``.
- ``mask_ms``: mask -> active tiles or strips (the fused op's reduce_mask step), reported
  apart; ``reduce_mask_ms``: the standalone ``contrib.reduce_mask`` op for the same blocks
  (the fixed 16x16 tile's when the op runs on strips).
- ``e2e_ms``: the fused op end to end (mask included), dispatch off;
  ``dispatch_ms``: the same with density-aware dispatch on; ``dispatch_vs_dense``: the
  median over 2*reps back-to-back (dense, dispatch) pairs of their time ratio (the
  target is <= 1.1 everywhere).
- ``fixed_ms``: the sparse path with a fixed 16x16 output tile (the fixed-block curve).
- ``inplace_ms`` (res): the residual added into x itself (SBNet's ``use_var``; what the
  op does inside a graph when nothing reads x afterwards), so no copy of x.
- ``bsize``: best SBNet input block size; ``block_sparsity``: 1 - active/total blocks
  (both the fixed tile's on strips); ``tile``: the op's tile, ["strips", R] on strips.

With ``--mxnet-python`` (default ~/mxref/bin/python when present) MXNet 1.9.1's dense
Convolution (NCHW, MKL-DNN) is timed on the conv sizes in a subprocess; MXNet has no
block-sparse equivalent.

Usage: python benchmarks/sbnet.py [--test conv,res] [--sizes 400x704x24,200x352x48]
       [--densities 1,2,5,10,20,30,50,70,100] [--layout NHWC] [--reps 5] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# SBNet's resnet-v2 stages: [H, W, C, K]; the bottleneck uses C -> K -> K -> C
RES_CHANNELS = {24: 96, 48: 192, 64: 256, 96: 384}


def _median_times(fns, reps):
    """One warm-up call each, then the median seconds of ``reps`` round-robin runs (the
    dispatcher's own timing rule, sbnet.tuning.median_time)."""
    from sparsym.kernels.sbnet.tuning import median_time
    for f in fns:
        f()
    return median_time(fns, reps)


def _paired_ratio(f, g, reps):
    """Median over ``reps`` adjacent (g, f) pairs of time(f) / time(g): pairs run back to
    back see the same load, so the ratio is steadier than a ratio of medians."""
    ratios = []
    for _ in range(reps):
        t = time.perf_counter()
        g()
        tg = time.perf_counter() - t
        t = time.perf_counter()
        f()
        ratios.append((time.perf_counter() - t) / tg)
    return float(np.median(ratios))


def make_mask(h, w, density, kind, rng):
    m = np.zeros((1, h, w), np.float32)
    if density >= 1:
        m[:] = 1
    elif kind == "topleft":
        s = np.sqrt(density)
        m[0, :int(np.ceil(s * h)), :int(np.ceil(s * w))] = 1
    else:   # random disks until the density is reached
        yy, xx = np.mgrid[:h, :w]
        while m.mean() < density:
            r = rng.uniform(0.02, 0.08) * min(h, w)
            cy, cx = rng.uniform(0, h), rng.uniform(0, w)
            m[0][(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = 1
    return m


def _bp_of(geom, tile):
    from sparsym.kernels.sbnet.geometry import block_params
    return block_params(geom, tile)


def bench_conv(h, w, k, density, layout, reps, mask_kind, rng):
    import sparsym as mx
    from sparsym.contrib import sbnet
    from sparsym.kernels.sbnet import conv as sconv
    from sparsym.kernels.sbnet import fused, strips, tuning
    from sparsym.kernels.sbnet.geometry import conv_geometry, output_mask, tiles_of
    nhwc = layout == "NHWC"
    x = rng.standard_normal((1, h, w, k) if nhwc else (1, k, h, w)).astype(np.float32)
    wt = rng.standard_normal((k, 3, 3, k) if nhwc else (k, k, 3, 3)).astype(np.float32)
    mask = make_mask(h, w, density, mask_kind, rng)
    xn, wn, mn = mx.nd.array(x), mx.nd.array(wt), mx.nd.array(mask)
    x_other = np.ascontiguousarray(x.transpose(0, 3, 1, 2) if nhwc else x.transpose(0, 2, 3, 1))
    w_other = np.ascontiguousarray(wt.transpose(0, 3, 1, 2) if nhwc else wt.transpose(0, 2, 3, 1))
    xo, wo = mx.nd.array(x_other), mx.nd.array(w_other)
    conv_kw = dict(kernel=(3, 3), num_filter=k, pad=(1, 1), no_bias=True)
    lay = "NHWC" if nhwc else None
    other = None if nhwc else "NHWC"
    sb_kw = dict(conv_kw, layout=layout)
    geom = conv_geometry((h, w), (3, 3), (1, 1), (1, 1))

    def dense():
        mx.nd.Convolution(xn, wn, layout=lay, **conv_kw)

    def dense_other():
        mx.nd.Convolution(xo, wo, layout=other, **conv_kw)

    # autotune the tile with dispatch off, then read the chosen tile back
    prev = sbnet.set_dispatch(False)
    try:
        mx.nd.contrib.SparseBlockConvolution(xn, mn, wn, **sb_kw)
    finally:
        sbnet.set_dispatch(prev)
    mo = output_mask(mask, geom, 0.0)
    attrs = mx.ops.get_op("_contrib_SparseBlockConvolution").params.parse(
        "SparseBlockConvolution", dict(sb_kw, dispatch="sparse"))
    xc, wc, _, g2, mo2 = fused.conv_setup(attrs, x, mask, wt, None)
    tile, idx, _ = fused.conv_plan(attrs, xc, wc, None, g2, mo2)
    tile = tile or tuning.DEFAULT_TILE
    fixed = (16, 16)
    idx16, total16 = tiles_of(mo, fixed)
    if strips.is_strip(tile):   # strips of active outputs (stride 1): plan = mask step
        sp = strips.plan(mo, geom, tile[1])
        idx, total = idx16, total16   # block figures below: the fixed tile's
        bp = _bp_of(geom, fixed)

        def sparse():
            strips.forward(xc, wc, None, geom, layout, sp)

        def maskstep():
            strips.plan(output_mask(mask, geom, 0.0), geom, tile[1])
    else:
        idx, total = tiles_of(mo, tile)
        bp = _bp_of(geom, tile)

        def sparse():
            sconv.sparse_forward(xc, wc, None, mo, geom, tile, layout, idx=idx)

        def maskstep():
            tiles_of(output_mask(mask, geom, 0.0), tile)

    def sparse_fixed():
        sconv.sparse_forward(xc, wc, None, mo, geom, fixed, layout, idx=idx16)

    def reduce_mask():
        mx.nd.contrib.reduce_mask(mn, bsize=bp.bsize, bstride=bp.bstrides, boffset=bp.boffset,
                                  bcount=bp.bcount)

    def e2e():
        mx.nd.contrib.SparseBlockConvolution(xn, mn, wn, dispatch="sparse", **sb_kw)

    def dispatch():
        mx.nd.contrib.SparseBlockConvolution(xn, mn, wn, dispatch="auto", **sb_kw)

    dispatch()   # measures the threshold once (cached)
    names = ["dense", "dense_other", "sparse", "fixed", "mask", "reduce_mask", "e2e",
             "dispatch"]
    ts = _median_times([dense, dense_other, sparse, sparse_fixed, maskstep, reduce_mask, e2e,
                        dispatch], reps)
    r = dict(zip(names, ts))
    ratio = _paired_ratio(dispatch, dense, 2 * reps)
    ms = {k_: round(v * 1e3, 3) for k_, v in r.items()}
    key = [k_ for k_ in tuning.cache_info()["thresholds"] if k_[0] == "conv"
           and k_[1] == x.shape and k_[-1] == tile]
    thr = tuning.cache_info()["thresholds"][key[0]] if key else None
    return {
        "test": "conv", "size": f"{h}x{w}x{k}", "layout": layout, "density": density,
        "dense_ms": ms["dense"], "dense_best_ms": min(ms["dense"], ms["dense_other"]),
        "sparse_ms": ms["sparse"], "speedup": round(r["dense"] / r["sparse"], 2),
        "speedup_vs_best_dense": round(min(r["dense"], r["dense_other"]) / r["sparse"], 2),
        "fixed_ms": ms["fixed"], "mask_ms": ms["mask"], "reduce_mask_ms": ms["reduce_mask"],
        "e2e_ms": ms["e2e"], "dispatch_ms": ms["dispatch"],
        "dispatch_vs_dense": round(ratio, 3),
        "bsize": list(bp.bsize), "tile": list(tile), "threshold": thr,
        "block_sparsity": round(1 - len(idx) / total, 4),
        "theoretical": round(1 / max(density, 1e-9), 1),
    }


def _res_dense_symbol(mx, layout, k, c):
    ax = 3 if layout == "NHWC" else 1
    lay = "NHWC" if layout == "NHWC" else None
    data = h = mx.sym.var("data")
    for i, (f, kern, pad) in enumerate(((k, 1, 0), (k, 3, 1), (c, 1, 0)), 1):
        h = mx.sym.BatchNorm(h, fix_gamma=False, axis=ax, name=f"rb_bn{i}")
        h = mx.sym.Activation(h, act_type="relu")
        h = mx.sym.Convolution(h, kernel=(kern, kern), pad=(pad, pad), num_filter=f,
                               no_bias=True, layout=lay, name=f"rb_conv{i}")
    return data + h


def bench_res(h, w, k, density, layout, reps, mask_kind, rng):
    import sparsym as mx
    from sparsym.contrib import sbnet
    from sparsym.kernels.sbnet import fused, tuning
    from sparsym.kernels.sbnet import resblock as rb
    from sparsym.kernels.sbnet.geometry import tiles_of
    c = RES_CHANNELS.get(k, 4 * k)
    nhwc = layout == "NHWC"
    dshape = (1, h, w, c) if nhwc else (1, c, h, w)
    mask = make_mask(h, w, density, mask_kind, rng)
    dense_sym = _res_dense_symbol(mx, layout, k, c)
    dex = dense_sym.simple_bind(mx.cpu(), grad_req="null", data=dshape)
    sp_sym = sbnet.sparse_res_block_bottleneck(mx.sym.var("data"), mx.sym.var("mask"),
                                               num_filter=k, layout=layout, name="rb")
    auto_sym = sbnet.sparse_res_block_bottleneck(mx.sym.var("data"), mx.sym.var("mask"),
                                                 num_filter=k, layout=layout, name="rb",
                                                 dispatch="auto")
    mshape = (1, h, w, 1) if nhwc else (1, 1, h, w)
    sex = sp_sym.simple_bind(mx.cpu(), grad_req="null", data=dshape, mask=mshape)
    aex = auto_sym.simple_bind(mx.cpu(), grad_req="null", data=dshape, mask=mshape)
    x = rng.standard_normal(dshape).astype(np.float32)
    for exe in (dex, sex, aex):
        for name, arr in exe.arg_dict.items():
            if name == "data":
                arr[:] = x
            elif name == "mask":
                arr[:] = mask.reshape(mshape)
            elif name.endswith("gamma"):
                arr[:] = rng.uniform(0.5, 1.5, arr.shape)
            elif name.endswith("beta"):
                arr[:] = rng.standard_normal(arr.shape) * 0.1
            else:
                arr[:] = rng.standard_normal(arr.shape) * (2.0 / np.prod(arr.shape[1:])) ** 0.5
        for name, arr in exe.aux_dict.items():
            arr[:] = 1.0 if name.endswith("var") else 0.0
    for name in sex.arg_dict:   # same parameters everywhere
        if name in dex.arg_dict:
            dex.arg_dict[name][:] = sex.arg_dict[name]
        aex.arg_dict[name][:] = sex.arg_dict[name]
    prev = sbnet.set_dispatch(False)
    try:
        sex.forward(is_train=False)   # autotunes the tile
    finally:
        sbnet.set_dispatch(prev)
    attrs = mx.ops.get_op("_contrib_SparseBottleneck").params.parse(
        "SparseBottleneck", dict(num_filter=k, layout=layout, dispatch="sparse"))
    xs = [sex.arg_dict[n]._raw for n in sex._plan.arg_names] + \
        [a._raw for a in sex.aux_arrays]
    xx, bw, mov, geom, mo, r1 = fused.res_setup(attrs, xs)
    (tile, _, _), fmov = fused.res_plan(attrs, xx, bw, mov, geom, mo, r1, False)
    tile = tile or tuning.DEFAULT_TILE
    idx, total = tiles_of(mo, tile)
    fixed = (16, 16)
    idx16, _ = tiles_of(mo, fixed)
    out = np.empty_like(xx)

    def dense():
        dex.forward(is_train=False)

    def sparse():
        rb.sparse_forward(xx, mo, r1, tile, bw, fmov, attrs.eps, False, False, layout, idx=idx,
                          y=out)

    def sparse_fixed():
        rb.sparse_forward(xx, mo, r1, fixed, bw, fmov, attrs.eps, False, False, layout,
                          idx=idx16, y=out)

    x_own = xx.copy()

    def sparse_inplace():   # y is x: SBNet's use_var, no copy of the untouched pixels
        rb.sparse_forward(x_own, mo, r1, tile, bw, fmov, attrs.eps, False, False, layout,
                          idx=idx, y=x_own)

    def maskstep():
        m, r = rb.region_maps(mask, geom, 0.0)
        tiles_of(m, tile)

    def e2e():
        sex.forward(is_train=False)

    def dispatch():
        aex.forward(is_train=False)

    dispatch()
    names = ["dense", "sparse", "fixed", "inplace", "mask", "e2e", "dispatch"]
    ts = _median_times([dense, sparse, sparse_fixed, sparse_inplace, maskstep, e2e, dispatch],
                       reps)
    r = dict(zip(names, ts))
    ratio = _paired_ratio(dispatch, dense, 2 * reps)
    ms = {k_: round(v * 1e3, 3) for k_, v in r.items()}
    y_d = dex.forward(is_train=False)[0].asnumpy()
    y_s = sex.forward(is_train=False)[0].asnumpy()
    mo3 = mo[..., None] if nhwc else mo[:, None]
    err = float(np.abs((y_d - y_s) * mo3).max() / (np.abs(y_d).max() + 1e-12))
    return {
        "test": "res", "size": f"{h}x{w}x{c}->{k}", "layout": layout, "density": density,
        "dense_ms": ms["dense"], "sparse_ms": ms["sparse"],
        "speedup": round(r["dense"] / r["sparse"], 2), "fixed_ms": ms["fixed"],
        "inplace_ms": ms["inplace"], "speedup_inplace": round(r["dense"] / r["inplace"], 2),
        "mask_ms": ms["mask"], "e2e_ms": ms["e2e"], "dispatch_ms": ms["dispatch"],
        "dispatch_vs_dense": round(ratio, 3),
        "bsize": [tile[0] + 2, tile[1] + 2], "tile": list(tile),
        "block_sparsity": round(1 - len(idx) / total, 4),
        "theoretical": round(1 / max(density, 1e-9), 1), "max_rel_err_on_active": err,
    }


def mxnet_conv(py, h, w, k, reps):
    code = f"""
import time, json, numpy as np, mxnet as mx
x = mx.nd.array(np.random.rand(1, {k}, {h}, {w}).astype('float32'))
wt = mx.nd.array(np.random.rand({k}, {k}, 3, 3).astype('float32'))
f = lambda: mx.nd.Convolution(x, wt, kernel=(3, 3), num_filter={k}, pad=(1, 1),
                              no_bias=True).wait_to_read()
f(); ts = []
for _ in range({reps}):
    t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
print(json.dumps({{"ms": float(np.median(ts)) * 1e3}}))
"""
    try:
        out = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=600)
        return json.loads(out.stdout.strip().splitlines()[-1])["ms"]
    except Exception:   # noqa: BLE001  (MXNet is optional; report its absence)
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--test", default="conv,res")
    ap.add_argument("--sizes", default="400x704x24,200x352x48",
                    help="HxWxK list (K: conv channels / bottleneck width)")
    ap.add_argument("--densities", default="1,2,5,10,20,30,50,70,100", help="percent")
    ap.add_argument("--layout", default="NHWC", choices=("NHWC", "NCHW"))
    ap.add_argument("--mask", default="topleft", choices=("topleft", "blobs"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (CI smoke run)")
    default_mx = os.path.expanduser("~/mxref/bin/python")
    ap.add_argument("--mxnet-python", default=default_mx if os.path.exists(default_mx) else "")
    a = ap.parse_args(argv)
    if a.quick:
        a.sizes, a.densities, a.reps = "40x48x8", "5,50,100", 2
    rng = np.random.default_rng(0)
    sizes = [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]
    dens = [float(d) / 100 for d in a.densities.split(",")]
    for test in a.test.split(","):
        fn = bench_conv if test == "conv" else bench_res
        for h, w, k in sizes:
            rows = []
            for d in dens:
                rec = fn(h, w, k, d, a.layout, a.reps, a.mask, rng)
                rec["load"] = round(os.getloadavg()[0], 2)
                rows.append(rec)
                print(json.dumps(rec), flush=True)
            summary = {"summary": test, "size": rows[0]["size"], "layout": a.layout,
                       "max_dispatch_vs_dense": max(r["dispatch_vs_dense"] for r in rows),
                       "speedup_at_90pct_sparsity": next(
                           (r["speedup"] for r in rows if abs(r["density"] - 0.1) < 1e-9),
                           None)}
            if test == "conv" and a.mxnet_python and not a.quick:
                summary["mxnet_dense_conv_nchw_ms"] = mxnet_conv(a.mxnet_python, h, w, k,
                                                                 a.reps)
            print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
