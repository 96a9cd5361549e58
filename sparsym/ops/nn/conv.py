"""Convolution (1-D to 3-D), Deconvolution (1-D and 2-D) and Pooling on the im2col + GEMM
kernels."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ...kernels import conv as kconv
from ...kernels import conv3d as kconv3d
from ...kernels import onednn as dnn
from ...kernels import pool as kpool
from ...kernels.onednn import conv as dconv
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register
from . import _onednn_layers as _dnn
from .activation import POST_OPS

_LAYOUTS = (None, "NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")


def _tup(v, nd, default):
    return tuple(v) if v else (default,) * nd


def _geom_check(op, a, deconv=False):
    k = a.kernel
    if deconv:
        require(len(k) in (1, 2), op, f"kernel must have 1 or 2 dims (1-D or 2-D), got {k}"
                + ("; 3-D deconvolution is not supported" if len(k) == 3 else ""))
    require(len(k) in (1, 2, 3), op, f"kernel must have 1, 2 or 3 dims, got {k}")
    require(all(d is not None and d > 0 for d in k), op, f"kernel dims must be positive, got {k}")
    nd = len(k)
    for name, lo in (("stride", 1), ("dilate", 1), ("pad", 0)) + ((("adj", 0),) if deconv else ()):
        v = a[name]
        require(not v or len(v) == nd, op, f"{name}={v} must have {nd} entries like kernel={k}")
        require(all(d >= lo for d in v), op, f"{name} entries must be >= {lo}, got {v}")
    require(a.num_filter >= 1, op, f"num_filter must be positive, got {a.num_filter}")
    require(a.num_group >= 1, op, f"num_group must be positive, got {a.num_group}")
    if a.layout is not None:
        want = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}[nd]
        require(a.layout in want, op, f"layout {a.layout} does not fit a {nd}-D kernel")


def _conv_fields(workspace, no_bias, deconv=False):
    """Convolution's (or Deconvolution's) fields in MXNet's declaration order."""
    extra = dict(adj=Field("shape", (), doc="extra output size per dim"),
                 target_shape=Field("shape", (), doc="output spatial shape (overrides pad/adj)")
                 ) if deconv else {}
    return dict(
        kernel=Field("shape", doc="kernel size (kh, kw) or (k,)"),
        stride=Field("shape", (), doc="stride, default 1 per dim"),
        dilate=Field("shape", (), doc="dilation, default 1 per dim"),
        pad=Field("shape", (), doc="zero padding, default 0 per dim"),
        **extra,
        num_filter=Field("int", doc="number of output channels"),
        num_group=Field("int", 1, doc="number of groups"),
        workspace=Field("int", workspace, doc="ignored (MXNet's workspace MB)"),
        no_bias=Field("bool", no_bias, doc="omit the bias"),
        cudnn_tune=Field("str_or_none", None,
                         choices=(None, "fastest", "limited_workspace", "off")),
        cudnn_off=Field("bool", False, doc="ignored (no cuDNN)"),
        layout=Field("str_or_none", None, choices=_LAYOUTS, doc="NCW/NCHW (default) or NWC/NHWC"))


_CONV = Checked(lambda op, a: _geom_check(op, a), **_conv_fields(1024, False))
_DECONV = Checked(lambda op, a: (_geom_check(op, a, True), require(
    a.layout in (None, "NCW", "NCHW"), op, f"layout {a.layout} is not supported")),
    **_conv_fields(512, True, deconv=True))


def _inputs(a):
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def _channel_last(a):
    return a.layout in ("NWC", "NHWC", "NDHWC")


def _split(a, shape):
    """(batch, channels, spatial) of a data shape under the layout."""
    if _channel_last(a):
        return shape[0], shape[-1], tuple(shape[1:-1])
    return shape[0], shape[1], tuple(shape[2:])


def _join(a, n, c, sp):
    return (n,) + tuple(sp) + (c,) if _channel_last(a) else (n, c) + tuple(sp)


