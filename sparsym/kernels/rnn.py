"""Fused multi-layer RNN kernels (rnn_relu, rnn_tanh, lstm, gru; bidirectional; dropout
between layers) on raw arrays, in MXNet's cuDNN parameter layout.

Each layer projects its whole input sequence with one GEMM (T*N rows), then steps the
recurrence with one (N, H) x (H, G*H) GEMM per time step. The backward pass keeps every
step's gate activations (the forward with ``keep=True``), walks the steps in reverse and
forms the weight gradients with one GEMM per weight over all steps.

Gate order is MXNet's: lstm (i, f, g, o) with ``c' = f*c + i*g``, ``h' = o*tanh(c')``
(with a projection of size P, LSTMP: ``r' = W_hr h'`` of width P is the output and the
recurrent state, ``h'`` stays internal); gru
(r, z, n) with ``n = tanh(x_n + r*(W_hn h + b_hn))``, ``h' = (1-z)*n + z*h``.
Storage contract: dense C-ordered inputs, never written; outputs are new arrays.
"""
from __future__ import annotations

import numpy as np

from . import _parallel, blas, rnn_steps


def expit(x, out=None):
    """scipy.special.expit (stable sigmoid); scipy.special loads on first use, not at
    package import (about 0.2 s)."""
    from scipy.special import expit as f
    return f(x, out=out)

GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}


def layout(mode, h, num_layers, bidirectional, num_input, proj=None):
    """{(layer, direction, part): (offset, shape)} and the total size of the vector.

    All weights first (per layer, per direction: i2h, h2h and, with a projection ``proj``,
    h2r), then all biases in the same order: MXNet's (cuDNN's) packing of the
    ``parameters`` input."""
    g, b = GATES[mode], 2 if bidirectional else 1
    r = proj or h  # width of the recurrent state and of each direction's output
    out, p = {}, 0
    for li in range(num_layers):
        n_in = num_input if li == 0 else b * r
        for d in range(b):
            out[(li, d, "i2h_weight")] = (p, (g * h, n_in))
            p += g * h * n_in
            out[(li, d, "h2h_weight")] = (p, (g * h, r))
            p += g * h * r
            if proj:
                out[(li, d, "h2r_weight")] = (p, (proj, h))
                p += proj * h
    for li in range(num_layers):
        for d in range(b):
            for part in ("i2h_bias", "h2h_bias"):
                out[(li, d, part)] = (p, (g * h,))
                p += g * h
    return out, p


def _views(vec, table, li, d):
    """(Wi, Wh, bi, bh, Wr) views of one layer and direction in the flat vector (Wr is None
    without a projection)."""
    out = []
    for part in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias", "h2r_weight"):
        hit = table.get((li, d, part))
        if hit is None:
            out.append(None)
            continue
        off, shape = hit
        out.append(vec[off:off + int(np.prod(shape))].reshape(shape))
    return out


def _step_times(T, d):
    return range(T) if d == 0 else range(T - 1, -1, -1)


