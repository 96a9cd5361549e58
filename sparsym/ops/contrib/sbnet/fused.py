"""SBNet's fused operators: SparseBlockConvolution and SparseBottleneck."""
from __future__ import annotations

from ....base import ShapeError
from ....kernels.sbnet import fused as kfused
from ....kernels.sbnet.geometry import conv_geometry
from ...core import rules
from ...core.grad import kept, multi_bw
from ...core.helpers import DNS
from ...core.params import Field, Params
from ...core.registry import Dispatch, OpDef, register
from ._common import _check_float, _pair

# --------------------------------------------------------------------------- fused conv
_FUSED_COMMON = dict(
    layout=Field("str", "NCHW", choices=("NCHW", "NHWC"),
                 doc="data layout; weights (F, C, kh, kw) for NCHW, (F, kh, kw, C) for NHWC"),
    bsize=Field("shape_or_none", None, doc="SBNet input block size (bh, bw); (b - k) must "
                "be divisible by the stride; None: strips of active output pixels at "
                "stride 1, else autotuned tiles (16x16 output tiles without autotuning)"),
    tol=Field("float", 0.0, doc="an output is active when its receptive field holds a mask "
              "value > tol"),
    dispatch=Field("str", "auto", choices=("auto", "sparse", "dense"),
                   doc="'auto': dense above the measured break-even block density"),
    autotune=Field("bool", True, doc="pick the block size by timing (when bsize is None)"))
_SBCONV = Params(
    kernel=Field("shape", doc="kernel size (kh, kw)"),
    num_filter=Field("int", doc="number of output channels"),
    stride=Field("shape", (1, 1), doc="stride"),
    pad=Field("shape", (0, 0), doc="symmetric zero padding (MXNet's Convolution)"),
    padding=Field("str_or_none", None, choices=(None, "SAME", "VALID"),
                  doc="TF/SBNet padding; overrides pad when given"),
    no_bias=Field("bool", False, doc="omit the bias"),
    **_FUSED_COMMON)


def _sbconv_inputs(a):
    return ("data", "mask", "weight") + (() if a.no_bias else ("bias",))


def _sbconv_shape(a, ins, outs):
    x = ins[0]
    if x is None or any(d is None for d in x):
        return ins, outs
    if len(x) != 4:
        raise ShapeError(f"SparseBlockConvolution: data must be 4-D, got {x}")
    n, c, h, w = kfused.spatial(x, a.layout)
    kh, kw = _pair(a.kernel, "kernel")
    f = a.num_filter
    nhwc = a.layout == "NHWC"
    rules.set_shape(ins, 2, (f, kh, kw, c) if nhwc else (f, c, kh, kw))
    if not a.no_bias:
        rules.set_shape(ins, 3, (f,))
    if ins[1] is None:
        rules.set_shape(ins, 1, (n, h, w, 1) if nhwc else (n, 1, h, w))
    elif len(ins[1]) == 3:
        rules.set_shape(ins, 1, (n, h, w))
    else:
        rules.set_shape(ins, 1, (n, h, w, 1) if nhwc else (n, 1, h, w))
    g = conv_geometry((h, w), (kh, kw), _pair(a.stride, "stride"), _pair(a.pad, "pad"),
                      a.padding)
    rules.set_shape(outs, 0, (n,) + g.out + (f,) if nhwc else (n, f) + g.out, "output")
    return ins, outs


def _data_type(a, ins, outs):
    """Data, params and outputs share the data dtype (float32/float64); mask is free."""
    cur = next((t for i, t in enumerate(ins) if t is not None and i != 1), None)
    if cur is None:
        cur = next((t for t in outs if t is not None), None)
    if cur is None:
        return ins, outs
    for i in range(len(ins)):
        if i == 1:
            if ins[1] is None:
                ins[1] = cur
            continue
        rules.set_type(ins, i, cur)
    _check_float(ins, 0, "block-sparse op")
    for i in range(len(outs)):
        rules.set_type(outs, i, cur, "output")
    return ins, outs


def _sbconv_kernel(a, xs):
    return (kfused.conv_forward(a, xs[0], xs[1], xs[2], None if a.no_bias else xs[3]),)


def _sbconv_grad(node, og):
    n = 2 if node.params.no_bias else 3
    g = multi_bw("_backward__contrib_SparseBlockConvolution",
                 [og[0]] + list(node.inputs[:3]), node, "backward", n, **kept(node))
    return [g[0], None] + g[1:]


def _sbconv_bwd_kernel(a, xs):
    dy, x, mask, w = xs
    dx, dw, db = kfused.conv_backward(a, dy, x, mask, w, not a.no_bias)
    return (dx, dw) if a.no_bias else (dx, dw, db)


