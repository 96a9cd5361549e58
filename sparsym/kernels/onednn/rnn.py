"""One layer of a fused RNN (LSTM, GRU, vanilla relu/tanh; one or two directions) on
oneDNN's RNN primitives, forward and backward, in MXNet's (cuDNN's) parameter layout.

Storage contract: float32 arrays. ``x`` (T, N, C) time-major, C-contiguous; per direction
``Wi`` (G*H, C), ``Wh`` (G*H, H), ``bi``, ``bh`` (G*H,) in MXNet's gate order (lstm i, f, g,
o; gru r, z, n; vanilla one gate); ``h0``/``c0`` (D, N, H). Outputs are fresh arrays.

Mapping onto oneDNN: weights are described in place with oneDNN's ``ldgoi`` order (MXNet's
row-major (G*H, C) block) and reordered into the primitive's layout. LSTM and vanilla RNN
take one bias per gate (``bi + bh``; its gradient is both biases' gradient). MXNet's GRU is
oneDNN's linear-before-reset GRU with the gates (z, r, n) and a fourth bias (``bh_n``,
inside the reset product), so r and z swap places going in and coming out.
"""
from __future__ import annotations

import numpy as np

from . import core
from ._lib import E

__all__ = ["forward", "backward", "GATES"]

GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}
_F = np.float32


def _perm(mode, w, h):
    """MXNet's gate blocks (rows of ``w``, each ``h`` long) in oneDNN's order (and back:
    the swap is its own inverse)."""
    if mode != "gru":
        return w
    return np.concatenate([w[h:2 * h], w[:h], w[2 * h:]])


def _bias(mode, bi, bh, h):
    """oneDNN's (G or G+1, H) bias of one direction."""
    if mode == "gru":
        b = _perm(mode, bi, h).copy()
        b[:2 * h] += _perm(mode, bh, h)[:2 * h]
        return np.concatenate([b, bh[2 * h:]]).reshape(4, h)
    return (bi + bh).reshape(GATES[mode], h)


def _nbias(mode):
    return 4 if mode == "gru" else GATES[mode]


def _descs(mode, T, N, C, H, D, wtag=None):
    """Memory descriptors of one layer by argument; weights in ``wtag`` (ldigo by default).

    The weights' layout is named, not left to oneDNN: an inference primitive would pick its
    opaque packed format, whose descriptors of different batch sizes share one cache key
    (dims and format kind), so a cached reorder into another packing overran the buffer."""
    G = GATES[mode]
    f = np.float32
    mds = {
        E.ARG_SRC_LAYER: core.md_tag((T, N, C), f, E.tnc),
        E.ARG_SRC_ITER: core.md_tag((1, D, N, H), f, E.ldnc),
        E.ARG_BIAS: core.md_tag((1, D, _nbias(mode), H), f, E.ldgo),
        E.ARG_DST_LAYER: core.md_tag((T, N, D * H), f, E.tnc),
        E.ARG_DST_ITER: core.md_tag((1, D, N, H), f, E.ldnc),
        E.ARG_WEIGHTS_LAYER: core.md_tag((1, D, C, G, H), f, wtag or E.ldigo),
        E.ARG_WEIGHTS_ITER: core.md_tag((1, D, H, G, H), f, wtag or E.ldigo),
    }
    if mode == "lstm":
        mds[E.ARG_SRC_ITER_C] = core.md_tag((1, D, N, H), f, E.ldnc)
        mds[E.ARG_DST_ITER_C] = core.md_tag((1, D, N, H), f, E.ldnc)
    return mds


def _direction(D):
    return E.bidirectional_concat if D == 2 else E.unidirectional_left2right


def _fwd_args(mode, m):
    a = [m[E.ARG_SRC_LAYER].ptr, m[E.ARG_SRC_ITER].ptr]
    if mode == "lstm":
        a.append(m[E.ARG_SRC_ITER_C].ptr)
    a += [m[E.ARG_WEIGHTS_LAYER].ptr, m[E.ARG_WEIGHTS_ITER].ptr]
    if mode == "lstm":
        a += [None, None]  # no peephole, no projection
    a += [m[E.ARG_BIAS].ptr, m[E.ARG_DST_LAYER].ptr, m[E.ARG_DST_ITER].ptr]
    if mode == "lstm":
        a.append(m[E.ARG_DST_ITER_C].ptr)
    return a


