"""Spatial transformer family: GridGenerator, BilinearSampler and SpatialTransformer
(MXNet's affine/warp sampling grids and bilinear sampling with zero padding)."""
from __future__ import annotations

import numpy as np

from ...kernels import spatial as ks
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _target(a, op):
    t = tuple(a.target_shape)
    require(len(t) == 2, op, f"target_shape must have 2 dims, got {t}")
    return t


# ----------------------------------------------------------------------------- GridGenerator
def _gg_check(op, a):
    _target(a, op)
    if a.transform_type == "affine":
        require(all(d > 0 for d in a.target_shape), op,
                f"affine needs a positive target_shape, got {tuple(a.target_shape)}")


_GG = Checked(_gg_check,
              transform_type=Field("str", choices=("affine", "warp"),
                                   doc="affine: data (N, 6); warp: data is a flow (N, 2, H, W)"),
              target_shape=Field("shape", (0, 0), doc="(H, W) of the grid (affine)"))


def _gg_shape(a, ins, outs):
    x = ins[0]
    if a.transform_type == "affine":
        rules.set_shape(outs, 0, (None if x is None else x[0], 2) + tuple(a.target_shape),
                        "output")
        if x is not None:
            rules.set_shape(ins, 0, (x[0], 6))
        elif outs[0] is not None and outs[0][0] is not None:
            rules.set_shape(ins, 0, (outs[0][0], 6))
    else:
        s = x if x is not None else outs[0]
        if s is not None:
            if len(s) != 4 or s[1] not in (None, 2):
                # a warp field is (N, 2, H, W): x and y offsets per pixel
                raise rules.Conflict("shape", 0, "input", "(N, 2, H, W) flow field", s)
            rules.set_shape(ins, 0, s)
            rules.set_shape(outs, 0, s, "output")
    return ins, outs


def _warp_scale(h, w, dtype):
    return np.array([(w - 1) / 2, (h - 1) / 2], dtype).reshape(1, 2, 1, 1)


def _gg_fwd(a, xs):
    x = xs[0]
    if a.transform_type == "affine":
        return (ks.affine_grid(x, *a.target_shape),)
    _, _, h, w = x.shape
    px = np.arange(w, dtype=x.dtype).reshape(1, w)
    py = np.arange(h, dtype=x.dtype).reshape(h, 1)
    base = np.stack(np.broadcast_arrays(px, py))[None]
    return ((x + base) / _warp_scale(h, w, x.dtype) - 1,)


def _gg_bwd(a, xs):
    g = xs[0]
    if a.transform_type == "affine":
        return (ks.affine_grid_backward(g, *a.target_shape),)
    _, _, h, w = g.shape
    return (g / _warp_scale(h, w, g.dtype),)


def _gg_bwd_shape(a, ins, outs):
    g = ins[0]
    if g is not None:
        rules.set_shape(outs, 0, (g[0], 6) if a.transform_type == "affine" else g, "output")
    return ins, outs


register(OpDef(
    "GridGenerator", params=_GG, dispatch=(Dispatch((DNS,), (DNS,), _gg_fwd),),
    infer_shape=_gg_shape, infer_type=rules.same_type,
    gradient=lambda node, og: multi_bw("_backward_GridGenerator", [og[0]], node, "backward",
                                       1, **kept(node)),
    doc="""Generate a sampling grid for BilinearSampler.

    ``affine``: data (N, 6) holds 2x3 matrices mapping the target's normalised coordinates
    (-1..1) to the source's; the grid is (N, 2, H, W) for ``target_shape`` (H, W).
    ``warp``: data (N, 2, H, W) is a flow in pixels; the grid is (pixel + flow), normalised.

    Parameters
    ----------
    data : Symbol or NDArray
    transform_type : {'affine', 'warp'}
    target_shape : tuple of 2 int, default (0, 0)

    Examples
    --------
    >>> import sparsym as mx
    >>> g = mx.nd.GridGenerator(mx.nd.array([[1, 0, 0, 0, 1, 0]]), transform_type='affine',
    ...                         target_shape=(2, 3))
    >>> g[0, 0].asnumpy().tolist()
    [[-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]]
    """))
register(OpDef(
    "_backward_GridGenerator", params=_GG, inputs=("ograd",),
    dispatch=(Dispatch((DNS,), (DNS,), _gg_bwd),),
    infer_shape=_gg_bwd_shape, infer_type=rules.same_type))