def _sbconv_bias_shape(a, ins, outs):
    if not a.no_bias and ins[3] is not None:
        rules.set_shape(outs, 2, (ins[3][0],), "output")


# backward inputs (ograd, data, mask, weight): gradients of data and weight, then the bias's
_sbconv_bwd_shape = rules.grads_like_inputs(1, sources=(0, 2), then=_sbconv_bias_shape)
_sbconv_bwd_type = rules.grads_like_inputs_type(1, sources=(0, 2))


register(OpDef(
    "_contrib_SparseBlockConvolution", inputs=_sbconv_inputs, params=_SBCONV,
    needs_is_train=True, dispatch=(Dispatch((DNS, "..."), (DNS,), _sbconv_kernel),),
    infer_shape=_sbconv_shape, infer_type=_data_type, gradient=_sbconv_grad,
    doc="""Block-sparse 2-D convolution: gather -> conv -> scatter in one op (SBNet).

    ``y = (conv(data, weight) + bias) * m_out`` where ``m_out`` is 1 at outputs whose
    receptive field holds a ``mask`` value > ``tol`` and 0 elsewhere.  At stride 1 without
    ``bsize``, the output rows are cut into bands and only the column runs holding an
    active output in each band are computed (their input windows side by side as one
    batch of one dense convolution; oneDNN's when installed); otherwise the output tiles
    holding an active output are (their input blocks as one batch).  The output is
    written once, zeros included.  The result does not depend on the block size or on the
    sparse/dense choice.

    Density-aware dispatch (``dispatch='auto'``, see sparsym.kernels.sbnet.tuning)
    measures once per shape the block density above which the dense convolution is
    faster and runs dense there; the autotuner (``autotune``, when ``bsize`` is None)
    times candidate band heights (stride 1) or blocks once per shape and density range.
    Both are cached in
    memory and can be turned off (``sparsym.contrib.sbnet.set_dispatch(False)``,
    ``set_autotune(False)``, or SPARSYM_SBNET_DISPATCH=0 / SPARSYM_SBNET_AUTOTUNE=0).

    Parameters
    ----------
    data : NDArray or Symbol, float32/float64, NCHW (default) or NHWC (``layout``)
    mask : (N,H,W), (N,1,H,W) [NCHW] or (N,H,W,1) [NHWC], at the data's resolution;
        no gradient flows to it
    weight : (num_filter, C, kh, kw) [NCHW] or (num_filter, kh, kw, C) [NHWC]
    bias : (num_filter,), absent with no_bias
    kernel, num_filter, stride, pad : as Convolution (no dilation or groups)
    padding : {None, 'SAME', 'VALID'}, TF/SBNet padding overriding ``pad``
    bsize : SBNet input block size, or None (strips at stride 1, else autotuned tiles)
    tol : float, default 0
    dispatch : {'auto', 'sparse', 'dense'}
    autotune : bool, default True

    Examples
    --------
    >>> import sparsym as mx, numpy as np
    >>> x = mx.nd.ones((1, 2, 8, 8)); w = mx.nd.ones((3, 2, 3, 3))
    >>> m = mx.nd.zeros((1, 8, 8)); m[0, 0, 0] = 1
    >>> y = mx.nd.contrib.SparseBlockConvolution(x, m, w, kernel=(3, 3), num_filter=3,
    ...                                         pad=(1, 1), no_bias=True)
    >>> y.asnumpy()[0, 0, :2, :2]
    array([[ 8., 12.],
           [12., 18.]], dtype=float32)
    """))
register(OpDef(
    "_backward__contrib_SparseBlockConvolution", inputs=("ograd", "data", "mask", "weight"),
    params=_SBCONV, num_outputs=lambda a: 2 if a.no_bias else 3,
    dispatch=(Dispatch((DNS, "..."), (DNS,), _sbconv_bwd_kernel),),
    infer_shape=_sbconv_bwd_shape, infer_type=_sbconv_bwd_type))


# --------------------------------------------------------------------------- bottleneck
_RES_PARAMS = ("bn1_gamma", "bn1_beta", "conv1_weight", "bn2_gamma", "bn2_beta",
               "conv2_weight", "bn3_gamma", "bn3_beta", "conv3_weight")
_RES_AUX = ("bn1_moving_mean", "bn1_moving_var", "bn2_moving_mean", "bn2_moving_var",
            "bn3_moving_mean", "bn3_moving_var")
_RES = Params(
    num_filter=Field("int", doc="bottleneck width K (C -> K -> K -> C)"),
    eps=Field("float", 1e-3, doc="BatchNorm eps"),
    momentum=Field("float", 0.9, doc="BatchNorm moving-average momentum"),
    fix_gamma=Field("bool", False, doc="treat every gamma as 1"),
    use_global_stats=Field("bool", False, doc="use the moving statistics in training too"),
    **_FUSED_COMMON)


