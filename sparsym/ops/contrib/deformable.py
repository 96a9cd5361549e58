"""Deformable convolutions: _contrib_DeformableConvolution (DCN v1) and
_contrib_ModulatedDeformableConvolution (DCN v2, with a modulation mask), 2-D, NCHW, with
their gradients for data, offsets, mask, weight and bias (kernels/deformable.py)."""
from __future__ import annotations

from ... import storage as st
from ...kernels import conv as kconv
from ...kernels import deformable as kdef
from ..core import rules
from ..core.grad import bw_node
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register
from ..nn.conv import _conv_fields

_LAYOUTS = (None, "NCW", "NCHW", "NCDHW")


def _check(op, a):
    require(len(a.kernel) == 2, op, f"kernel must have 2 dims (kh, kw), got {a.kernel}; "
                                    "only 2-D deformable convolution is supported")
    require(all(k > 0 for k in a.kernel), op, f"kernel dims must be positive, got {a.kernel}")
    for name, lo in (("stride", 1), ("dilate", 1), ("pad", 0)):
        v = a[name]
        require(not v or len(v) == 2, op, f"{name}={v} must have 2 entries like the kernel")
        require(all(d >= lo for d in v), op, f"{name} entries must be >= {lo}, got {v}")
    for name in ("num_filter", "num_group", "num_deformable_group"):
        require(a[name] >= 1, op, f"{name} must be positive, got {a[name]}")
    require(a.layout in (None, "NCHW"), op, f"layout {a.layout} is not supported (NCHW only)")


def _fields(modulated):
    """Convolution's fields (ops/nn/conv.py) in MXNet's order for these ops, with the
    deformable group count (and v2's im2col_step)."""
    conv = _conv_fields(1024, False)
    out = {k: conv[k] for k in ("kernel", "stride", "dilate", "pad", "num_filter",
                                "num_group")}
    out["num_deformable_group"] = Field("int", 1, doc="number of offset groups")
    out.update(workspace=conv["workspace"], no_bias=conv["no_bias"])
    if modulated:
        out["im2col_step"] = Field("int", 64, doc="ignored (MXNet's batch chunk)")
    out["layout"] = Field("str_or_none", None, choices=_LAYOUTS, doc="NCHW only")
    return out


def _geom(a):
    two = lambda v, d: tuple(v) if v else (d, d)  # noqa: E731
    return (tuple(a.kernel), two(a.stride, 1), two(a.pad, 0), two(a.dilate, 1))


def _shape_rule(modulated):
    def rule(a, ins, outs):
        k = a.kernel[0] * a.kernel[1]
        dg, f, g = a.num_deformable_group, a.num_filter, a.num_group
        w_at = 3 if modulated else 2
        if not a.no_bias:
            rules.set_shape(ins, w_at + 1, (f,))
        data = ins[0]
        if data is None:
            return ins, outs
        if len(data) != 4:
            raise rules.Conflict("shape", 0, "input", "4-D data (N, C, H, W)", data)
        n, c, h, w = data
        if c % g or c % dg:
            raise rules.Conflict("shape", 0, "input", f"channels divisible by num_group={g} "
                                 f"and num_deformable_group={dg}", data)
        rules.set_shape(ins, w_at, (f, c // g) + tuple(a.kernel))
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _geom(a)
        ho = kconv.conv_out_size(h, kh, sh, ph, dh)
        wo = kconv.conv_out_size(w, kw, sw, pw, dw)
        if ho <= 0 or wo <= 0:
            raise rules.Conflict("shape", 0, "input", f"spatial dims of at least the dilated "
                                 f"kernel {a.kernel}", data)
        rules.set_shape(ins, 1, (n, 2 * dg * k, ho, wo))
        if modulated:
            rules.set_shape(ins, 2, (n, dg * k, ho, wo))
        rules.set_shape(outs, 0, (n, f, ho, wo), "output")
        return ins, outs
    return rule


def _split(a, xs, modulated):
    xs = [st.todense(x) for x in xs]
    x, off = xs[0], xs[1]
    mask = xs[2] if modulated else None
    w_at = 3 if modulated else 2
    bias = None if a.no_bias else xs[w_at + 1]
    return x, off, mask, xs[w_at], bias


def _forward(modulated):
    def kernel(a, xs):
        x, off, mask, weight, bias = _split(a, xs, modulated)
        return (kdef.deform_conv_forward(x, off, mask, weight, bias, _geom(a), a.num_group),)
    return kernel


def _backward(modulated):
    def kernel(a, xs):
        x, off, mask, weight, bias = _split(a, xs[1:], modulated)
        gx, goff, gmask, gw, gb = kdef.deform_conv_backward(st.todense(xs[0]), x, off, mask,
                                                            weight, _geom(a), a.num_group)
        return tuple(v for v in (gx, goff, gmask, gw, None if a.no_bias else gb)
                     if v is not None)
    return kernel


def _inputs(modulated):
    def names(a):
        base = ("data", "offset", "mask", "weight") if modulated else \
            ("data", "offset", "weight")
        return base if a.no_bias else base + ("bias",)
    return names


def _gradient(bwd_name):
    def gradient(node, og):
        n = len(node.inputs)
        b = bw_node(bwd_name, [og[0]] + list(node.inputs), node, "backward",
                    **dict(node.params))
        return [(b, i) for i in range(n)]
    return gradient




def _register(name, modulated, doc):
    params = Checked(_check, **_fields(modulated))
    names = _inputs(modulated)
    register(OpDef(
        name, params=params, inputs=names, dispatch=(Dispatch((DNS, "..."), (DNS,),
                                                              _forward(modulated)),),
        infer_shape=_shape_rule(modulated), infer_type=rules.first_input_type,
        gradient=_gradient(f"_backward{name}"), doc=doc))
    register(OpDef(
        f"_backward{name}", params=params, inputs=lambda a: ("ograd",) + names(a),
        num_outputs=lambda a: len(names(a)), output_names=lambda a: tuple(
            f"{n}_grad" for n in names(a)),
        dispatch=(Dispatch((DNS, "..."), (DNS,), _backward(modulated)),),
        infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))


_register("_contrib_DeformableConvolution", False, """Deformable 2-D convolution (DCN v1).

    Every kernel tap samples ``data`` at its regular position moved by ``offset``
    (N, 2*num_deformable_group*kh*kw, Ho, Wo: (dy, dx) per tap), with bilinear
    interpolation, before the convolution with ``weight`` (F, C/num_group, kh, kw).

    Parameters
    ----------
    data, offset, weight, bias : NDArray or Symbol
    kernel, stride, dilate, pad : tuple of 2 ints
    num_filter, num_group, num_deformable_group : int
    no_bias : bool
    """)
_register("_contrib_ModulatedDeformableConvolution", True, """Modulated deformable 2-D
    convolution (DCN v2): as DeformableConvolution, each sample also scaled by ``mask``
    (N, num_deformable_group*kh*kw, Ho, Wo).

    Parameters
    ----------
    data, offset, mask, weight, bias : NDArray or Symbol
    kernel, stride, dilate, pad : tuple of 2 ints
    num_filter, num_group, num_deformable_group : int
    no_bias : bool
    """)
