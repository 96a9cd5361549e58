"""FullyConnected, Embedding and _contrib_SparseEmbedding (with their row_sparse rows)."""
from __future__ import annotations

import math

import numpy as np

from ... import storage as st
from ...base import IndexOutOfRange, dtype_of
from ...kernels import blas
from ...kernels import rsp as krsp
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import CSR, DNS, RSP, Checked, prod, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register

# ----------------------------------------------------------------------------- FullyConnected


def _fc_check(op, a):
    require(a.num_hidden >= 1, op, f"num_hidden must be positive, got {a.num_hidden}")


_FC = Checked(_fc_check,
              num_hidden=Field("int", doc="number of hidden units (output features)"),
              no_bias=Field("bool", False, doc="whether to omit the bias"),
              flatten=Field("bool", True, doc="flatten all but the first axis of data"))


def _fc_inputs(a):
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def fc_shape(attrs, ins, outs):
    """MXNet's FullyConnectedShape: weight (num_hidden, in), bias (num_hidden,), batch from out."""
    data, nh = ins[0], attrs.num_hidden
    if data is None:
        if ins[1] is not None and outs[0] is not None and len(outs[0]) == 2 and attrs.flatten:
            rules.set_shape(ins, 0, (outs[0][0], ins[1][1]))
        # MXNet infers nothing else until the data shape is known (so partial inference
        # leaves the bias unknown, as MXNet's infer_shape_partial reports it)
        return ins, outs
    if len(data) == 0:
        return ins, outs
    if not attrs.no_bias and not (ins[2] is not None and tuple(ins[2]) == (nh, 1)):
        # MXNet's FullyConnectedShape also accepts a (num_hidden, 1) bias
        rules.set_shape(ins, 2, (nh,))
    n_in = prod(data[1:]) if attrs.flatten else data[-1]
    rules.set_shape(ins, 1, (nh, n_in))
    if ins[1] is not None and ins[1][1] is not None and n_in is None:
        if not attrs.flatten:
            rules.set_shape(ins, 0, tuple(data[:-1]) + (ins[1][1],))
        elif len(data) == 2:
            rules.set_shape(ins, 0, (data[0], ins[1][1]))
    if attrs.flatten:
        rules.set_shape(outs, 0, (data[0], nh), "output")
        if outs[0] is not None and outs[0][0] is not None:
            rules.set_shape(ins, 0, (outs[0][0],) + tuple(ins[0][1:]))
    else:
        rules.set_shape(outs, 0, tuple(data[:-1]) + (nh,), "output")
        if outs[0] is not None:
            rules.set_shape(ins, 0, tuple(outs[0][:-1]) + (ins[0][-1],))
    return ins, outs


def _flat(a, x):
    if a.flatten:  # explicit width: reshape(0, -1) is ambiguous for an empty batch
        return x.reshape(x.shape[0], math.prod(x.shape[1:]))
    return x.reshape(-1, x.shape[-1])


def _out_shape(a, x):
    return (x.shape[0], a.num_hidden) if a.flatten else x.shape[:-1] + (a.num_hidden,)


def _fc_fwd(a, xs):
    x, w = xs[0], xs[1]
    two_d = x.ndim == 2  # a batch of vectors: no reshapes either way
    with blas.gemm_threads(x.size * a.num_hidden):
        y = (x if two_d else _flat(a, x)) @ w.T
    if not a.no_bias:
        b = xs[2]
        y += b if b.__class__ is np.ndarray and b.ndim == 1 else st.todense(b).reshape(-1)
    return (y if two_d else y.reshape(_out_shape(a, x)),)


def _fc_fwd_rsp(a, xs):
    """data dense, weight row_sparse (absent rows read as zero), bias dense/rsp -> dense."""
    x, w = xs[0], xs[1]
    x2 = _flat(a, x)
    y = np.zeros((x2.shape[0], a.num_hidden), dtype=np.result_type(x.dtype, w.dtype))
    if len(w.indices):
        y[:, w.indices] = x2 @ w.data.reshape(len(w.indices), -1).T
    if not a.no_bias:
        y += st.todense(xs[2]).reshape(-1)
    return (y.reshape(_out_shape(a, x)),)