def _res_shape(a, ins, outs):
    x = ins[0]
    if x is None or any(d is None for d in x):
        if outs[0] is not None:
            rules.set_shape(ins, 0, outs[0])
        return ins, outs
    if len(x) != 4:
        raise ShapeError(f"SparseBottleneck: data must be 4-D, got {x}")
    n, c, h, w = kfused.spatial(x, a.layout)
    k = a.num_filter
    nhwc = a.layout == "NHWC"
    ws = ((k, 1, 1, c), (k, 3, 3, k), (c, 1, 1, k)) if nhwc else \
        ((k, c, 1, 1), (k, k, 3, 3), (c, k, 1, 1))
    for i, s in enumerate(((c,), (c,), ws[0], (k,), (k,), ws[1], (k,), (k,), ws[2])):
        rules.set_shape(ins, 2 + i, s)
    for i, s in enumerate(((c,), (c,), (k,), (k,), (k,), (k,))):
        rules.set_shape(ins, 11 + i, s)
    if ins[1] is None:
        rules.set_shape(ins, 1, (n, h, w, 1) if nhwc else (n, 1, h, w))
    rules.set_shape(outs, 0, x, "output")
    return ins, outs


def _res_grad(node, og):
    g = multi_bw("_backward__contrib_SparseBottleneck", [og[0]] + list(node.inputs), node,
                 "backward", 10, **kept(node))
    return [g[0], None] + g[1:] + [None] * len(_RES_AUX)


# gradients of data and the nine parameters (not of the mask or the moving statistics)
_RES_GRAD_OF = (0,) + tuple(range(2, 11))


def _res_kernel(a, xs, out=None):
    """Out-capable: y goes to the executor's buffer, which may be data's (in place)."""
    return (kfused.res_forward(a, xs, out),)



register(OpDef(
    "_contrib_SparseBottleneck", inputs=("data", "mask") + _RES_PARAMS + _RES_AUX,
    aux=_RES_AUX, mutates=tuple(range(11, 17)), needs_is_train=True, params=_RES,
    inplace=((0, 0),), dispatch=(Dispatch((DNS, "..."), (DNS,), _res_kernel, writes_out=True),),
    infer_shape=_res_shape, infer_type=_data_type, gradient=_res_grad,
    doc="""Sparse pre-activation bottleneck residual block (SBNet's sparse_res_block_bottleneck).

    ``y = data + F(data) * m_out`` with ``F = conv1x1 . relu . bn3 . conv3x3 . relu . bn2 .
    conv1x1 . relu . bn1`` (C -> K -> K -> C channels, stride 1, 'SAME', no conv biases),
    computed only on the output tiles whose 3x3 receptive field holds a mask value > tol:
    one gather of each tile's (bo+2)^2 window, the three BN-ReLU-convs inside it (VALID
    3x3, zero outside the image as the dense padding), one scatter-add onto data.

    The output may take data's buffer (``OpDef.inplace``): in a graph where nothing reads
    data afterwards (inference chains of blocks), the residual update is written in
    place, SBNet's ``use_var`` without its training restriction.

    Training-mode batch statistics are pixel-exact: BN1/BN2 over every pixel feeding an
    active output (each once), BN3 over the active outputs; an all-ones mask gives the
    dense block.  Moving statistics (auxiliary states) are updated in place as BatchNorm.
    Dispatch and autotuning as SparseBlockConvolution.

    Parameters
    ----------
    data : float32/float64, NCHW (default) or NHWC
    mask : (N,H,W) or 4-D with one channel
    bn{1,2,3}_gamma, bn{1,2,3}_beta : (C,), (K,), (K,)
    conv1_weight, conv2_weight, conv3_weight : (K,C,1,1), (K,K,3,3), (C,K,1,1) for NCHW;
        (K,1,1,C), (K,3,3,K), (C,1,1,K) for NHWC
    bn{1,2,3}_moving_mean, bn{1,2,3}_moving_var : auxiliary states
    num_filter : K
    eps, momentum, fix_gamma (default False), use_global_stats : as BatchNorm
    bsize : input block size (tile + 2) or None; tol, dispatch, autotune : as
        SparseBlockConvolution
    """))
register(OpDef(
    "_backward__contrib_SparseBottleneck", inputs=("ograd", "data", "mask") + _RES_PARAMS
    + _RES_AUX, params=_RES, num_outputs=10, needs_is_train=True,
    dispatch=(Dispatch((DNS, "..."), (DNS,), lambda a, xs: kfused.res_backward(a, xs[0], xs[1:])),),
    infer_shape=rules.grads_like_inputs(1, sources=_RES_GRAD_OF),
    infer_type=rules.grads_like_inputs_type(1, sources=_RES_GRAD_OF)))