def _run_direction(mode, xi, Wh, bh, h0, c0, keep, Wr=None):
    """Step one direction over the projected input xi (T, N, G*H) (step order = time order
    for d=0; the caller passes reversed times for d=1). Returns the outputs (T, N, H) in step
    order (width P with an LSTM projection ``Wr`` (P, H)), the final h (and c), and the
    cache for backward."""
    if fused_steps(mode, xi.dtype, Wr):
        return _run_fused(mode, xi, Wh, bh, h0, c0)
    T, N = xi.shape[:2]
    H = Wh.shape[0] // GATES[mode]
    dt = xi.dtype
    hs = np.empty((T + 1, N, h0.shape[-1]), dt)
    hs[0] = h0
    cache = {"hs": hs}
    if mode == "lstm":
        cs = np.empty((T + 1, N, H), dt)
        cs[0] = c0
        acts = np.empty((T, N, 4 * H), dt) if keep else None
        for s in range(T):
            gates = xi[s] + hs[s] @ Wh.T
            gates += bh
            if_ = expit(gates[:, :2 * H])  # one call for the adjacent i and f gates
            i, f = if_[:, :H], if_[:, H:]
            g = np.tanh(gates[:, 2 * H:3 * H])
            o = expit(gates[:, 3 * H:])
            c = f * cs[s]
            c += i * g
            cs[s + 1] = c
            if Wr is None:
                hs[s + 1] = o * np.tanh(c)
            else:
                hs[s + 1] = (o * np.tanh(c)) @ Wr.T
            if keep:
                acts[s, :, :H], acts[s, :, H:2 * H] = i, f
                acts[s, :, 2 * H:3 * H], acts[s, :, 3 * H:] = g, o
        cache.update(cs=cs, acts=acts)
        return hs[1:], (hs[T], cs[T]), cache
    if mode == "gru":
        acts = np.empty((T, N, 3 * H), dt) if keep else None
        hn = np.empty((T, N, H), dt) if keep else None
        for s in range(T):
            hh = hs[s] @ Wh.T
            hh += bh
            rz = xi[s, :, :2 * H] + hh[:, :2 * H]
            rz = expit(rz, out=rz)  # one call for the adjacent reset and update gates
            r, z = rz[:, :H], rz[:, H:]
            n = np.tanh(xi[s, :, 2 * H:] + r * hh[:, 2 * H:])
            hs[s + 1] = n + z * (hs[s] - n)
            if keep:
                acts[s, :, :H], acts[s, :, H:2 * H], acts[s, :, 2 * H:] = r, z, n
                hn[s] = hh[:, 2 * H:]
        cache.update(acts=acts, hn=hn)
        return hs[1:], (hs[T],), cache
    relu = mode == "rnn_relu"
    for s in range(T):
        pre = xi[s] + hs[s] @ Wh.T
        pre += bh
        hs[s + 1] = np.maximum(pre, 0) if relu else np.tanh(pre)
    return hs[1:], (hs[T],), cache


def fused_steps(mode, dtype, Wr):
    """Whether a direction steps through kernels/rnn_steps.py's fused float32 gates."""
    return mode in ("gru", "lstm") and dtype == np.float32 and Wr is None


def _run_fused(mode, xi, Wh, bh, h0, c0):
    """_run_direction of a GRU or LSTM in float32: per step one GEMM into a reused buffer
    and one fused gate kernel; the gates are always kept (their cost is one store)."""
    T, N, GH = xi.shape
    H = Wh.shape[1]
    dt = xi.dtype
    hs = np.empty((T + 1, N, H), dt)
    hs[0] = h0
    acts = np.empty((T, N, 4 * H), dt)
    mm = np.empty((N, GH), dt)
    WhT = Wh.T
    cache = {"hs": hs, "acts": acts, "fused": True}
    if mode == "gru":
        for s in range(T):
            np.matmul(hs[s], WhT, out=mm)
            rnn_steps.gru_step(xi[s], mm, bh, hs[s], hs[s + 1], acts[s])
        return hs[1:], (hs[T],), cache
    cs = np.empty((T + 1, N, H), dt)
    cs[0] = c0
    for s in range(T):
        np.matmul(hs[s], WhT, out=mm)
        rnn_steps.lstm_step(xi[s], mm, bh, cs[s], hs[s + 1], cs[s + 1], acts[s])
    cache["cs"] = cs
    return hs[1:], (hs[T], cs[T]), cache


def _back_fused(mode, cache, dys, dhT, dcT, Wh):
    """_back_direction of a :func:`_run_fused` direction."""
    hs, acts = cache["hs"], cache["acts"]
    T, N, H = dys.shape
    dt = dys.dtype
    GH = Wh.shape[0]
    dxi = np.empty((T, N, GH), dt)
    mm = np.zeros((N, H), dt)
    if mode == "gru":
        dh = dhT.astype(dt, copy=True)
        dhh = np.empty_like(dxi)
        for s in range(T - 1, -1, -1):
            rnn_steps.gru_back_step(dys[s], dh, mm, acts[s], hs[s], dxi[s], dhh[s])
            np.matmul(dhh[s], Wh, out=mm)
        return dxi, dhh, (dh + mm,)
    cs = cache["cs"]
    dc = dcT.astype(dt, copy=True)
    mm += dhT
    for s in range(T - 1, -1, -1):
        rnn_steps.lstm_back_step(dys[s], mm, dc, acts[s], cs[s], cs[s + 1], dxi[s])
        np.matmul(dxi[s], Wh, out=mm)
    return dxi, dxi, (mm, dc)