def _bias_and_data(attrs, ins):
    """Set the bias shape (F,); return the data shape once known, checked against the kernel."""
    nd = len(attrs.kernel)
    if not attrs.no_bias:
        rules.set_shape(ins, 2, (attrs.num_filter,))
    data = ins[0]
    if data is not None and len(data) != nd + 2:
        raise rules.Conflict("shape", 0, "input", f"{nd + 2}-D data for kernel {attrs.kernel}",
                             data)
    return data


def conv_shape(attrs, ins, outs):
    """Weight (F, C/g, *k) (channel-last: (F, *k, C/g)), bias (F,), output (N, F, *out)."""
    nd, f, g = len(attrs.kernel), attrs.num_filter, attrs.num_group
    data = _bias_and_data(attrs, ins)
    if data is None:
        return ins, outs
    n, c, sp = _split(attrs, data)
    if c is not None and c % g:
        raise rules.Conflict("shape", 0, "input", f"channels divisible by num_group={g}", data)
    cg = None if c is None else c // g
    wshape = (f,) + tuple(attrs.kernel) + (cg,) if _channel_last(attrs) else \
        (f, cg) + tuple(attrs.kernel)
    rules.set_shape(ins, 1, wshape)
    s, p, d = _tup(attrs.stride, nd, 1), _tup(attrs.pad, nd, 0), _tup(attrs.dilate, nd, 1)
    osp = []
    for i in range(nd):
        if sp[i] is None:
            osp.append(None)
            continue
        o = kconv.conv_out_size(sp[i], attrs.kernel[i], s[i], p[i], d[i])
        if o <= 0:
            raise rules.Conflict("shape", 0, "input",
                                 f"spatial dims of at least the dilated kernel {attrs.kernel}",
                                 data)
        osp.append(o)
    rules.set_shape(outs, 0, _join(attrs, n, f, osp), "output")
    if outs[0] is not None and (n is None or None in sp):
        # backward from a known output (MXNet): the batch, and at stride 1 the spatial size
        on, _, osp_known = _split(attrs, outs[0])
        isp = tuple(sp[i] if sp[i] is not None or osp_known[i] is None or s[i] != 1 else
                    osp_known[i] + d[i] * (attrs.kernel[i] - 1) - 2 * p[i] for i in range(nd))
        rules.set_shape(ins, 0, _join(attrs, n if n is not None else on, c, isp))
    return ins, outs


def _geom(a):
    nd = len(a.kernel)
    return _tup(a.stride, nd, 1), _tup(a.pad, nd, 0), _tup(a.dilate, nd, 1)


def _keep_blocked(a):
    """Inside a plan (``__blocked__``) a channel-first conv hands oneDNN's layout on."""
    return bool(a.get("__blocked__")) and not _channel_last(a)


# fused activations (``__post_ops__``, passes/fuse.py) as oneDNN eltwise post-ops
_DNN_POST = {"relu": "eltwise_relu", "sigmoid": "eltwise_logistic", "tanh": "eltwise_tanh"}


def _conv_fwd(a, xs):
    s, p, d = _geom(a)
    b = None if a.no_bias else xs[2]
    post = a.get("__post_ops__", ())
    args = (xs[0], xs[1], b, s, p, d, a.num_group, a.layout)
    # oneDNN first; Numba where it refuses
    y = dnn.attempt(dconv.conv_forward, *args, plain=not _keep_blocked(a),
                    post_ops=[("eltwise", getattr(dnn.E, _DNN_POST[o[0]]), 0.0, 0.0)
                              for o in post])
    if y is NotImplemented:
        args = tuple(dnn.to_plain(v) for v in args)
        y = (kconv3d.conv3d_forward if len(a.kernel) == 3 else kconv.conv_forward)(*args)
        for o in post:
            y = POST_OPS[o[0]](y)
    return (y if isinstance(y, dnn.Tensor) else y.astype(xs[1].dtype, copy=False),)