def _fc_bwd(a, xs):
    g, x, w = xs[0], xs[1], st.todense(xs[2])
    x2 = _flat(a, x)
    g2 = g.reshape(x2.shape[0], a.num_hidden)
    # a gradient nothing reads (the data's of a first layer, the parameters' of a frozen
    # one: the plan's ``__unused__``) is not computed: each is a GEMM as large as the forward
    unused = a.get("__unused__", ())
    with blas.gemm_threads(x.size * a.num_hidden):
        dx = (g2 @ w).reshape(x.shape) if 0 not in unused else None
        dw = (g2.T @ x2).astype(w.dtype, copy=False) if 1 not in unused else None
    out = (dx, dw)
    if not a.no_bias:
        out += (g2.sum(axis=0) if 2 not in unused else None,)
    return out


def _fc_grad(node, og):
    n = len(node.inputs)
    return multi_bw("_backward_FullyConnected", [og[0], node.inputs[0], node.inputs[1]],
                    node, "backward", n, **kept(node))


_fc_bwd_shape = rules.grads_like_inputs(1, then=rules.bias_grad_shape("num_hidden"))


_FC_DOC = """Apply a linear transformation: ``Y = X W^T + b``.

    With ``flatten=True`` data of shape (n, x1, ..., xk) is flattened to (n, x1*...*xk);
    otherwise the transformation applies to the last axis. The weight has shape
    (num_hidden, in_features) and the bias (num_hidden,); both are inferred from data.

    Storage: data dense with a row_sparse weight (rows absent from the weight read as zero)
    gives a dense output without fallback (MXNet's sparse row; forward only).

    Parameters
    ----------
    data : Symbol or NDArray
    weight : Symbol or NDArray
    bias : Symbol or NDArray
    num_hidden : int (>= 1)
    no_bias : bool, default False
    flatten : bool, default True

    Examples
    --------
    >>> import sparsym as mx
    >>> fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=4, name='fc')
    >>> fc.infer_shape(x=(2, 3))[0]
    [(2, 3), (4, 3), (4,)]
    """

register(OpDef(
    "FullyConnected", params=_FC, inputs=_fc_inputs,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _fc_fwd), Dispatch((DNS, DNS), (DNS,), _fc_fwd),
              Dispatch((DNS, RSP, DNS), (DNS,), _fc_fwd_rsp),
              Dispatch((DNS, RSP, RSP), (DNS,), _fc_fwd_rsp),
              Dispatch((DNS, RSP), (DNS,), _fc_fwd_rsp)),
    infer_shape=fc_shape, infer_type=rules.same_type, gradient=_fc_grad,
    aliases=("_sparse_FullyConnected",), doc=_FC_DOC))
def _fc_bwd_grad(node, og):
    """Second-order rule of ``_backward_FullyConnected(g, x, w) = (g W, g^T x, sum g)``
    (rows flattened as the forward does), from FullyConnected, dot and Reshape nodes."""
    g, x, w = node.inputs
    a = node.params
    ox, ow = og[0], og[1]
    params = kept(node)
    nb = dict(params, no_bias=True)
    # d g = FC(ox, W, ob) + FC(x, ow): the forward applied to the head gradients
    if a.no_bias:
        t1 = bw("FullyConnected", [ox, w], node, "grad_g_ox", **nb)
    else:
        t1 = bw("FullyConnected", [ox, w, og[2]], node, "grad_g_ox", **params)
    d_g = bw("elemwise_add", [t1, bw("FullyConnected", [x, ow], node, "grad_g_ow", **nb)],
             node, "grad_ograd")
    # rows of g (n, h) and of x / ox (n, k): flatten keeps axis 0, otherwise the last axis;
    # the rows go back to x's shape through the flattening's own backward op
    rows = {} if a.flatten else {"shape": (-1, 0), "reverse": True}
    flat = "Flatten" if a.flatten else "Reshape"
    g2 = g if a.flatten else bw("Reshape", [g], node, "grad_g2", shape=(-1, a.num_hidden))
    ox2 = bw(flat, [ox], node, "grad_ox2", **rows)
    # d x = g . ow (reshaped like x), d W = g^T . ox
    dx2 = bw("dot", [g2, ow], node, "grad_x2")
    d_x = bw("_backward_" + flat, [dx2, x], node, "grad_data", **rows)
    d_w = bw("dot", [g2, ox2], node, "grad_weight", transpose_a=True)
    return [d_g, d_x, d_w]