_CREATE = {"lstm": "lstm", "gru": "lbr_gru", "rnn_relu": "vanilla_rnn",
           "rnn_tanh": "vanilla_rnn"}


def _head(mode, prop, D):
    """The leading arguments of a ``*_primitive_desc_create`` call after the engine."""
    if mode.startswith("rnn"):
        act = E.eltwise_relu if mode == "rnn_relu" else E.eltwise_tanh
        return [prop, act, _direction(D)]
    return [prop, _direction(D)]


def _tail(mode, flags):
    return [flags, 0.0, 0.0] if mode.startswith("rnn") else [flags]


def _work(mode, macs):
    """The work the thread policy sees: none for GRU, whose linear-before-reset primitives
    ran slower on 2 threads than on 1 (a Gluon training step of MXNet's word language
    model, 2x200 units, batch 32: 45-50 ms against 41.5 ms; LSTM gains, 52 -> 46 ms)."""
    return 0 if mode == "gru" else macs


def _fwd_prim(mode, T, N, C, H, D, train, slot=None):
    """The forward primitive; ``slot`` (a batch block's index) gives each block its own
    primitive object, so blocks on different threads do not queue on one's lock, and runs
    it on one thread (the other blocks hold the other cores)."""
    prop = E.forward_training if train else E.forward_inference
    key = ("rnn_fwd", mode, T, N, C, H, D, prop, slot)

    def create():
        m = _descs(mode, T, N, C, H, D)
        return core.create_pd(f"dnnl_{_CREATE[mode]}_forward_primitive_desc_create",
                              *_head(mode, prop, D), *_fwd_args(mode, m),
                              *_tail(mode, E.rnn_flags_undef))
    work = 0 if slot is not None else _work(mode, T * N * GATES[mode] * H * (C + H) * D)
    return core.primitive(key, create, work=work)


def _weights_plain(mode, ws, dims):
    """The stacked per-direction MXNet blocks (G*H, K) as an array whose logical dims are
    oneDNN's (1, D, K, G, H) (strides of the ldgoi order)."""
    D, K, G, H = dims[1], dims[2], dims[3], dims[4]
    blocks = [_perm(mode, w, H) for w in ws]
    # one direction: the parameter vector's own block (a view), no stacking copy
    stack = np.ascontiguousarray(blocks[0] if D == 1 else np.stack(blocks), dtype=_F)
    return stack.reshape(1, D, G, H, K).transpose(0, 1, 4, 2, 3)