def _needs(a):
    """(need_data, need_weights) of a conv/deconv backward step: a gradient nothing reads
    (the plan's ``__unused__``) is skipped: the data's of a first layer, the parameters' of
    a frozen one (weight and bias come from one primitive)."""
    unused = a.get("__unused__", ())
    return 0 not in unused, 1 not in unused or (not a.no_bias and 2 not in unused)


def _conv_bwd(a, xs):
    g, x, w = xs[0], xs[1], xs[2]
    s, p, d = _geom(a)
    args = (x, w, g, s, p, d, a.num_group, not a.no_bias, a.layout)
    need_data, need_weights = _needs(a)
    res = dnn.attempt(dconv.conv_backward, *args, plain=not _keep_blocked(a),
                      need_data=need_data, need_weights=need_weights)
    if res is NotImplemented:
        args = tuple(dnn.to_plain(v) for v in args)
        res = (kconv3d.conv3d_backward if len(a.kernel) == 3 else kconv.conv_backward)(*args)
    dx, dw, db = res
    if not need_data:
        dx = None
    elif not isinstance(dx, dnn.Tensor):
        dx = dx.astype(w.dtype, copy=False)
    if not need_weights:
        return (dx, None) + (() if a.no_bias else (None,))
    out = (dx, dw.astype(w.dtype, copy=False))
    return out + (() if a.no_bias else (db.astype(w.dtype, copy=False),))


def _grad(bname):
    def grad(node, og):
        ins = [og[0], node.inputs[0], node.inputs[1]]
        return multi_bw(bname, ins, node, "backward", len(node.inputs), **kept(node))
    return grad


# the backward op takes (ograd, data, weight): the bias gradient's shape comes from num_filter
_bwd_shape = rules.grads_like_inputs(1, then=rules.bias_grad_shape("num_filter"))


_ROWS3 = (Dispatch((DNS, DNS, DNS), (DNS,), None), Dispatch((DNS, DNS), (DNS,), None))


def _rows(k, blocked=False):
    return tuple(Dispatch(r.ins, r.outs, k, blocked=blocked) for r in _ROWS3)


register(OpDef(
    "Convolution", params=_CONV, inputs=_inputs, dispatch=_rows(_conv_fwd, blocked=True),
    fuses_post_ops=True,
    folds_affine=lambda a: None if _channel_last(a) else "_fused_conv_bn",  # ops/nn/conv_bn
    infer_shape=conv_shape, infer_type=rules.same_type, gradient=_grad("_backward_Convolution"),
    doc="""1-D, 2-D or 3-D convolution (cross-correlation) with groups, stride, dilation and
    padding.

    Data NCW/NCHW/NCDHW (or NWC/NHWC/NDHWC with ``layout``); weight (num_filter,
    C/num_group, *kernel);
    bias (num_filter,). Output extent per dim: floor((x + 2p - d(k-1) - 1)/s) + 1.
    Runs im2col + BLAS GEMM (row-shift variant for stride-1 kernels).

    Parameters
    ----------
    data, weight, bias : Symbol or NDArray
    kernel : tuple of int, required (positive)
    stride, dilate, pad : tuple of int, default ()
    num_filter : int, required
    num_group : int, default 1
    no_bias : bool, default False
    layout : {None, 'NCW', 'NCHW', 'NCDHW', 'NWC', 'NHWC', 'NDHWC'}
    workspace, cudnn_tune, cudnn_off : accepted, ignored

    Examples
    --------
    >>> import sparsym as mx
    >>> c = mx.sym.Convolution(mx.sym.var('x'), kernel=(3, 3), num_filter=8, pad=(1, 1))
    >>> c.infer_shape(x=(1, 4, 5, 5))[1]
    [(1, 8, 5, 5)]
    """))