register(OpDef(
    "_backward_FullyConnected", params=_FC, inputs=("ograd", "data", "weight"),
    num_outputs=lambda a: 2 if a.no_bias else 3,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _fc_bwd),
              Dispatch((DNS, DNS, RSP), (DNS,), _fc_bwd)),
    infer_shape=_fc_bwd_shape, infer_type=rules.same_type, gradient=_fc_bwd_grad,
    skips_unused_outputs=True))


# ----------------------------------------------------------------------------- Embedding
_DTYPES = ("float16", "float32", "float64", "int32", "int64", "int8", "uint8", "bfloat16")


def _emb_check(op, a):
    require(a.input_dim >= 1, op, f"input_dim must be positive, got {a.input_dim}")
    require(a.output_dim >= 1, op, f"output_dim must be positive, got {a.output_dim}")


_EMB = Checked(_emb_check,
               input_dim=Field("int", doc="vocabulary size (rows of the weight)"),
               output_dim=Field("int", doc="embedding dimension"),
               dtype=Field("str", "float32", choices=_DTYPES, doc="weight and output dtype"),
               sparse_grad=Field("bool", False, doc="row_sparse weight gradient"))
_SEMB = Checked(_emb_check, **_EMB.fields,
                deterministic=Field("bool", False, doc="ignored on CPU"))


def emb_shape(attrs, ins, outs):
    rules.set_shape(ins, 1, (attrs.input_dim, attrs.output_dim))
    if ins[0] is not None:
        rules.set_shape(outs, 0, tuple(ins[0]) + (attrs.output_dim,), "output")
    elif outs[0] is not None:
        rules.set_shape(ins, 0, tuple(outs[0][:-1]))
    return ins, outs


def emb_type(attrs, ins, outs):
    dt = dtype_of(attrs.dtype) if attrs.dtype != "bfloat16" else np.dtype(np.float32)
    w = ins[1] if ins[1] is not None else dt
    rules.set_type(ins, 1, w)
    rules.set_type(outs, 0, w, "output")
    if ins[0] is None:
        ins[0] = w
    return ins, outs


def _emb_fwd(a, xs):
    # MXNet's Embedding: ids are cast to int and clipped into [0, input_dim)
    return (krsp.take_rows(xs[1], xs[0]),)


def _emb_fwd_rsp(a, xs):
    ids = np.asarray(xs[0])
    if ids.size and (ids.min() < 0 or ids.max() >= a.input_dim):
        # MXNet's row_sparse-weight kernel refuses them (a dense weight clips them)
        bad = ids[(ids < 0) | (ids >= a.input_dim)].ravel()[0]
        raise IndexOutOfRange(f"SparseEmbedding input contains data out of bound: id "
                              f"{bad:g} is outside [0, input_dim={a.input_dim}) (a "
                              "row_sparse weight takes no clipped ids)")
    return (krsp.take_rows_rsp(xs[1], xs[0]),)


def _emb_bwd_dense(a, xs):
    # rows summed by the compiled rsp kernel, then placed (np.add.at is ~50x slower)
    r = krsp.embedding_grad_rsp(xs[1], xs[0], a.input_dim)  # clips the ids itself
    out = np.zeros((a.input_dim, a.output_dim), dtype=xs[0].dtype)
    out[r.indices] = r.data
    return (out,)


def _emb_bwd_rsp(a, xs):
    return (krsp.embedding_grad_rsp(xs[1], xs[0], a.input_dim),)


def _emb_grad(bname):
    def grad(node, og):
        return [None, bw(bname, [og[0], node.inputs[0]], node, "backward", **kept(node))]
    return grad


def _emb_bwd_shape(attrs, ins, outs):
    rules.set_shape(outs, 0, (attrs.input_dim, attrs.output_dim), "output")
    return ins, outs