def _back_direction(mode, cache, dys, dhT, dcT, Wh, Wr=None, dWr=None):
    """BPTT of one direction. dys (T, N, H) (width P with an LSTM projection): output
    gradients in step order. Returns the gradients of the projected input (T, N, G*H), of
    the h2h pre-activations (T, N, G*H) and of the initial state(s); the projection's weight
    gradient accumulates into ``dWr``."""
    if cache.get("fused"):
        return _back_fused(mode, cache, dys, dhT, dcT, Wh)
    hs = cache["hs"]
    T, N = dys.shape[:2]
    G = GATES[mode]
    H = Wh.shape[0] // G
    dt = dys.dtype
    dxi = np.empty((T, N, G * H), dt)
    dh = dhT.astype(dt, copy=True)
    if mode == "lstm":
        cs, acts = cache["cs"], cache["acts"]
        dc = dcT.astype(dt, copy=True)
        for s in range(T - 1, -1, -1):
            dh += dys[s]
            i, f = acts[s, :, :H], acts[s, :, H:2 * H]
            g, o = acts[s, :, 2 * H:3 * H], acts[s, :, 3 * H:]
            tc = np.tanh(cs[s + 1])
            if Wr is not None:
                dWr += dh.T @ (o * tc)
                dh = dh @ Wr  # gradient of the unprojected h' = o*tanh(c')
            dc += dh * o * (1 - tc * tc)
            dg = dxi[s]
            dg[:, :H] = dc * g * i * (1 - i)
            dg[:, H:2 * H] = dc * cs[s] * f * (1 - f)
            dg[:, 2 * H:3 * H] = dc * i * (1 - g * g)
            dg[:, 3 * H:] = dh * tc * o * (1 - o)
            dc *= f
            dh = dg @ Wh
        return dxi, dxi, (dh, dc)
    if mode == "gru":
        acts, hn = cache["acts"], cache["hn"]
        dhh = np.empty_like(dxi)
        for s in range(T - 1, -1, -1):
            dh += dys[s]
            r, z, n = acts[s, :, :H], acts[s, :, H:2 * H], acts[s, :, 2 * H:]
            dn = dh * (1 - z) * (1 - n * n)
            dz = dh * (hs[s] - n) * z * (1 - z)
            dr = dn * hn[s] * r * (1 - r)
            dxi[s, :, :H] = dr
            dxi[s, :, H:2 * H] = dz
            dxi[s, :, 2 * H:] = dn
            dhh[s, :, :2 * H] = dxi[s, :, :2 * H]
            dhh[s, :, 2 * H:] = dn * r
            dh = dh * z + dhh[s] @ Wh
        return dxi, dhh, (dh,)
    relu = mode == "rnn_relu"
    for s in range(T - 1, -1, -1):
        dh += dys[s]
        y = hs[s + 1]
        dxi[s] = dh * (y > 0) if relu else dh * (1 - y * y)
        dh = dxi[s] @ Wh
    return dxi, dxi, (dh,)


def _work_dtype(dtype):
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def rnn_forward(mode, x, params, states, num_layers, bidirectional, p=0.0, rng=None,
                keep=False, proj=None):
    """Run the fused RNN (see _rnn_forward) on one BLAS thread: the step loops alternate
    small GEMMs with elementwise work, between which OpenBLAS's own threads would spin
    (kernels/_parallel.py). With worker threads, the batch is cut into independent row
    blocks that run the whole stack each (see _chunks)."""
    T, N = x.shape[:2]
    D = 2 if bidirectional else 1
    R = states[0].shape[-1]
    masks = [None] * num_layers
    if rng is not None and p > 0:  # drawn up front, in the unchunked order
        dt = _work_dtype(x.dtype)
        for li in range(num_layers - 1):
            masks[li] = (rng.random((T, N, D * R)) >= p).astype(dt) / dt.type(1 - p)
    parts = _chunks(mode, x.dtype, proj, N, _work(mode, x.shape, states, num_layers,
                                                  bidirectional))
    with blas.single_blas():
        if len(parts) == 1:
            return _rnn_forward(mode, x, params, states, num_layers, bidirectional, masks,
                                keep, proj)
        res = _parallel.run([
            lambda a=a, b=b: _rnn_forward(
                mode, x[:, a:b], params, [s[:, a:b] for s in states], num_layers,
                bidirectional, [m if m is None else m[:, a:b] for m in masks], keep, proj)
            for a, b in parts])
    out, finals = join_forward(res)
    cache = {"chunks": [r[2] for r in res], "parts": parts} if keep else None
    return out, finals, cache