register(OpDef(
    "_backward_Convolution", params=_CONV, inputs=("ograd", "data", "weight"),
    num_outputs=lambda a: 2 if a.no_bias else 3, skips_unused_outputs=True,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _conv_bwd, blocked=True),),
    infer_shape=_bwd_shape, infer_type=rules.same_type))


# ----------------------------------------------------------------------------- Deconvolution
def _deconv_pad_adj(a, sp):
    nd = len(a.kernel)
    s, p, d = _geom(a)
    adj = _tup(a.adj, nd, 0)
    if a.target_shape and any(a.target_shape):
        p, adj = kconv._deconv_pad_adj(sp, a.kernel, s, d, p, adj, a.target_shape)
    if any(j >= k for j, k in zip(adj, s)):  # MXNet's check (the output would be cut wrong)
        raise ShapeError(f"adj {tuple(adj)} must be smaller than stride {tuple(s)} (adj(y) must "
                         "be smaller than stride)" + (f", for target_shape {a.target_shape}"
                                                       if a.target_shape and any(a.target_shape)
                                                       else ""))
    return p, adj


def deconv_shape(attrs, ins, outs):
    """Weight (C_in, F/g, *k), bias (F,), output (in-1)*s - 2p + d(k-1) + 1 + adj."""
    nd, f, g = len(attrs.kernel), attrs.num_filter, attrs.num_group
    data = _bias_and_data(attrs, ins)
    if data is None:
        return ins, outs
    if f % g:
        raise rules.Conflict("shape", 0, "input", f"num_filter divisible by num_group={g}", data)
    n, c = data[0], data[1]
    rules.set_shape(ins, 1, (c, f // g) + tuple(attrs.kernel))
    sp = tuple(data[2:])
    if any(v is None for v in sp):
        osp = [None] * nd
    else:
        try:
            p, adj = _deconv_pad_adj(attrs, sp)
        except Exception as err:
            raise rules.Conflict("shape", 0, "input", str(err), data) from None
        s, _, d = _geom(attrs)
        osp = [kconv.deconv_out_size(sp[i], attrs.kernel[i], s[i], p[i], d[i], adj[i])
               for i in range(nd)]
    rules.set_shape(outs, 0, (n, f) + tuple(osp), "output")
    if n is None and outs[0] is not None and outs[0][0] is not None:
        rules.set_shape(ins, 0, (outs[0][0],) + tuple(data[1:]))
    return ins, outs


def _deconv_args(a):
    s, p, d = _geom(a)
    ts = a.target_shape if a.target_shape and any(a.target_shape) else None
    return s, p, d, a.num_group, _tup(a.adj, len(a.kernel), 0), ts


def _deconv_fwd(a, xs):
    s, p, d, g, adj, ts = _deconv_args(a)
    b = None if a.no_bias else xs[2]
    y = NotImplemented
    if dnn.enabled():  # oneDNN takes the pad and adj that target_shape resolves to
        rp, radj = _deconv_pad_adj(a, xs[0].shape[2:])
        y = dnn.attempt(dconv.deconv_forward, xs[0], xs[1], b, s, rp, d, g, radj)
    if y is NotImplemented:
        y = kconv.deconv_forward(xs[0], xs[1], b, s, p, d, g, adj, ts)
    return (y.astype(xs[0].dtype, copy=False),)


def _deconv_bwd(a, xs):
    gy, x, w = xs[0], xs[1], xs[2]
    s, p, d, g, adj, ts = _deconv_args(a)
    need_data, need_weights = _needs(a)
    res = NotImplemented
    if dnn.enabled():
        rp, radj = _deconv_pad_adj(a, x.shape[2:])
        res = dnn.attempt(dconv.deconv_backward, x, w, gy, s, rp, d, g, radj, not a.no_bias,
                          need_data=need_data, need_weights=need_weights)
    if res is NotImplemented:
        res = kconv.deconv_backward(x, w, gy, s, p, d, g, adj, ts, not a.no_bias)
    dx, dw, db = res
    dx = dx.astype(x.dtype, copy=False) if need_data else None
    if not need_weights:
        return (dx, None) + (() if a.no_bias else (None,))
    out = (dx, dw.astype(w.dtype, copy=False))
    return out + (() if a.no_bias else (db.astype(w.dtype, copy=False),))


register(OpDef(
    "Deconvolution", params=_DECONV, inputs=_inputs, dispatch=_rows(_deconv_fwd),
    infer_shape=deconv_shape, infer_type=rules.same_type,
    gradient=_grad("_backward_Deconvolution"),
    doc="""Transposed convolution (the gradient of Convolution w.r.t. its data), 1-D or 2-D.

    Weight (C_in, num_filter/num_group, *kernel); output extent
    (x-1)*s - 2p + d(k-1) + 1 + adj, or ``target_shape`` when given. ``no_bias`` defaults
    to True as in MXNet.

    Parameters
    ----------
    data, weight, bias : Symbol or NDArray
    kernel : tuple of int, required
    stride, dilate, pad, adj, target_shape : tuple of int, default ()
    num_filter : int, required
    num_group : int, default 1
    no_bias : bool, default True
    """))
register(OpDef(
    "_backward_Deconvolution", params=_DECONV, inputs=("ograd", "data", "weight"),
    num_outputs=lambda a: 2 if a.no_bias else 3, skips_unused_outputs=True,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _deconv_bwd),),
    infer_shape=_bwd_shape, infer_type=rules.same_type))