# ----------------------------------------------------------------------------- BilinearSampler
_BS = Checked(lambda op, a: None,
              cudnn_off=Field("bool_or_none", None, doc="ignored (no cuDNN)"))


def _bs_shape(a, ins, outs):
    d, g = ins
    if d is not None and g is not None:
        rules.set_shape(ins, 1, (d[0], 2, g[2], g[3]))
        rules.set_shape(outs, 0, (d[0], d[1], g[2], g[3]), "output")
    return ins, outs


def _bs_grad(node, og):
    return multi_bw("_backward_BilinearSampler", [og[0]] + list(node.inputs), node,
                    "backward", 2, **kept(node))


register(OpDef(
    "BilinearSampler", params=_BS, inputs=("data", "grid"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (ks.bilinear_sample(*xs),)),),
    infer_shape=_bs_shape, infer_type=rules.same_type, gradient=_bs_grad,
    doc="""Sample data (N, C, H, W) bilinearly at a grid (N, 2, Ho, Wo) of normalised
    coordinates (channel 0: x, channel 1: y; -1 and 1 are the first and last pixels).
    Points outside the input read as zero. Output (N, C, Ho, Wo).

    Parameters
    ----------
    data : Symbol or NDArray
    grid : Symbol or NDArray
    cudnn_off : bool, optional (ignored)

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[[[0., 1.], [2., 3.]]]])
    >>> mx.nd.BilinearSampler(x, mx.nd.zeros((1, 2, 1, 1))).asnumpy().ravel().tolist()
    [1.5]
    """))
register(OpDef(
    "_backward_BilinearSampler", params=_BS, inputs=("ograd", "data", "grid"), num_outputs=2,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), lambda a, xs: ks.bilinear_sample_backward(*xs)),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))


# ----------------------------------------------------------------------------- SpatialTransformer
def _st_check(op, a):
    t = _target(a, op)
    require(all(d > 0 for d in t), op, f"target_shape must be positive, got {t}")


_ST = Checked(_st_check,
              target_shape=Field("shape", (0, 0), doc="(H, W) of the output"),
              transform_type=Field("str", choices=("affine",)),
              sampler_type=Field("str", choices=("bilinear",)),
              cudnn_off=Field("bool_or_none", None, doc="ignored (no cuDNN)"))


def _st_shape(a, ins, outs):
    d = ins[0]
    if d is not None:
        rules.set_shape(ins, 1, (d[0], 6))
        rules.set_shape(outs, 0, (d[0], d[1]) + tuple(a.target_shape), "output")
    return ins, outs


def _st_fwd(a, xs):
    data, loc = xs
    return (ks.bilinear_sample(data, ks.affine_grid(loc, *a.target_shape)),)


def _st_bwd(a, xs):
    g, data, loc = xs
    grid = ks.affine_grid(loc, *a.target_shape)
    ddata, dgrid = ks.bilinear_sample_backward(g, data, grid)
    return ddata, ks.affine_grid_backward(dgrid, *a.target_shape).astype(loc.dtype)


register(OpDef(
    "SpatialTransformer", params=_ST, inputs=("data", "loc"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _st_fwd),), infer_shape=_st_shape,
    infer_type=rules.same_type,
    gradient=lambda node, og: multi_bw("_backward_SpatialTransformer",
                                       [og[0]] + list(node.inputs), node, "backward", 2,
                                       **kept(node)),
    doc="""Spatial transformer (Jaderberg et al.): an affine grid from ``loc`` (N, 6) and
    bilinear sampling of data (N, C, H, W), giving (N, C) + target_shape.

    Parameters
    ----------
    data : Symbol or NDArray
    loc : Symbol or NDArray
    target_shape : tuple of 2 int
    transform_type : {'affine'}
    sampler_type : {'bilinear'}
    cudnn_off : bool, optional (ignored)

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> mx.nd.SpatialTransformer(x, mx.nd.array([[1, 0, 0, 0, 1, 0]]), target_shape=(4, 4),
    ...     transform_type='affine', sampler_type='bilinear').asnumpy().ravel()[:4].tolist()
    [0.0, 1.0, 2.0, 3.0]
    """))
register(OpDef(
    "_backward_SpatialTransformer", params=_ST, inputs=("ograd", "data", "loc"),
    num_outputs=2, dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _st_bwd),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))
