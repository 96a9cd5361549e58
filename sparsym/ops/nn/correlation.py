"""Correlation (FlowNet): patch comparison of two feature maps over a grid of displacements,
with gradients for both inputs. Kernels in kernels/correlation.py."""
from __future__ import annotations

from ...base import ShapeError
from ...kernels import correlation as kcorr
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    for name in ("kernel_size", "max_displacement", "stride1", "stride2", "pad_size"):
        require(a[name] >= 0, op, f"{name} must be non-negative, got {a[name]}")
    require(a.kernel_size % 2 == 1, op,
            f"kernel size should be odd number, got kernel_size={a.kernel_size}")
    require(a.stride1 >= 1 and a.stride2 >= 1, op,
            f"stride1 and stride2 must be positive, got {a.stride1}, {a.stride2}")


_PARAMS = Checked(
    _check,
    kernel_size=Field("int", 1, doc="patch size (odd)"),
    max_displacement=Field("int", 1, doc="largest displacement compared, in pixels"),
    stride1=Field("int", 1, doc="stride over data1's positions"),
    stride2=Field("int", 1, doc="stride of the displacements within the neighbourhood"),
    pad_size=Field("int", 0, doc="zero padding of both inputs"),
    is_multiply=Field("bool", True, doc="product (True) or absolute difference (False)"))


def _shape(a, ins, outs):
    s = ins[0] if ins[0] is not None else ins[1]
    if s is None:
        return ins, outs
    if len(s) != 4:
        raise rules.Conflict("shape", 0, "input", "4-D data (N, C, H, W)", s)
    rules.set_shape(ins, 0, s)
    rules.set_shape(ins, 1, s)
    n, _, h, w = ins[0]
    if h is None or w is None:
        return ins, outs
    th, tw, _, grid = kcorr.correlation_geometry(h, w, a.kernel_size, a.max_displacement,
                                                 a.stride1, a.stride2, a.pad_size)
    if th < 1 or tw < 1:
        raise ShapeError(
            "operator Correlation: Correlation cannot be done with current settings. "
            f"Neighborhood and kernel don't fit in blob: data ({h}, {w}) padded by "
            f"{a.pad_size} is smaller than 2 * (max_displacement {a.max_displacement} + "
            f"kernel radius {(a.kernel_size - 1) // 2}) + 1")
    rules.set_shape(outs, 0, (n, grid * grid, th, tw), "output")
    return ins, outs


def _fwd(a, xs):
    return (kcorr.correlation_forward(a, xs[0], xs[1]),)


def _bwd(a, xs):
    return kcorr.correlation_backward(a, xs[0], xs[1], xs[2])


register(OpDef(
    "Correlation", params=_PARAMS, inputs=("data1", "data2"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _fwd),), infer_shape=_shape, infer_type=rules.same_type,
    gradient=lambda node, og: multi_bw("_backward_Correlation", [og[0]] + list(node.inputs),
                                       node, "backward", 2, **kept(node)),
    doc="""Correlation of two feature maps (FlowNet): for each position of data1 (every
    ``stride1``) and each displacement on a (2R+1) x (2R+1) grid (R = max_displacement //
    stride2, steps of ``stride2``), the channel-summed product (``is_multiply``) or
    absolute difference of the k x k patches, divided by k*k*C.

    Output (N, (2R+1)**2, H', W') with H' = ceil((H + 2*pad_size - 2*border) / stride1),
    border = max_displacement + (kernel_size - 1) // 2; channel ``p*(2R+1) + o`` holds the
    displacement ((p - R)*stride2, (o - R)*stride2) in (y, x).

    Parameters
    ----------
    data1, data2 : Symbol or NDArray
        (N, C, H, W), the same shape.
    kernel_size : int, default 1 (odd)
    max_displacement : int, default 1
    stride1, stride2 : int, default 1
    pad_size : int, default 0
    is_multiply : bool, default True

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.ones((1, 2, 3, 3))
    >>> mx.nd.Correlation(x, x, max_displacement=1, pad_size=1).shape
    (1, 9, 3, 3)
    """))
register(OpDef(
    "_backward_Correlation", params=_PARAMS, inputs=("ograd", "data1", "data2"), num_outputs=2,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _bwd),), infer_shape=rules.grads_like_inputs(1),
    infer_type=rules.grads_like_inputs_type(1)))