# ----------------------------------------------------------------------------- Pooling
def _pool_check(op, a):
    if not a.global_pool:
        require(len(a.kernel) in (1, 2, 3), op,
                f"kernel must have 1, 2 or 3 dims (1-D to 3-D pooling), got {a.kernel}")
    require(all(d > 0 for d in a.kernel), op, f"kernel dims must be positive, got {a.kernel}")
    require(all(d > 0 for d in a.stride), op, f"stride must be positive, got {a.stride}")
    require(all(d >= 0 for d in a.pad), op, f"pad must be non-negative, got {a.pad}")
    require(a.pooling_convention != "same" or not any(a.pad), op,
            f"Same pooling convention disables the use of pad parameter (got pad={a.pad})")
    # MXNet (oneDNN) refuses it: a window wholly in the padding has no input to pool
    require(a.global_pool or all(p < k for p, k in zip(a.pad, a.kernel)), op,
            f"pad {a.pad} must be smaller than kernel {a.kernel}")
    if a.pool_type == "lp" and "p_value" in a:
        require(a.p_value is not None and a.p_value >= 1, op,
                f"p_value must be a positive int for lp pooling, got {a.p_value}")


_POOL = Checked(
    _pool_check,
    kernel=Field("shape", (), doc="window size (ignored with global_pool)"),
    pool_type=Field("str", "max", choices=("avg", "lp", "max", "sum")),
    global_pool=Field("bool", False, doc="pool over the whole spatial extent"),
    cudnn_off=Field("bool", False, doc="ignored (no cuDNN)"),
    pooling_convention=Field("str", "valid", choices=("full", "same", "valid"),
                             doc="'valid' floors the output size, 'full' takes the ceiling, "
                                 "'same' gives ceil(size / stride) (no padding)"),
    stride=Field("shape", (), doc="default 1 per dim"),
    pad=Field("shape", (), doc="default 0 per dim"),
    p_value=Field("int_or_none", None, doc="p of lp pooling"),
    count_include_pad=Field("bool_or_none", None,
                            doc="avg: count padded positions in the divisor (default True)"),
    layout=Field("str_or_none", None, choices=_LAYOUTS))


def _pool_cl(a):
    return a.get("layout") in ("NWC", "NHWC", "NDHWC")