def _emb_bwd_type(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_type(outs, 0, ins[0], "output")
    return ins, outs


_EMB_DOC = """Map integer ids to rows of a weight matrix (input_dim, output_dim).

    Output shape is data.shape + (output_dim,). Ids are clipped into [0, input_dim).
    A row_sparse weight reads absent rows as zero. With ``sparse_grad=True`` the weight
    gradient is row_sparse (only the rows of the looked-up ids).

    Parameters
    ----------
    data : Symbol or NDArray (ids)
    weight : Symbol or NDArray
    input_dim, output_dim : int (>= 1)
    dtype : str, default 'float32'
    sparse_grad : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> w = mx.nd.array([[0., 1.], [2., 3.], [4., 5.]])
    >>> mx.nd.Embedding(mx.nd.array([2, 0]), w, input_dim=3, output_dim=2).asnumpy().tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """

for _name, _params, _bname, _aliases, _always_rsp in (
        ("Embedding", _EMB, "_backward_Embedding", ("_sparse_Embedding",), False),
        ("_contrib_SparseEmbedding", _SEMB, "_backward_SparseEmbedding", (), True)):
    register(OpDef(
        _name, params=_params, inputs=("data", "weight"),
        dispatch=(Dispatch((DNS, DNS), (DNS,), _emb_fwd),
                  Dispatch((DNS, RSP), (DNS,), _emb_fwd_rsp),
                  Dispatch((CSR, DNS), (DNS,),
                           lambda a, xs: _emb_fwd(a, [st.todense(xs[0]), xs[1]]))),
        infer_shape=emb_shape, infer_type=emb_type, gradient=_emb_grad(_bname),
        aliases=_aliases,
        doc=_EMB_DOC if not _always_rsp else
        "Embedding whose weight gradient is always row_sparse (MXNet's contrib op).\n\n"
        "    Parameters as :func:`Embedding` plus ``deterministic`` (no effect on CPU)."))
    if _always_rsp:
        _rows = (Dispatch((DNS, DNS), (RSP,), _emb_bwd_rsp),)
    else:
        _rows = (Dispatch((DNS, DNS), (RSP,), _emb_bwd_rsp, when=lambda a, s: a.sparse_grad),
                 Dispatch((DNS, DNS), (DNS,), _emb_bwd_dense))
    register(OpDef(_bname, params=_params, inputs=("ograd", "data"), dispatch=_rows,
                   infer_shape=_emb_bwd_shape, infer_type=_emb_bwd_type))


# ----------------------------------------------------------------------------- embedding bag
# Embedding -> broadcast_mul by per-id values -> sum over the ids of a row, as one op: the
# executor's planner puts it in place of the three (passes/fuse.py, fuse_embedding_bags) when
# nothing else reads their intermediate results and the values need no gradient; the
# results and the weight gradient are those of the three ops bit for bit.
def _bag_shape(attrs, ins, outs):
    rules.set_shape(ins, 1, (attrs.input_dim, attrs.output_dim))
    if ins[0] is not None:
        rules.set_shape(ins, 2, ins[0])
    elif ins[2] is not None:
        rules.set_shape(ins, 0, ins[2])
    if ins[0] is not None:
        rules.set_shape(outs, 0, (ins[0][0], attrs.output_dim), "output")
    return ins, outs


def _bag_type(attrs, ins, outs):
    head, outs = emb_type(attrs, list(ins[:2]), outs)
    ins[0], ins[1] = head
    rules.set_type(ins, 2, ins[1])
    return ins, outs


def _bag_fwd(a, xs):
    return (krsp.embedding_bag_sum(xs[1], xs[0], xs[2]),)


def _bag_bwd_rsp(a, xs):
    return (krsp.embedding_bag_grad_rsp(xs[1], xs[2], xs[0], a.input_dim),)


def _bag_bwd_dense(a, xs):
    r = krsp.embedding_bag_grad_rsp(xs[1], xs[2], xs[0], a.input_dim)
    out = np.zeros((a.input_dim, a.output_dim), dtype=xs[0].dtype)
    out[r.indices] = r.data
    return (out,)


def _bag_grad(node, og):
    return [None, bw("_backward_embedding_bag_sum", [og[0], node.inputs[0], node.inputs[2]],
                     node, "backward", **kept(node)), None]


register(OpDef(
    "_embedding_bag_sum", params=_EMB, inputs=("data", "weight", "values"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _bag_fwd),),
    infer_shape=_bag_shape, infer_type=_bag_type, gradient=_bag_grad,
    doc="sum(Embedding(data, weight) * expand_dims(values, 2), axis=1) for 2-D data and "
        "values of one shape (placed by the planner; values get no gradient)."))
register(OpDef("_backward_embedding_bag_sum", params=_EMB, inputs=("ograd", "data", "values"),
               dispatch=(Dispatch((DNS, DNS, DNS), (RSP,), _bag_bwd_rsp,
                                  when=lambda a, s: a.sparse_grad),
                         Dispatch((DNS, DNS, DNS), (DNS,), _bag_bwd_dense)),
               infer_shape=_emb_bwd_shape, infer_type=_emb_bwd_type))