def _laid_out(arr, md):
    """``arr`` (a strided float32 view) for an argument laid out as ``md``: the array itself
    when its strides are that layout (the backward's ldgoi weights: MXNet's own order),
    else a reordered Tensor."""
    src = core.md_plain(arr.shape, _F, [s // arr.itemsize for s in arr.strides])
    return arr if src.key == md.key else core.from_plain(arr, md)


def _plain_into(t, arr):
    """Reorder oneDNN tensor (or array) ``t`` into the (possibly strided) array ``arr``."""
    if not isinstance(t, core.Tensor):
        arr[...] = t
        return arr
    dst = core.md_plain(arr.shape, _F, [s // arr.itemsize for s in arr.strides])
    core.reorder_md(t.md, dst).execute({E.ARG_FROM: t.data, E.ARG_TO: arr})
    return arr


def weights(mode, Wi, Wh, bi, bh):
    """One layer's weights as the forward primitive takes them (``Wi`` etc. are lists with
    one entry per direction): reordered once per call, shared by every batch block."""
    D, H, C = len(Wi), Wh[0].shape[1], Wi[0].shape[1]
    G = GATES[mode]
    wl_plain = _weights_plain(mode, Wi, (1, D, C, G, H))
    wi_plain = _weights_plain(mode, Wh, (1, D, H, G, H))
    bias = np.ascontiguousarray(np.stack([_bias(mode, b1, b2, H) for b1, b2 in zip(bi, bh)])
                                [None], dtype=_F)
    # the forward's weights layout is named (ldigo, see _descs): no primitive needed for it
    return dict(wl=core.from_plain(wl_plain, core.md_tag((1, D, C, G, H), _F, E.ldigo)),
                wi=core.from_plain(wi_plain, core.md_tag((1, D, H, G, H), _F, E.ldigo)),
                bias=bias, wl_plain=wl_plain, wi_plain=wi_plain, D=D, H=H, C=C)


def forward(mode, x, w, h0, c0=None, train=False, slot=None):
    """(y (T, N, D*H), hT (D, N, H), cT or None, saved or None): one layer with the weights
    ``w`` of :func:`weights`. ``saved`` (training) holds what :func:`backward` needs;
    ``slot`` names a batch block (see :func:`_fwd_prim`)."""
    T, N, C = x.shape
    D, H = w["D"], w["H"]
    prim = _fwd_prim(mode, T, N, C, H, D, train, slot)
    x = np.ascontiguousarray(x, dtype=_F)
    h0 = np.ascontiguousarray(h0, dtype=_F).reshape(1, D, N, H)
    y = np.empty((T, N, D * H), _F)
    hT = np.empty((1, D, N, H), _F)
    args = {E.ARG_SRC_LAYER: x, E.ARG_SRC_ITER: h0, E.ARG_WEIGHTS_LAYER: _buf(w["wl"]),
            E.ARG_WEIGHTS_ITER: _buf(w["wi"]), E.ARG_BIAS: w["bias"], E.ARG_DST_LAYER: y,
            E.ARG_DST_ITER: hT}
    cT = None
    if mode == "lstm":
        c0 = np.ascontiguousarray(c0, dtype=_F).reshape(1, D, N, H)
        cT = np.empty((1, D, N, H), _F)
        args[E.ARG_SRC_ITER_C], args[E.ARG_DST_ITER_C] = c0, cT
    ws = None
    if train:
        ws = _written(prim.md(E.ARG_WORKSPACE))
        args[E.ARG_WORKSPACE] = ws.data
    prim.execute(args)
    saved = None
    if train:
        # the weights in MXNet's (G*H, K) order, gates as oneDNN orders them: the layout
        # (ldgoi) the backward primitive takes as it is
        saved = dict(x=x, h0=h0, c0=c0, y=y, hT=hT, cT=cT, bias=w["bias"], ws=ws, fwd=prim,
                     D=D, H=H, wl_plain=w["wl_plain"], wi_plain=w["wi_plain"], slot=slot)
    return y, hT[0], (cT[0] if cT is not None else None), saved


def _written(md):
    """A Tensor for a buffer the primitive writes whole (workspace, overwritten gradients):
    not zeroed first (a workspace is megabytes)."""
    return core.Tensor(md, np.empty(md.size, np.uint8))


def _buf(t):
    return t.data if isinstance(t, core.Tensor) else t


def backward(mode, saved, dy, dhT=None, dcT=None):
    """Gradients of one layer: (dx, dWi list, dWh list, dbi list, dbh list, dh0, dc0)."""
    x, fwd, slot = saved["x"], saved["fwd"], saved["slot"]
    T, N, C = x.shape
    D, H = saved["D"], saved["H"]
    G = GATES[mode]
    key = ("rnn_bwd", mode, T, N, C, H, D, slot)

    def create():
        m = _descs(mode, T, N, C, H, D, E.ldgoi)  # the backward's weights layout
        dm = _descs(mode, T, N, C, H, D)
        fa = _fwd_args(mode, m)
        da = _fwd_args(mode, dm)
        # diff args: src_layer, src_iter[, src_iter_c], weights..., bias, dst_layer,
        # dst_iter[, dst_iter_c] in the forward's order
        return core.create_pd(f"dnnl_{_CREATE[mode]}_backward_primitive_desc_create",
                              *_head(mode, E.backward, D), *fa, *da,
                              *_tail(mode, E.rnn_flags_diff_weights_overwrite), fwd.pd)
    work = 0 if slot is not None else _work(mode, 3 * T * N * G * H * (C + H) * D)
    prim = core.primitive(key, create, work=work)
    wl = _laid_out(saved["wl_plain"], prim.md(E.ARG_WEIGHTS_LAYER))
    wi = _laid_out(saved["wi_plain"], prim.md(E.ARG_WEIGHTS_ITER))
    zeros = np.zeros((1, D, N, H), _F)
    dy = np.ascontiguousarray(dy, dtype=_F)
    dx = np.empty((T, N, C), _F)
    dh0 = np.empty((1, D, N, H), _F)
    dbias = np.empty((1, D, _nbias(mode), H), _F)
    dwl = _written(prim.md(E.ARG_DIFF_WEIGHTS_LAYER))  # overwritten (the flag)
    dwi = _written(prim.md(E.ARG_DIFF_WEIGHTS_ITER))
    args = {E.ARG_SRC_LAYER: x, E.ARG_SRC_ITER: saved["h0"], E.ARG_WEIGHTS_LAYER: _buf(wl),
            E.ARG_WEIGHTS_ITER: _buf(wi), E.ARG_BIAS: saved["bias"],
            E.ARG_DST_LAYER: saved["y"], E.ARG_DST_ITER: saved["hT"],
            E.ARG_DIFF_SRC_LAYER: dx, E.ARG_DIFF_SRC_ITER: dh0,
            E.ARG_DIFF_WEIGHTS_LAYER: dwl.data, E.ARG_DIFF_WEIGHTS_ITER: dwi.data,
            E.ARG_DIFF_BIAS: dbias, E.ARG_DIFF_DST_LAYER: dy,
            E.ARG_DIFF_DST_ITER: zeros if dhT is None else
            np.ascontiguousarray(dhT, dtype=_F).reshape(1, D, N, H),
            E.ARG_WORKSPACE: saved["ws"].data}
    dc0 = None
    if mode == "lstm":
        dc0 = np.empty((1, D, N, H), _F)
        args.update({E.ARG_SRC_ITER_C: saved["c0"], E.ARG_DST_ITER_C: saved["cT"],
                     E.ARG_DIFF_SRC_ITER_C: dc0,
                     E.ARG_DIFF_DST_ITER_C: zeros if dcT is None else
                     np.ascontiguousarray(dcT, dtype=_F).reshape(1, D, N, H)})
    prim.execute(args)
    dWi = _weights_back(mode, dwl, D, C, G, H)
    dWh = _weights_back(mode, dwi, D, H, G, H)
    dbi, dbh = [], []
    for d in range(D):
        b = dbias[0, d]
        if mode == "gru":
            gi = _perm(mode, b[:3].reshape(-1), H)
            gh = gi.copy()
            gh[2 * H:] = b[3]
        else:
            gi = b.reshape(-1)
            gh = gi.copy()
        dbi.append(gi)
        dbh.append(gh)
    return (dx, dWi, dWh, dbi, dbh, dh0[0], dc0[0] if dc0 is not None else None)


def _weights_back(mode, t, D, K, G, H):
    """MXNet's (G*H, K) blocks per direction from a oneDNN weight gradient."""
    out = np.empty((1, D, G, H, K), _F)
    _plain_into(t, out.transpose(0, 1, 4, 2, 3))
    return [_perm(mode, out[0, d].reshape(G * H, K), H) for d in range(D)]


def supported(mode, x, params, states, proj):
    """Whether :func:`rnn_forward` takes this call (float32, no LSTM projection, not
    rnn_relu)."""
    # rnn_relu stays on NumPy: its data gradient flips where a pre-activation sits at 0
    # and oneDNN's GEMMs round differently from BLAS, so it strays from the unrolled
    # cells' gradient past MXNet's test tolerance (test_rnnrelu_bidirectional)
    return (proj is None and mode in GATES and mode != "rnn_relu" and x.dtype == _F
            and params.dtype == _F
            and all(s.dtype == _F for s in states) and x.ndim == 3)


def rnn_forward(mode, x, params, states, num_layers, bidirectional, p=0.0, rng=None,
                keep=False, parts=None):
    """The fused multi-layer RNN of ``kernels.rnn.rnn_forward`` (same arguments, results,
    dropout masks drawn in the same order) with one oneDNN primitive per layer; the cache
    is for :func:`rnn_backward` only.

    ``parts``: row ranges of the batch that each run the whole stack on their own worker
    thread, one oneDNN thread each (kernels.rnn.batch_parts). A row's recurrence never
    reads another's, and a primitive call holds no GIL, so the blocks share nothing but the
    weights, reordered once here."""
    from .. import _parallel
    from .. import rnn as krnn
    T, N, C = x.shape
    H = states[0].shape[-1]
    D = 2 if bidirectional else 1
    table, _ = krnn.layout(mode, H, num_layers, bidirectional, C)

    def layer(li):
        views = [krnn._views(params, table, li, d) for d in range(D)]
        return weights(mode, *([v[j] for v in views] for j in range(4)))
    # the layers' weight reorders (one thread each) run side by side when the call takes
    # the cores in batch blocks anyway
    ws = (_parallel.run([lambda li=li: layer(li) for li in range(num_layers)])
          if parts and len(parts) > 1 else [layer(li) for li in range(num_layers)])
    masks = [None] * num_layers
    if rng is not None and p > 0:  # the whole batch's masks, layer after layer
        for li in range(num_layers - 1):
            masks[li] = (rng.random((T, N, D * H)) >= p).astype(_F) / _F(1 - p)
    if not parts or len(parts) < 2:
        out, finals, layers = _stack(mode, x, ws, states, masks, keep, None)
        cache = {"onednn": True, "layers": layers, "table": table} if keep else None
        return out, finals, cache
    res = _parallel.run([
        lambda a=a, b=b, k=k: _stack(mode, x[:, a:b], ws, [s[:, a:b] for s in states],
                                     [m if m is None else m[:, a:b] for m in masks], keep, k)
        for k, (a, b) in enumerate(parts)])
    out, finals = krnn.join_forward(res)
    cache = ({"onednn": True, "blocks": [r[2] for r in res], "parts": parts, "table": table}
             if keep else None)
    return out, finals, cache


def _stack(mode, x, ws, states, masks, keep, slot):
    """(out, finals, per-layer saved list) of the whole stack over the rows in ``x``."""
    D = ws[0]["D"]
    finals = [np.empty(s.shape, _F) for s in states]
    inp, layers = np.ascontiguousarray(x), []
    for li, w in enumerate(ws):
        sl = slice(li * D, (li + 1) * D)
        y, hT, cT, saved = forward(mode, inp, w, states[0][sl],
                                   states[1][sl] if mode == "lstm" else None, keep, slot)
        finals[0][sl] = hT
        if mode == "lstm":
            finals[1][sl] = cT
        mask = masks[li]
        layers.append({"saved": saved, "mask": mask})
        inp = y * mask if mask is not None else y
    return inp, finals, layers


def rnn_backward(mode, cache, dout, dstates, num_layers, bidirectional):
    """(dx, dparams, [dh0(, dc0)]) from a ``keep=True`` :func:`rnn_forward`'s cache (per
    batch block on the worker threads when the forward ran in blocks; the parameter
    gradients are summed)."""
    from .. import _parallel
    from .. import rnn as krnn
    table = cache["table"]
    if "blocks" not in cache:
        return _stack_backward(mode, table, cache["layers"], dout, dstates, num_layers,
                               bidirectional)
    res = _parallel.run([
        lambda c=c, a=a, b=b: _stack_backward(
            mode, table, c, dout[:, a:b], [g if g is None else g[:, a:b] for g in dstates],
            num_layers, bidirectional)
        for c, (a, b) in zip(cache["blocks"], cache["parts"])])
    return krnn.join_backward(res)


def _stack_backward(mode, table, layers, dout, dstates, num_layers, bidirectional):
    """rnn_backward of one block's layers."""
    D = 2 if bidirectional else 1
    dvec = np.zeros(sum(int(np.prod(s)) for _, s in table.values()), _F)
    st0 = layers[0]["saved"]
    n_st = 2 if mode == "lstm" else 1
    dst = [np.zeros((num_layers * D,) + st0["h0"].shape[2:], _F) for _ in range(n_st)]
    dy = dout
    for li in range(num_layers - 1, -1, -1):
        sl = slice(li * D, (li + 1) * D)
        dh = dstates[0][sl] if dstates and dstates[0] is not None else None
        dc = (dstates[1][sl] if mode == "lstm" and len(dstates) > 1 and dstates[1] is not None
              else None)
        dx, dWi, dWh, dbi, dbh, dh0, dc0 = backward(mode, layers[li]["saved"], dy, dh, dc)
        for d in range(D):
            for part, g in zip(("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"),
                               (dWi[d], dWh[d], dbi[d], dbh[d])):
                off, shape = table[(li, d, part)]
                dvec[off:off + g.size] = g.reshape(-1)
        dst[0][sl] = dh0
        if mode == "lstm":
            dst[1][sl] = dc0
        if li > 0:
            mask = layers[li - 1]["mask"]
            dy = dx * mask if mask is not None else dx
        else:
            dy = dx
    return dy, dvec, dst