def pool_shape(attrs, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    nd = len(data) - 2
    if nd not in (1, 2, 3):
        raise rules.Conflict("shape", 0, "input", "3-D (NCW), 4-D (NCHW) or 5-D (NCDHW) data",
                             data)
    cl = _pool_cl(attrs)
    n, c = data[0], (data[-1] if cl else data[1])
    sp = tuple(data[1:-1]) if cl else tuple(data[2:])
    if attrs.global_pool:
        osp = (1,) * nd
    else:
        if len(attrs.kernel) != nd:
            raise rules.Conflict("shape", 0, "input", f"{len(attrs.kernel) + 2}-D data for "
                                 f"kernel {attrs.kernel}", data)
        s, p = _tup(attrs.stride, nd, 1), _tup(attrs.pad, nd, 0)
        osp = []
        for i in range(nd):
            if sp[i] is None:
                osp.append(None)
                continue
            if sp[i] + 2 * p[i] < attrs.kernel[i] and attrs.pooling_convention != "same":
                raise rules.Conflict("shape", 0, "input",
                                     f"spatial dims >= kernel {attrs.kernel} after padding", data)
            osp.append(kpool.pool_out_size(sp[i], attrs.kernel[i], s[i], p[i],
                                           attrs.pooling_convention))
    rules.set_shape(outs, 0, (n,) + tuple(osp) + (c,) if cl else (n, c) + tuple(osp), "output")
    return ins, outs


def _to_cf(a, x):
    return np.moveaxis(x, -1, 1) if _pool_cl(a) else x


def _from_cf(a, y):
    return np.ascontiguousarray(np.moveaxis(y, 1, -1)) if _pool_cl(a) else y


def _pool_args(a):
    cip = a.get("count_include_pad")
    cip = True if cip is None else cip
    return dict(kernel=a.kernel or None, stride=a.stride or None, pad=a.pad or None,
                global_pool=a.global_pool, pooling_convention=a.pooling_convention,
                count_include_pad=cip)


def _pool_fwd(a, xs):
    y = _dnn.pool_fwd(a, xs[0])
    if y is not None:
        return (y,)
    xs = [dnn.to_plain(v) for v in xs]  # oneDNN-laid inputs inside a plan, Numba path
    x = _to_cf(a, xs[0])
    if a.pool_type == "lp":
        pv = a.p_value
        s = kpool.pool_forward(x ** pv, pool_type="sum", **_pool_args(a))
        y = np.power(s, 1.0 / pv) if pv != 1 else s
    else:
        y = kpool.pool_forward(x, pool_type=a.pool_type, **_pool_args(a))
    return (_from_cf(a, y).astype(xs[0].dtype, copy=False),)


def _pool_bwd(a, xs):
    dx = _dnn.pool_bwd(a, xs[0], xs[1], xs[2])
    if dx is not None:
        return (dx,)
    xs = [dnn.to_plain(v) for v in xs]
    g, x, y = _to_cf(a, xs[0]), _to_cf(a, xs[1]), _to_cf(a, xs[2])
    if a.pool_type == "lp":
        pv = a.p_value
        if pv == 1:
            dx = kpool.pool_backward(x, y, g, pool_type="sum", **_pool_args(a))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                gs = np.where(y != 0, g * np.power(y, 1.0 - pv), 0)
            dx = kpool.pool_backward(x, y, gs, pool_type="sum", **_pool_args(a)) * x ** (pv - 1)
    else:
        dx = kpool.pool_backward(x, y, g, pool_type=a.pool_type, **_pool_args(a))
    return (_from_cf(a, dx).astype(xs[1].dtype, copy=False),)


def _pool_grad_of(bname):
    def grad(node, og):
        return [bw(bname, [og[0], node.inputs[0], (node, 0)], node, "backward", **kept(node))]
    return grad


_pool_bwd_shape = rules.grads_like_inputs(1)


register(OpDef(
    "Pooling", params=_POOL, dispatch=(Dispatch((DNS,), (DNS,), _pool_fwd, blocked=True),),
    infer_shape=pool_shape, infer_type=rules.same_type,
    gradient=_pool_grad_of("_backward_Pooling"),
    doc="""1-D, 2-D or 3-D pooling: max, avg, sum or lp, optionally global.

    'valid' output extent floor((x + 2p - k)/s) + 1, 'full' uses the ceiling (Caffe),
    'same' ceil(x / s) without padding (windows past the end are clipped).
    avg divides by the window clipped to the padded input when count_include_pad (default),
    else by the number of real elements.

    Parameters
    ----------
    data : Symbol or NDArray (NCW/NCHW/NCDHW, or NWC/NHWC/NDHWC with ``layout``)
    kernel : tuple of int (required unless global_pool)
    pool_type : {'max', 'avg', 'sum', 'lp'}, default 'max'
    global_pool : bool, default False
    pooling_convention : {'valid', 'full', 'same'}, default 'valid'
    stride, pad : tuple of int, default ()
    p_value : int (lp pooling)
    count_include_pad : bool or None (True)

    Examples
    --------
    >>> import sparsym as mx
    >>> p = mx.sym.Pooling(mx.sym.var('x'), kernel=(2, 2), stride=(2, 2))
    >>> p.infer_shape(x=(1, 3, 5, 5))[1]
    [(1, 3, 2, 2)]
    """))
register(OpDef(
    "_backward_Pooling", params=_POOL, inputs=("ograd", "data", "out"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _pool_bwd, blocked=True),),
    infer_shape=_pool_bwd_shape, infer_type=rules.same_type))



