"""The four AdamW update operators with rescale_grad 0, inf, nan, 0.5 and -0.5 given as an
NDArray (AMP's loss scaler passes 0 or inf to skip a step): shared by
test_adamw_rescale_skip.py and make_mxnet_adamw_fixtures.py (run on MXNet 1.9.1). ``mx``
is the engine module."""
import numpy as np

RESCALES = (0.0, float("inf"), float("nan"), 0.5, -0.5)
VARIANTS = ("adamw", "mp_adamw", "multi_adamw", "multi_mp_adamw")


def inputs():
    rng = np.random.RandomState(0)
    w, g = rng.randn(2, 3).astype(np.float32), rng.randn(2, 3).astype(np.float32)
    m, v = (rng.rand(2, 3).astype(np.float32) * 0.1 for _ in range(2))
    return w, g, m, v


def run(mx, variant, rescale):
    """One update with ``out=weight``; returns (weight as float32, mean, var) after it."""
    w0, g0, m0, v0 = inputs()
    mp = "mp" in variant
    dt = "float16" if mp else "float32"
    w, g = mx.nd.array(w0, dtype=dt), mx.nd.array(g0, dtype=dt)
    m, v, w32 = mx.nd.array(m0), mx.nd.array(v0), mx.nd.array(w0)
    rs = mx.nd.array([rescale])
    kw = dict(beta1=0.9, beta2=0.999, epsilon=1e-8)
    c = mx.nd.contrib
    if variant == "adamw":
        c.adamw_update(w, g, m, v, rs, lr=0.1, eta=1.0, wd=0.01, out=w, **kw)
    elif variant == "mp_adamw":
        c.mp_adamw_update(w, g, m, v, w32, rs, lr=0.1, eta=1.0, wd=0.01, out=w, **kw)
    elif variant == "multi_adamw":
        c.multi_adamw_update([w], [g], [m], [v], rs, lrs=[0.1], wds=[0.01], etas=[1.0],
                             out=[w], **kw)
    else:
        c.multi_mp_adamw_update([w], [g], [m], [v], [w32], rs, lrs=[0.1], wds=[0.01],
                                etas=[1.0], out=[w], **kw)
    return (w.astype("float32").asnumpy(), m.asnumpy(), v.asnumpy())
