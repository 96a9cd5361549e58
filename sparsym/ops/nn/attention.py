"""MXNet's interleaved multi-head attention products (``_contrib_interleaved_matmul_*``).

The projections are interleaved per head: a self-attention input (seq, batch, 3*P) holds,
for each head, its query, key and value blocks of ``P / heads`` units one after another
(seq, batch, heads, 3, head_dim); an encoder-decoder ``keys_values`` input holds key then
value blocks (seq, batch, heads, 2, head_dim). Scores are (batch*heads, q_seq, k_seq) with
the queries scaled by 1/sqrt(head_dim); weighted values come back as (seq, batch, P).
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    require(a.heads >= 1, op, f"heads must be positive, got {a.heads}")


_HEADS = Checked(_check, heads=Field("int", doc="number of attention heads"))


def _split(x, heads, parts, op):
    """(seq, batch, heads*parts*hd) -> parts arrays (batch*heads, seq, hd)."""
    s, b, e = x.shape
    if e % (heads * parts):
        raise ShapeError(f"{op}: last dim {e} of the interleaved input is not a multiple "
                         f"of heads*{parts} = {heads * parts}")
    v = x.reshape(s, b, heads, parts, e // (heads * parts))
    return [v[:, :, :, j].transpose(1, 2, 0, 3).reshape(b * heads, s, -1) for j in range(parts)]


def _join(parts, seq, batch, heads):
    """Inverse of _split: arrays (batch*heads, seq, hd) -> (seq, batch, heads*parts*hd)."""
    hd = parts[0].shape[-1]
    v = np.stack([p.reshape(batch, heads, seq, hd) for p in parts], axis=3)
    return v.transpose(2, 0, 1, 3, 4).reshape(seq, batch, -1)


def _scale(hd, dtype):
    return np.asarray(1.0 / np.sqrt(hd), dtype=dtype)


def _heads_out(att, seq, batch, heads):
    """(batch*heads, seq, hd) -> (seq, batch, heads*hd)."""
    hd = att.shape[-1]
    return att.reshape(batch, heads, seq, hd).transpose(2, 0, 1, 3).reshape(seq, batch, -1)


def _heads_in(y, heads):
    """(seq, batch, heads*hd) -> (batch*heads, seq, hd)."""
    s, b, e = y.shape
    return y.reshape(s, b, heads, e // heads).transpose(1, 2, 0, 3).reshape(b * heads, s, -1)


# ----------------------------------------------------------------------------- kernels
def _selfatt_qk(a, xs, op="interleaved_matmul_selfatt_qk"):
    q, k, _ = _split(xs[0], a.heads, 3, op)
    return ((q * _scale(q.shape[-1], q.dtype)) @ k.transpose(0, 2, 1),)


def _selfatt_qk_bwd(a, xs):
    g, qkv = xs
    q, k, _ = _split(qkv, a.heads, 3, "interleaved_matmul_selfatt_qk")
    sc = _scale(q.shape[-1], q.dtype)
    dq = (g @ k) * sc
    dk = g.transpose(0, 2, 1) @ q * sc
    return (_join([dq, dk, np.zeros_like(q)], qkv.shape[0], qkv.shape[1], a.heads),)


def _selfatt_valatt(a, xs):
    qkv, att = xs
    _, _, v = _split(qkv, a.heads, 3, "interleaved_matmul_selfatt_valatt")
    return (_heads_out(att @ v, qkv.shape[0], qkv.shape[1], a.heads),)


def _selfatt_valatt_bwd(a, xs):
    g, qkv, att = xs
    q, _, v = _split(qkv, a.heads, 3, "interleaved_matmul_selfatt_valatt")
    g3 = _heads_in(g, a.heads)
    dv = att.transpose(0, 2, 1) @ g3
    datt = g3 @ v.transpose(0, 2, 1)
    z = np.zeros_like(q)
    return _join([z, z, dv], qkv.shape[0], qkv.shape[1], a.heads), datt


def _encdec_qk(a, xs):
    (q,) = _split(xs[0], a.heads, 1, "interleaved_matmul_encdec_qk")
    k, _ = _split(xs[1], a.heads, 2, "interleaved_matmul_encdec_qk")
    return ((q * _scale(q.shape[-1], q.dtype)) @ k.transpose(0, 2, 1),)


def _encdec_qk_bwd(a, xs):
    g, qs, kv = xs
    (q,) = _split(qs, a.heads, 1, "interleaved_matmul_encdec_qk")
    k, v = _split(kv, a.heads, 2, "interleaved_matmul_encdec_qk")
    sc = _scale(q.shape[-1], q.dtype)
    dq = (g @ k) * sc
    dk = g.transpose(0, 2, 1) @ q * sc
    return (_join([dq], qs.shape[0], qs.shape[1], a.heads),
            _join([dk, np.zeros_like(v)], kv.shape[0], kv.shape[1], a.heads))


def _encdec_valatt(a, xs):
    kv, att = xs
    _, v = _split(kv, a.heads, 2, "interleaved_matmul_encdec_valatt")
    return (_heads_out(att @ v, att.shape[1], kv.shape[1], a.heads),)


def _encdec_valatt_bwd(a, xs):
    g, kv, att = xs
    k, v = _split(kv, a.heads, 2, "interleaved_matmul_encdec_valatt")
    g3 = _heads_in(g, a.heads)
    dv = att.transpose(0, 2, 1) @ g3
    datt = g3 @ v.transpose(0, 2, 1)
    return _join([np.zeros_like(k), dv], kv.shape[0], kv.shape[1], a.heads), datt


# ----------------------------------------------------------------------------- shapes
def _dims(shape, n=3):
    return shape is not None and len(shape) == n and all(d is not None for d in shape)


def _selfatt_qk_shape(a, ins, outs):
    x = ins[0]
    if _dims(x):
        rules.set_shape(outs, 0, (x[1] * a.heads, x[0], x[0]), "output")
    return ins, outs


def _selfatt_valatt_shape(a, ins, outs):
    x = ins[0]
    if _dims(x):
        rules.set_shape(ins, 1, (x[1] * a.heads, x[0], x[0]))
        rules.set_shape(outs, 0, (x[0], x[1], x[2] // 3), "output")
    return ins, outs


def _encdec_qk_shape(a, ins, outs):
    q, kv = ins
    if _dims(q) and _dims(kv):
        rules.set_shape(outs, 0, (q[1] * a.heads, q[0], kv[0]), "output")
    return ins, outs


def _encdec_valatt_shape(a, ins, outs):
    kv, att = ins
    if _dims(kv) and _dims(att):
        rules.set_shape(outs, 0, (att[1], kv[1], kv[2] // 2), "output")
    return ins, outs


def _grad(bw_name):
    def rule(node, og):
        return multi_bw(bw_name, [og[0]] + list(node.inputs), node, "backward",
                        len(node.inputs), **kept(node))
    return rule


_DOC = """{what}

    Parameters
    ----------
{params}
    heads : int
        Number of attention heads.

    Examples
    --------
    >>> import sparsym as mx
    >>> {example}
    """

_OPS = (
    ("interleaved_matmul_selfatt_qk", ("queries_keys_values",), _selfatt_qk, _selfatt_qk_bwd,
     _selfatt_qk_shape,
     "Scores of self-attention from interleaved projections: (batch*heads, seq, seq).",
     "    queries_keys_values : (seq, batch, 3*heads*head_dim), interleaved per head",
     "mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.ones((4, 2, 6)), heads=1).shape\n"
     "    (2, 4, 4)"),
    ("interleaved_matmul_selfatt_valatt", ("queries_keys_values", "attention"),
     _selfatt_valatt, _selfatt_valatt_bwd, _selfatt_valatt_shape,
     "Attention-weighted values of self-attention: (seq, batch, heads*head_dim).",
     "    queries_keys_values : (seq, batch, 3*heads*head_dim)\n"
     "    attention : (batch*heads, seq, seq)",
     "mx.nd.contrib.interleaved_matmul_selfatt_valatt(mx.nd.ones((4, 2, 6)),\n"
     "    ...     mx.nd.ones((2, 4, 4)), heads=1).shape\n    (4, 2, 2)"),
    ("interleaved_matmul_encdec_qk", ("queries", "keys_values"), _encdec_qk, _encdec_qk_bwd,
     _encdec_qk_shape,
     "Scores of encoder-decoder attention: (batch*heads, q_seq, kv_seq).",
     "    queries : (q_seq, batch, heads*head_dim)\n"
     "    keys_values : (kv_seq, batch, 2*heads*head_dim), interleaved per head",
     "mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.ones((3, 2, 2)),\n"
     "    ...     mx.nd.ones((4, 2, 4)), heads=1).shape\n    (2, 3, 4)"),
    ("interleaved_matmul_encdec_valatt", ("keys_values", "attention"), _encdec_valatt,
     _encdec_valatt_bwd, _encdec_valatt_shape,
     "Attention-weighted values of encoder-decoder attention: (q_seq, batch, heads*head_dim).",
     "    keys_values : (kv_seq, batch, 2*heads*head_dim)\n"
     "    attention : (batch*heads, q_seq, kv_seq)",
     "mx.nd.contrib.interleaved_matmul_encdec_valatt(mx.nd.ones((4, 2, 4)),\n"
     "    ...     mx.nd.ones((2, 3, 4)), heads=1).shape\n    (3, 2, 2)"),
)

for _name, _ins, _fwd, _bwd, _shape, _what, _params, _example in _OPS:
    _n = len(_ins)
    register(OpDef(
        f"_contrib_{_name}", params=_HEADS, inputs=_ins,
        dispatch=(Dispatch((DNS,) * _n, (DNS,), _fwd),), infer_shape=_shape,
        infer_type=rules.same_type, gradient=_grad(f"_backward_contrib_{_name}"),
        doc=_DOC.format(what=_what, params=_params, example=_example)))
    register(OpDef(
        f"_backward_contrib_{_name}", params=_HEADS, inputs=("ograd",) + _ins,
        num_outputs=_n, dispatch=(Dispatch((DNS,) * (_n + 1), (DNS,), _bwd),),
        infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))