def join_forward(res):
    """(out, finals) of the whole batch from the batch blocks' (out, finals, ...) results."""
    out = np.concatenate([r[0] for r in res], axis=1)
    return out, [np.concatenate([r[1][j] for r in res], axis=1) for j in range(len(res[0][1]))]


def join_backward(res):
    """(dx, dparams, dstates) of the whole batch from the blocks' results: the parameter
    gradients summed, the rest joined along the batch."""
    dvec = res[0][1]
    for r in res[1:]:
        dvec += r[1]
    dx = np.concatenate([r[0] for r in res], axis=1)
    dst = [np.concatenate([r[2][j] for r in res], axis=1) for j in range(len(res[0][2]))]
    return dx, dvec, dst


def _gemm_threads(macs):
    """blas.gemm_threads, except on a worker thread of a batch-blocked call (see _chunks)."""
    return blas.gemm_threads(0 if _parallel.in_worker() else macs)


def _chunks(mode, dtype, proj, N, work):
    """Row ranges of the batch that run on separate worker threads: every row's recurrence
    is independent of the others', so each block steps the whole stack alone, with no
    synchronisation but at the end (the parameter gradients are summed). One block for
    small work, one worker, a busy machine (other processes leave fewer cores free than
    there are workers, rounded: the blocks would take turns on one), or the NumPy steps
    (whose ufuncs hold the GIL between small calls); blocks of at least 8 rows (GEMM
    efficiency)."""
    n = _parallel.workers()
    if (n == 1 or N < 16 or work < _parallel.MIN_PARALLEL_WORK
            or not fused_steps(mode, dtype, proj) or blas.idle_cores() < n - 0.5):
        return [(0, N)]
    return _parallel.split(N, n, 8)


def batch_parts(mode, x, states, num_layers, bidirectional, proj=None):
    """The batch blocks (row ranges) a fused call runs in, one per worker thread (a single
    range: no blocks); kernels/onednn/rnn.py's primitives take the same blocks."""
    return _chunks(mode, x.dtype, proj, x.shape[1],
                   _work(mode, x.shape, states, num_layers, bidirectional))


def batch_blocked(mode, x, states, num_layers, bidirectional, proj=None):
    """Whether :func:`rnn_forward` runs this call in batch blocks on several threads (one
    block per core: about 0.55x the one-thread time on two idle cores, MXNet's word
    language model shape)."""
    return len(batch_parts(mode, x, states, num_layers, bidirectional, proj)) > 1


def _work(mode, xshape, states, num_layers, bidirectional):
    """Multiply-adds of the forward (all layers taken as wide as the first)."""
    T, N, C = xshape
    R = states[0].shape[-1]
    D = 2 if bidirectional else 1
    return T * N * GATES[mode] * states[-1].shape[-1] * (C + R) * D * num_layers


def rnn_backward(mode, cache, dout, dstates, num_layers, bidirectional):
    """Gradients of the fused RNN (see _rnn_backward), on one BLAS thread like the forward,
    per batch block when the forward was cut in blocks."""
    with blas.single_blas():
        if "chunks" not in cache:
            return _rnn_backward(mode, cache, dout, dstates, num_layers, bidirectional)
        res = _parallel.run([
            lambda c=c, a=a, b=b: _rnn_backward(
                mode, c, dout[:, a:b], [g if g is None else g[:, a:b] for g in dstates],
                num_layers, bidirectional)
            for c, (a, b) in zip(cache["chunks"], cache["parts"])])
    return join_backward(res)