# ----------------------------------------------------------------------------- Pooling_v1
_POOL_V1 = Checked(
    _pool_check,
    kernel=Field("shape", (), doc="window size (ignored with global_pool)"),
    pool_type=Field("str", "max", choices=("avg", "max", "sum")),
    global_pool=Field("bool", False, doc="pool over the whole spatial extent"),
    pooling_convention=Field("str", "valid", choices=("full", "valid")),
    stride=Field("shape", (), doc="default 1 per dim"),
    pad=Field("shape", (), doc="default 0 per dim"))

register(OpDef(
    "Pooling_v1", params=_POOL_V1, dispatch=(Dispatch((DNS,), (DNS,), _pool_fwd),),
    infer_shape=pool_shape, infer_type=rules.same_type,
    gradient=_pool_grad_of("_backward_Pooling_v1"),
    doc="""MXNet's first Pooling (max, avg or sum; 'valid' or 'full'; avg counts padding):
    the same kernels as Pooling.

    Parameters
    ----------
    data : Symbol or NDArray (NCW/NCHW/NCDHW)
    kernel : tuple of int (required unless global_pool)
    pool_type : {'max', 'avg', 'sum'}, default 'max'
    global_pool : bool, default False
    pooling_convention : {'valid', 'full'}, default 'valid'
    stride, pad : tuple of int, default ()
    """))
register(OpDef(
    "_backward_Pooling_v1", params=_POOL_V1, inputs=("ograd", "data", "out"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _pool_bwd, blocked=True),),
    infer_shape=_pool_bwd_shape, infer_type=rules.same_type))


# ----------------------------------------------------------------------------- Convolution_v1
register(OpDef(
    "Convolution_v1", params=_CONV, inputs=_inputs, dispatch=_rows(_conv_fwd),
    infer_shape=conv_shape, infer_type=rules.same_type,
    gradient=_grad("_backward_Convolution_v1"),
    doc="""MXNet's first Convolution: the same parameters (in the same order), defaults and
    kernels as Convolution; see its documentation."""))
register(OpDef(
    "_backward_Convolution_v1", params=_CONV, inputs=("ograd", "data", "weight"),
    num_outputs=lambda a: 2 if a.no_bias else 3,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _conv_bwd, blocked=True),),
    infer_shape=_bwd_shape, infer_type=rules.same_type))
