"""MXNet's contrib fft, ifft and count_sketch, and the _set_value fill.

MXNet 1.9.1 has GPU kernels only for fft, ifft and count_sketch ("only available on GPU");
here they run on the CPU (kernels/signal.py). fft and ifft are each other's adjoint, so each
one's gradient is the other op applied to the head gradient.
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ...kernels import signal as ks
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_FFT = Params(compute_size=Field("int", 128, doc="rows per batched transform (MXNet's "
                                                 "workspace knob; ignored)"))


def _fft_shape(scale_num, scale_den, what):
    def rule(attrs, ins, outs):
        x = ins[0]
        if x is not None:
            if len(x) < 1 or (x[-1] * scale_num) % scale_den:
                raise ShapeError(f"{what}: the last axis must have "
                                 f"{'an even' if scale_den == 2 else 'a'} length, got shape {x}")
            rules.set_shape(outs, 0, tuple(x[:-1]) + (x[-1] * scale_num // scale_den,),
                            "output")
        elif outs[0] is not None:
            o = outs[0]
            rules.set_shape(ins, 0, tuple(o[:-1]) + (o[-1] * scale_den // scale_num,))
        return ins, outs
    return rule


def _cast(fn):
    return lambda a, xs: (fn(xs[0]).astype(xs[0].dtype),)


for _name, _fn, _other, _num, _den, _doc in (
        ("_contrib_fft", ks.fft, "_contrib_ifft", 2, 1,
         """1-D FFT of each row (last axis) of real data: (..., d) -> (..., 2d), the complex
    result interleaved [re0, im0, re1, im1, ...]. MXNet 1.9.1 runs it on GPU only; here it
    runs on the CPU (NumPy)."""),
        ("_contrib_ifft", ks.ifft, "_contrib_fft", 1, 2,
         """1-D inverse FFT of each row of interleaved complex data: (..., 2d) -> (..., d),
    the real part, unnormalised (no 1/d factor, as cuFFT and MXNet). MXNet 1.9.1 runs it on
    GPU only; here it runs on the CPU (NumPy).""")):
    register(OpDef(
        _name, params=_FFT, dispatch=(Dispatch((DNS,), (DNS,), _cast(_fn)),),
        infer_shape=_fft_shape(_num, _den, _name[len("_contrib_"):]),
        gradient=lambda node, og, _o=_other: [bw(_o, [og[0]], node, "backward", **kept(node))],
        aliases=(_name[len("_contrib_"):],), doc=_doc))


# ----------------------------------------------------------------------------- count_sketch
_SKETCH = Params(out_dim=Field("int", doc="the output dimension k"),
                 processing_batch_size=Field("int", 32, doc="rows per batch (ignored)"))


def _sketch_shape(attrs, ins, outs):
    x = ins[0]
    if x is not None:
        rules.set_shape(ins, 1, (1, x[-1]))
        rules.set_shape(ins, 2, (1, x[-1]))
        rules.set_shape(outs, 0, tuple(x[:-1]) + (attrs.out_dim,), "output")
    return ins, outs


def _sketch(a, xs):
    x, h, s = xs
    return (ks.count_sketch(x, h, s, a.out_dim).astype(x.dtype),)


def _sketch_bwd(a, xs):
    g, x, h, s = xs
    return (ks.count_sketch_grad(g, h, s, x.shape[-1]).astype(x.dtype),)


register(OpDef(
    "_backward_contrib_count_sketch", params=_SKETCH, inputs=("ograd", "data", "h", "s"),
    dispatch=(Dispatch((DNS,) * 4, (DNS,), _sketch_bwd),),
    infer_shape=lambda a, ins, outs: (ins, [ins[1] if outs[0] is None else outs[0]]),
    infer_type=lambda a, ins, outs: (ins, [ins[1] if outs[0] is None else outs[0]])))
register(OpDef(
    "_contrib_count_sketch", params=_SKETCH, inputs=("data", "h", "s"),
    dispatch=(Dispatch((DNS,) * 3, (DNS,), _sketch),), infer_shape=_sketch_shape,
    infer_type=lambda a, ins, outs: (ins, [ins[0] if outs[0] is None else outs[0]]),
    gradient=lambda node, og: [bw("_backward_contrib_count_sketch",
                                  [og[0]] + list(node.inputs), node, "backward",
                                  **kept(node)), None, None],
    aliases=("count_sketch",),
    doc="""CountSketch: map (..., d) data to (..., out_dim) with ``out[..., h[j]] += data[...,
    j] * s[j]``; ``h`` (1, d) holds hash indices in [0, out_dim), ``s`` (1, d) signs +-1.
    MXNet 1.9.1 runs it on GPU only; here it runs on the CPU (a SciPy sparse product).

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    >>> mx.nd.contrib.count_sketch(x, mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]]),
    ...                            out_dim=5).asnumpy()
    array([[ 1.2,  0. ,  0. , -2.5,  3.4],
           [ 3.2,  0. ,  0. , -5.7,  6.6]], dtype=float32)
    """))


# ----------------------------------------------------------------------------- _set_value
register(OpDef(
    "_set_value", params=Params(src=Field("float", doc="the value")), inputs=(),
    dispatch=(Dispatch((), (DNS,), lambda a, xs: (np.array(a.src, np.float32),)),),
    infer_shape=lambda a, ins, outs: (ins, [() if outs[0] is None else outs[0]]),
    infer_type=lambda a, ins, outs: (ins, [np.dtype(np.float32) if outs[0] is None
                                           else outs[0]]),
    doc="""Fill ``out`` with the scalar ``src`` (MXNet's internal ``out[:] = value``): call
    it with ``out=``; without one the result is the 0-d array ``src``."""))