def _rnn_forward(mode, x, params, states, num_layers, bidirectional, masks, keep, proj):
    """Run the fused RNN. x (T, N, C); params the flat vector; states [h0] or [h0, c0], each
    (L*D, N, H) (h0 (L*D, N, P) with an LSTM projection of size P). Dropout with
    probability ``p`` (masks from ``rng``) applies to the outputs of every layer but the
    last when ``rng`` is given. Returns (out (T, N, D*H or D*P), final states list, cache or
    None)."""
    T, N, C = x.shape
    H = states[-1].shape[-1]
    R = states[0].shape[-1]  # width of each direction's output
    D = 2 if bidirectional else 1
    dt = _work_dtype(x.dtype)
    table, _ = layout(mode, H, num_layers, bidirectional, C, proj)
    vec = params.astype(dt, copy=False)
    inp = x.astype(dt, copy=False)
    finals = [np.empty(s.shape, dt) for s in states]
    layers = []
    for li in range(num_layers):
        out = np.empty((T, N, D * R), dt)
        dirs = []
        for d in range(D):
            Wi, Wh, bi, bh, Wr = _views(vec, table, li, d)
            x2 = inp.reshape(T * N, -1)
            with _gemm_threads(x2.size * Wi.shape[0]):  # all steps at once: large
                xi = (x2 @ Wi.T).reshape(T, N, -1)
            xi += bi
            if d == 1:
                xi = xi[::-1]
            k = li * D + d
            c0 = states[1][k].astype(dt, copy=False) if mode == "lstm" else None
            ys, fin, cache = _run_direction(mode, xi, Wh, bh, states[0][k].astype(dt),
                                            c0, keep, Wr)
            out[:, :, d * R:(d + 1) * R] = ys if d == 0 else ys[::-1]
            for j, v in enumerate(fin):
                finals[j][k] = v
            dirs.append(cache)
        mask = masks[li]
        layers.append({"inp": inp, "dirs": dirs, "mask": mask})
        inp = out * mask if mask is not None else out
    cache = {"layers": layers, "table": table, "vec": vec, "x_dtype": x.dtype} if keep else None
    return inp.astype(x.dtype, copy=False), [f.astype(x.dtype, copy=False) for f in finals], cache


def _rnn_backward(mode, cache, dout, dstates, num_layers, bidirectional):
    """Gradients (dx, dparams, [dh0(, dc0)]) from a ``keep=True`` forward's cache, the output
    gradient (T, N, D*H) and the final-state gradients (None reads as zero)."""
    layers, table, vec = cache["layers"], cache["table"], cache["vec"]
    dt = vec.dtype
    D = 2 if bidirectional else 1
    T, N = dout.shape[:2]
    R = dout.shape[-1] // D  # each direction's output width (P with a projection)
    H = table[(0, 0, "h2h_weight")][1][0] // GATES[mode]
    L = num_layers
    n_st = 2 if mode == "lstm" else 1
    dvec = np.zeros_like(vec)
    dst = [np.zeros((L * D, N, R if j == 0 else H), dt) for j in range(n_st)]
    dy = dout.astype(dt, copy=False)
    for li in range(L - 1, -1, -1):
        layer = layers[li]
        inp = layer["inp"]
        din = np.zeros(inp.shape, dt)
        for d in range(D):
            k = li * D + d
            Wi, Wh, _, _, Wr = _views(vec, table, li, d)
            dWi, dWh, dbi, dbh, dWr = _views(dvec, table, li, d)
            cache_d = layer["dirs"][d]
            dys = dy[:, :, d * R:(d + 1) * R]
            if d == 1:
                dys = dys[::-1]
            fin = [np.zeros(dst[j].shape[1:], dt) if g is None else g[k].astype(dt)
                   for j, g in enumerate(dstates)]
            dxi, dhh, d0 = _back_direction(mode, cache_d, np.ascontiguousarray(dys), fin[0],
                                           fin[1] if mode == "lstm" else None, Wh, Wr, dWr)
            for j, v in enumerate(d0):
                dst[j][k] = v
            hprev = cache_d["hs"][:T].reshape(T * N, R)
            dhh2 = dhh.reshape(T * N, -1)
            # the weight gradients sum over all steps in one GEMM each: large ones get
            # every BLAS thread the policy allows
            with _gemm_threads(dhh2.size * R):
                dWh += dhh2.T @ hprev
            dbh += dhh.sum(axis=(0, 1))
            if d == 1:
                dxi = dxi[::-1]
            dxi2 = dxi.reshape(T * N, -1)
            with _gemm_threads(dxi2.size * Wi.shape[1]):
                dWi += dxi2.T @ inp.reshape(T * N, -1)
                din += (dxi2 @ Wi).reshape(inp.shape)
            dbi += dxi2.sum(axis=0)
        if li > 0:
            mask = layers[li - 1]["mask"]
            dy = din * mask if mask is not None else din
        else:
            dy = din
    xdt = cache["x_dtype"]
    return (dy.astype(xdt, copy=False), dvec.astype(xdt, copy=False),
            [s.astype(xdt, copy=False) for s in dst])
