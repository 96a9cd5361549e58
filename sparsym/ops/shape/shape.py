"""Shape operators: Reshape, Flatten, expand_dims, squeeze, transpose, SwapAxis, tile, repeat,
Concat, SliceChannel/split, stack, Cast and clip (with their sparse rows)."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ShapeError, dtype_of, np_shape_active
from ...kernels import csr as kcsr
from ...kernels import rsp as krsp
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import CSR, DNS, RSP, Checked, norm_axis, prod, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from ..core.shape_codes import reshape_target


def _conflict(i, expected, got, side="input"):
    return rules.Conflict("shape", i, side, expected, got)


def own(y, *srcs):
    """``y`` as an array that shares no memory with ``srcs`` (kernels never return views of
    their inputs: an executor may reuse an input's buffer once it is dead)."""
    y = np.asarray(y)
    if any(isinstance(x, np.ndarray) and np.may_share_memory(y, x) for x in srcs):
        return y.copy()
    return y


def _linear_bwd_grad(name):
    """Gradient of the backward of a linear op: the op itself on the head gradient."""
    def grad(node, og):
        return [bw(name, [og[0]], node, "grad_ograd", **kept(node)), None]
    return grad


def _masked_bwd_grad(bname):
    """Gradient of ``_backward_<op>(ograd, data) = ograd * mask(data)``: the same op."""
    def grad(node, og):
        return [bw(bname, [og[0], node.inputs[1]], node, "grad_ograd", **kept(node)), None]
    return grad


def unary_shape_op(name, params, fwd, out_shape, bwd, doc, aliases=(), in_shape=None,
                   extra_rows=(), masked=False, partial=False):
    """Register ``name(data)`` and ``_backward_<name>(ograd, data)``.

    fwd(a, x) -> y; out_shape(a, in_shape) -> out shape (in_shape fully known) or raises
    Conflict; in_shape(a, out_shape, in_shape) optionally infers the input backwards;
    bwd(a, g, x) -> dx. The op is linear (its backward is the adjoint, whose gradient is
    the op again) unless ``masked``: bwd is then ograd times a piecewise-constant mask of
    data (clip), and its gradient is the backward op again.
    ``partial``: out_shape also maps partially known shapes (None
    dims), as MXNet's transpose does for an unknown batch size.
    """
    def shape(attrs, ins, outs):
        if rules.known(ins[0]) or (partial and ins[0] is not None):
            rules.set_shape(outs, 0, out_shape(attrs, tuple(ins[0])), "output")
        if not rules.known(ins[0]) and in_shape is not None and outs[0] is not None:
            got = in_shape(attrs, tuple(outs[0]), ins[0])
            if got is not None:
                rules.set_shape(ins, 0, got)
        return ins, outs

    bname = "_backward_" + name
    register(OpDef(
        name, params=params,
        dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (own(fwd(a, xs[0]), xs[0]),)),)
        + tuple(extra_rows), infer_shape=shape, infer_type=rules.same_type,
        gradient=lambda node, og: [bw(bname, [og[0], node.inputs[0]], node, "backward",
                                      **kept(node))],
        aliases=tuple(aliases), doc=doc))
    register(OpDef(
        bname, params=params, inputs=("ograd", "data"),
        # data may be sparse (the forward fell back to dense): bwd gets it densified
        dispatch=(Dispatch((DNS, "*"), (DNS,), lambda a, xs: (
            own(bwd(a, st.todense(xs[0]), st.todense(xs[1])), xs[0])
            .astype(xs[0].dtype, copy=False),)),),
        infer_shape=_like_data, infer_type=rules.first_input_type,
        gradient=_masked_bwd_grad(bname) if masked else _linear_bwd_grad(name)))


def _like_data(attrs, ins, outs):
    if ins[1] is not None:
        rules.set_shape(outs, 0, ins[1], "output")
    return ins, outs


def _reshape_back(a, g, x):
    return g.reshape(x.shape)


# ----------------------------------------------------------------------------- Reshape
_RESHAPE = Params(shape=Field("shape", (), doc="target shape with MXNet's special codes"),
                  reverse=Field("bool", False, doc="match the codes from the right"),
                  target_shape=Field("shape", (), doc="deprecated: plain target shape"),
                  keep_highest=Field("bool", False, doc="deprecated, with target_shape"))


def _reshape_out(a, s):
    if a.shape:
        try:
            return reshape_target(s, a.shape, a.reverse)
        except (ShapeError, IndexError) as err:
            raise _conflict(0, f"a shape compatible with {a.shape} ({err})", s) from None
    if a.target_shape:
        t = tuple(a.target_shape)
        if a.keep_highest:
            t = (s[0],) + t
        if 0 in t:
            known = prod([d for d in t if d != 0])
            t = tuple(prod(s) // known if d == 0 else d for d in t)
        if prod(t) != prod(s):
            raise _conflict(0, f"size {prod(t)} for target_shape {a.target_shape}", s)
        return t
    raise _conflict(0, "a shape or target_shape parameter", s)


def _reshape_in(a, out, cur):
    """MXNet fills one unknown input dim from the output's size."""
    if cur is None or not rules.known(out):
        return None
    missing = [i for i, d in enumerate(cur) if d is None]
    if len(missing) != 1:
        return None
    rest = prod([d for d in cur if d is not None])
    if rest == 0:
        return None
    filled = list(cur)
    filled[missing[0]] = prod(out) // rest
    return tuple(filled)


unary_shape_op(
    "Reshape", _RESHAPE, lambda a, x: x.reshape(_reshape_out(a, x.shape)).copy(), _reshape_out,
    _reshape_back, in_shape=_reshape_in, aliases=("reshape",), doc="""Reshape the input.

    Codes in ``shape``: 0 copies the input dim, -1 infers one dim, -2 copies all remaining
    dims, -3 merges two consecutive dims, -4 splits one dim into the next two values (one may
    be -1). ``reverse=True`` matches the codes from the right.

    Parameters
    ----------
    data : Symbol or NDArray
    shape : tuple of int
    reverse : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.Reshape(mx.nd.zeros((2, 3, 4)), shape=(-4, 1, 2, -3)).shape
    (1, 2, 12)
    """)


def _flatten_out(a, s):
    return (s[0], prod(s[1:])) if len(s) else (1, 1)


unary_shape_op(
    "Flatten", Params(), lambda a, x: x.reshape(_flatten_out(a, x.shape)).copy(), _flatten_out,
    _reshape_back, aliases=("flatten",),
    doc="Flatten to 2-D: (d0, d1*...*dk).\n\n    Parameters\n    ----------\n"
        "    data : Symbol or NDArray\n")


# ----------------------------------------------------------------------------- expand/squeeze
def _expand_out(a, s):
    ax = a.axis + len(s) + 1 if a.axis < 0 else a.axis
    if not 0 <= ax <= len(s):
        raise _conflict(0, f"ndim >= {abs(a.axis)} for axis={a.axis}", s)
    return s[:ax] + (1,) + s[ax:]


def _expand_in(a, out, cur):
    ax = a.axis + len(out) if a.axis < 0 else a.axis
    return out[:ax] + out[ax + 1:] if 0 <= ax < len(out) else None


unary_shape_op(
    "expand_dims", Params(axis=Field("int", doc="position of the new axis")),
    lambda a, x: x.reshape(_expand_out(a, x.shape)).copy(), _expand_out, _reshape_back,
    in_shape=_expand_in,
    doc="Insert a size-1 axis at ``axis`` (negative counts from the end).\n\n"
        "    Parameters\n    ----------\n    data : Symbol or NDArray\n    axis : int\n")


def _squeeze_out(a, s):
    if a.axis is None:
        out = tuple(d for d in s if d != 1)
    else:
        axes = set()
        for ax in a.axis:
            k = ax + len(s) if ax < 0 else ax
            if not 0 <= k < len(s) or s[k] != 1:
                raise _conflict(0, f"a size-1 axis {ax}", s)
            axes.add(k)
        out = tuple(d for i, d in enumerate(s) if i not in axes)
    return out if out else (1,)


unary_shape_op(
    "squeeze", Params(axis=Field("shape_or_none", None, doc="axes to remove (all size-1)")),
    lambda a, x: x.reshape(_squeeze_out(a, x.shape)).copy(), _squeeze_out, _reshape_back,
    doc="Remove size-1 axes (all, or those in ``axis``); a result with no dims is (1,).\n\n"
        "    Parameters\n    ----------\n    data : Symbol or NDArray\n"
        "    axis : tuple of int or None\n")


# ----------------------------------------------------------------------------- transpose
def _perm(a, nd):
    if not a.axes:
        return tuple(range(nd))[::-1]
    p = tuple(ax + nd if ax < 0 else ax for ax in a.axes)
    if sorted(p) != list(range(nd)):
        raise _conflict(0, f"{len(a.axes)}-D data for axes={a.axes}", f"{nd}-D data")
    return p


def _transpose_out(a, s):
    return tuple(s[i] for i in _perm(a, len(s)))


def _transpose_in(a, out, cur):
    p = _perm(a, len(out))
    inv = np.argsort(p)
    return tuple(out[i] for i in inv)


unary_shape_op(
    "transpose", Params(axes=Field("shape", (), doc="permutation; default reverses the axes")),
    lambda a, x: np.ascontiguousarray(np.transpose(x, _perm(a, x.ndim))), _transpose_out,
    lambda a, g, x: np.ascontiguousarray(np.transpose(g, np.argsort(_perm(a, x.ndim)))),
    in_shape=_transpose_in, partial=True,
    doc="""Permute the axes (reverse them by default).

    Parameters
    ----------
    data : Symbol or NDArray
    axes : tuple of int, default ()

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.transpose(mx.nd.zeros((2, 3, 4)), axes=(1, 0, 2)).shape
    (3, 2, 4)
    """)


def _swap_perm(a, nd):
    p = list(range(nd))
    i, j = norm_axis(a.dim1, nd, "SwapAxis"), norm_axis(a.dim2, nd, "SwapAxis")
    p[i], p[j] = p[j], p[i]
    return tuple(p)


def _swap(a, x):
    return np.ascontiguousarray(np.transpose(x, _swap_perm(a, x.ndim)))


unary_shape_op(
    "SwapAxis", Params(dim1=Field("int", 0), dim2=Field("int", 0)), _swap,
    lambda a, s: tuple(s[i] for i in _swap_perm(a, len(s))), lambda a, g, x: _swap(a, g),
    in_shape=lambda a, out, cur: tuple(out[i] for i in _swap_perm(a, len(out))),
    aliases=("swapaxes",),
    doc="Interchange axes dim1 and dim2.\n\n    Parameters\n    ----------\n"
        "    data : Symbol or NDArray\n    dim1, dim2 : int, default 0\n")


# ----------------------------------------------------------------------------- tile / repeat
def _tile_check(op, a):
    require(all(r >= 0 for r in a.reps), op, f"reps must be non-negative, got {a.reps}")


def _tile_out(a, s):
    reps = tuple(a.reps)
    if 0 in reps and not np_shape_active():  # MXNet: a 0 output dim means unknown
        raise ShapeError(f"Operator tile inferring shapes failed: reps {reps} give a "
                         "zero-size output, which needs NumPy shape semantics "
                         "(`with mx.np_shape():`)")
    n = max(len(s), len(reps))
    s2 = (1,) * (n - len(s)) + s
    r2 = (1,) * (n - len(reps)) + reps
    return tuple(d * r for d, r in zip(s2, r2))


def _tile_bwd(a, g, x):
    reps = tuple(a.reps)
    n = max(x.ndim, len(reps))
    s2 = (1,) * (n - x.ndim) + x.shape
    r2 = (1,) * (n - len(reps)) + reps
    inter = []
    for d, r in zip(s2, r2):
        inter += [r, d]
    return g.reshape(inter).sum(axis=tuple(range(0, 2 * n, 2))).reshape(x.shape)


unary_shape_op(
    "tile", Checked(_tile_check, reps=Field("shape", doc="repetitions per axis")),
    lambda a, x: np.tile(x, a.reps), _tile_out, _tile_bwd,
    doc="Repeat the whole array ``reps`` times per axis (numpy.tile).\n\n"
        "    Parameters\n    ----------\n    data : Symbol or NDArray\n    reps : tuple of int\n")


def _repeat_check(op, a):
    require(a.repeats >= 0, op, f"repeats must be non-negative, got {a.repeats}")


def _repeat_out(a, s):
    if a.axis is None:
        return (prod(s) * a.repeats,)
    ax = norm_axis(a.axis, len(s), "repeat")
    return s[:ax] + (s[ax] * a.repeats,) + s[ax + 1:]


def _repeat_bwd(a, g, x):
    if a.axis is None:
        return g.reshape(-1, a.repeats).sum(axis=1).reshape(x.shape)
    ax = norm_axis(a.axis, x.ndim, "repeat")
    sh = x.shape[:ax] + (x.shape[ax], a.repeats) + x.shape[ax + 1:]
    return g.reshape(sh).sum(axis=ax + 1)


unary_shape_op(
    "repeat", Checked(_repeat_check, repeats=Field("int"), axis=Field("int_or_none", None)),
    lambda a, x: np.repeat(x, a.repeats, axis=a.axis), _repeat_out, _repeat_bwd,
    doc="Repeat each element ``repeats`` times along ``axis`` (flattened when None).\n\n"
        "    Parameters\n    ----------\n    data : Symbol or NDArray\n    repeats : int\n"
        "    axis : int or None\n")


# ----------------------------------------------------------------------------- clip
def _clip_check(op, a):
    require(a.a_min <= a.a_max, op, f"a_min {a.a_min} must not exceed a_max {a.a_max}")


_CLIP = Checked(_clip_check, a_min=Field("float"), a_max=Field("float"))


def _clip(a, x):
    return np.clip(x, a.a_min, a.a_max).astype(x.dtype, copy=False)


def _clip_grad(a, g, x):
    """ograd where a_min <= data <= a_max."""
    return g * ((x >= a.a_min) & (x <= a.a_max))


def _keeps_zero(a, s):
    return a.a_min <= 0 <= a.a_max


unary_shape_op(
    "clip", _CLIP, _clip, lambda a, s: s,
    _clip_grad, in_shape=lambda a, o, c: o, masked=True,
    aliases=("_sparse_clip",),
    extra_rows=(
        Dispatch((CSR,), (CSR,), lambda a, xs: (kcsr.map_values(xs[0], lambda v: _clip(a, v)),),
                 when=_keeps_zero),
        Dispatch((RSP,), (RSP,), lambda a, xs: (krsp.map_values(xs[0], lambda v: _clip(a, v)),),
                 when=_keeps_zero),
        # beyond MXNet (Operator not implemented): a range excluding 0 gives a dense result
        Dispatch((CSR,), (DNS,), lambda a, xs: (_clip(a, st.todense(xs[0])),)),
        Dispatch((RSP,), (DNS,), lambda a, xs: (_clip(a, st.todense(xs[0])),))),
    doc="""Clip values into [a_min, a_max].

    Storage: csr -> csr and row_sparse -> row_sparse when a_min <= 0 <= a_max (as MXNet);
    when the range excludes 0 the result is dense (MXNet raises "not implemented").

    Parameters
    ----------
    data : Symbol or NDArray
    a_min, a_max : float

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.clip(mx.nd.array([-2., 0.5, 3.]), a_min=-1, a_max=1).asnumpy().tolist()
    [-1.0, 0.5, 1.0]
    """)


# ----------------------------------------------------------------------------- Cast
_CAST_TYPES = ("float16", "float32", "float64", "int32", "int64", "int8", "uint8", "bool",
               "bfloat16")


def _cast_dtype(a):
    return np.dtype(np.float32) if a.dtype == "bfloat16" else dtype_of(a.dtype)


def _cast_type(attrs, ins, outs):
    rules.set_type(outs, 0, _cast_dtype(attrs), "output")
    return ins, outs


register(OpDef(
    "Cast", params=Params(dtype=Field("str", choices=_CAST_TYPES, doc="target dtype")),
    dispatch=(Dispatch((DNS,), (DNS,), lambda a, xs: (xs[0].astype(_cast_dtype(a)),)),),
    infer_type=_cast_type,
    gradient=lambda node, og: [bw("_backward_Cast", [og[0], node.inputs[0]], node, "backward")],
    aliases=("cast",),
    doc="""Cast to ``dtype``; the gradient is cast back to the input dtype.

    Parameters
    ----------
    data : Symbol or NDArray
    dtype : {'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8', 'bool'}

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.Cast(mx.nd.array([1.7]), dtype='int32').asnumpy().tolist()
    [1]
    """))
register(OpDef(
    "_backward_Cast", inputs=("ograd", "data"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (xs[0].astype(xs[1].dtype),)),),
    infer_shape=_like_data, infer_type=lambda a, i, o: (i, [i[1] if i[1] is not None else o[0]])))


# ----------------------------------------------------------------------------- Concat
def _n_args(attrs):
    return tuple(f"arg{i}" for i in range(attrs.num_args))


def _concat_check(op, a):
    require(a.num_args >= 1, op, f"num_args must be positive, got {a.num_args}")


_CONCAT = Checked(_concat_check, num_args=Field("int", doc="number of inputs"),
                  dim=Field("int", 1, doc="the axis to join on"))


def concat_shape(attrs, ins, outs):
    """Inputs agree except along ``dim``; output dim is the sum (one unknown filled back)."""
    ref = next((s for s in list(ins) + list(outs) if s is not None), None)
    if ref is None:
        return ins, outs
    nd = len(ref)
    ax = norm_axis(attrs.dim, nd, "Concat")
    common = [None] * nd
    for side, vals in (("input", ins), ("output", outs)):
        for i, s in enumerate(vals):
            if s is None:
                continue
            if len(s) != nd:
                raise _conflict(i, f"{nd}-D", s, side)
            for k in range(nd):
                if k != ax and s[k] is not None:
                    if common[k] is not None and common[k] != s[k]:
                        raise _conflict(i, tuple(common), s, side)
                    common[k] = s[k]
    for i in range(len(ins)):
        cur = ins[i][ax] if ins[i] is not None else None
        rules.set_shape(ins, i, tuple(cur if k == ax else common[k] for k in range(nd)))
    sizes = [s[ax] for s in ins]
    total = None if any(v is None for v in sizes) else sum(sizes)
    rules.set_shape(outs, 0, tuple(total if k == ax else common[k] for k in range(nd)), "output")
    out_ax = outs[0][ax]
    unknown = [i for i, v in enumerate(sizes) if v is None]
    if out_ax is not None and len(unknown) == 1:
        i = unknown[0]
        rules.set_shape(ins, i, tuple(out_ax - sum(v for v in sizes if v is not None)
                                      if k == ax else ins[i][k] for k in range(nd)))
    return ins, outs


def _concat_grad(node, og):
    return multi_bw("_backward_Concat", [og[0]] + list(node.inputs), node, "backward",
                    len(node.inputs), **kept(node))


def _concat_bwd(a, xs):
    g = st.todense(xs[0])
    ax = norm_axis(a.dim, g.ndim, "Concat")
    bounds = np.cumsum([x.shape[ax] for x in xs[1:]])[:-1]
    return tuple(np.array(p) for p in np.split(g, bounds, axis=ax))


_concat_bwd_shape = rules.grads_like_inputs(1)


register(OpDef(
    "Concat", params=_CONCAT, inputs=_n_args, key_var_num_args="num_args",
    dispatch=(Dispatch((DNS, "..."), (DNS,), lambda a, xs: (np.concatenate(
                  [st.todense(x) for x in xs], axis=a.dim),)),
              Dispatch((CSR, "..."), (CSR,), lambda a, xs: (kcsr.concat_rows_csr(list(xs)),),
                       when=lambda a, s: a.dim == 0)),
    infer_shape=concat_shape, infer_type=rules.same_type, gradient=_concat_grad,
    aliases=("concat", "_sparse_concat"),
    doc="""Join arrays along axis ``dim`` (default 1).

    Storage: all csr with dim=0 -> csr (MXNet's sparse row); other mixes fall back to dense.

    Parameters
    ----------
    *data : Symbols or NDArrays
    num_args : int (set automatically)
    dim : int, default 1

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.concat(mx.nd.zeros((2, 1)), mx.nd.ones((2, 2)), dim=1).shape
    (2, 3)
    """))
register(OpDef(
    "_backward_Concat", params=_CONCAT, inputs=lambda a: ("ograd",) + _n_args(a),
    num_outputs=lambda a: a.num_args,
    dispatch=(Dispatch(("*", "..."), (DNS,), _concat_bwd),),
    infer_shape=_concat_bwd_shape, infer_type=rules.same_type))


def _rnn_param_concat_shape(attrs, ins, outs):
    """Concat's rule, and the remainder of a known total split evenly over several unknown
    inputs: a fused RNN's flat parameters, whose only unknowns are the first layer's input
    weights of each direction (MXNet's ``_rnn_param_concat``)."""
    ins, outs = concat_shape(attrs, ins, outs)
    if outs[0] is None or len(outs[0]) != 1 or outs[0][0] is None:
        return ins, outs
    unknown = [i for i, s in enumerate(ins) if s is None or s[0] is None]
    if len(unknown) > 1:
        rest = outs[0][0] - sum(s[0] for s in ins if s is not None and s[0] is not None)
        if rest % len(unknown) == 0:
            for i in unknown:
                rules.set_shape(ins, i, (rest // len(unknown),))
    return ins, outs


register(OpDef(
    "_rnn_param_concat", params=_CONCAT, inputs=_n_args, key_var_num_args="num_args",
    dispatch=(Dispatch((DNS, "..."), (DNS,), lambda a, xs: (np.concatenate(
        [st.todense(x) for x in xs], axis=a.dim),)),),
    infer_shape=_rnn_param_concat_shape, infer_type=rules.same_type, gradient=_concat_grad,
    doc="""Concat for a fused RNN's flat parameter vector; infers the unknown input sizes.

    Parameters
    ----------
    *data : Symbols or NDArrays (1-D)
    num_args : int (set automatically)
    dim : int, default 1
    """))


_FLAT = Params(num_args=Field("int"))


def _flat_shape(attrs, ins, outs):
    if all(s is not None and None not in s for s in ins):
        rules.set_shape(outs, 0, (sum(prod(s) for s in ins),), "output")
    return ins, outs


def _flat_bwd(a, xs):
    g = xs[0]
    out, at = [], 0
    for x in xs[1:]:
        out.append(g[at:at + x.size].reshape(x.shape))  # views of a fresh gradient
        at += x.size
    return tuple(out)


register(OpDef(
    "_rnn_param_flat", params=_FLAT, inputs=_n_args, key_var_num_args="num_args",
    dispatch=(Dispatch((DNS, "..."), (DNS,), lambda a, xs: (np.concatenate(
        [st.todense(x).reshape(-1) for x in xs]),)),),
    infer_shape=_flat_shape, infer_type=rules.same_type,
    gradient=lambda node, og: multi_bw("_backward_rnn_param_flat", [og[0]] + list(node.inputs),
                                       node, "backward", len(node.inputs), **kept(node)),
    doc="""The arrays flattened and joined into one vector: a Gluon recurrent layer's fused
    parameters in one recorded call (``_rnn_param_concat`` of each one's ``reshape(-1)``).

    Parameters
    ----------
    *data : NDArrays
    num_args : int (set automatically)
    """))
register(OpDef(
    "_backward_rnn_param_flat", params=_FLAT, inputs=lambda a: ("ograd",) + _n_args(a),
    num_outputs=lambda a: a.num_args,
    dispatch=(Dispatch((DNS, "..."), (DNS,), _flat_bwd),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.same_type))


# ----------------------------------------------------------------------------- stack
def _stack_check(op, a):
    require(a.num_args >= 1, op, f"num_args must be positive, got {a.num_args}")


_STACK = Checked(_stack_check, axis=Field("int", 0), num_args=Field("int"))


def stack_shape(attrs, ins, outs):
    cur = rules.merged_shape(ins)
    if cur is None and outs[0] is not None:
        ax = norm_axis(attrs.axis, len(outs[0]), "stack")
        cur = tuple(outs[0][:ax]) + tuple(outs[0][ax + 1:])
    if cur is None:
        return ins, outs
    for i in range(len(ins)):
        rules.set_shape(ins, i, cur)
    ax = attrs.axis + len(cur) + 1 if attrs.axis < 0 else attrs.axis
    rules.set_shape(outs, 0, tuple(cur[:ax]) + (attrs.num_args,) + tuple(cur[ax:]), "output")
    return ins, outs


def _stack_bwd(a, xs):
    g = xs[0]
    ax = norm_axis(a.axis, g.ndim, "stack")
    return tuple(np.ascontiguousarray(np.take(g, i, axis=ax)) for i in range(a.num_args))


register(OpDef(
    "stack", params=_STACK, inputs=_n_args, key_var_num_args="num_args",
    dispatch=(Dispatch((DNS, "..."), (DNS,), lambda a, xs: (np.stack(
        [st.todense(x) for x in xs], axis=a.axis),)),),
    infer_shape=stack_shape, infer_type=rules.same_type,
    gradient=lambda node, og: multi_bw("_backward_stack", [og[0]], node, "backward",
                                       len(node.inputs), **kept(node)),
    doc="Join same-shaped arrays along a new axis.\n\n    Parameters\n    ----------\n"
        "    *data : Symbols or NDArrays\n    axis : int, default 0\n    num_args : int\n"))
register(OpDef(
    "_backward_stack", params=_STACK, inputs=("ograd",), num_outputs=lambda a: a.num_args,
    dispatch=(Dispatch((DNS,), (DNS,), _stack_bwd),),
    infer_shape=lambda a, i, o: (i, [None if i[0] is None else tuple(
        d for k, d in enumerate(i[0]) if k != norm_axis(a.axis, len(i[0]), "stack"))] * len(o)),
    infer_type=rules.same_type))


# ----------------------------------------------------------------------------- SliceChannel
def _split_check(op, a):
    require(a.num_outputs >= 1, op, f"num_outputs must be positive, got {a.num_outputs}")


_SPLIT = Checked(_split_check, num_outputs=Field("int", doc="number of equal parts"),
                 axis=Field("int", 1, doc="axis to split"),
                 squeeze_axis=Field("bool", False, doc="drop the split axis (parts of size 1)"))


def split_shape(attrs, ins, outs):
    """Parts are equal slices along ``axis``; works forward and backward (partial shapes)."""
    n = attrs.num_outputs
    for o in outs:
        if o is None:
            continue
        ax = attrs.axis if attrs.axis >= 0 else attrs.axis + len(o) + (
            1 if attrs.squeeze_axis else 0)
        if attrs.squeeze_axis:
            rules.set_shape(ins, 0, tuple(o[:ax]) + (n,) + tuple(o[ax:]))
        else:
            d = None if o[ax] is None else o[ax] * n
            rules.set_shape(ins, 0, tuple(o[:ax]) + (d,) + tuple(o[ax + 1:]))
    if ins[0] is not None:
        s = tuple(ins[0])
        ax = norm_axis(attrs.axis, len(s), "SliceChannel")
        if s[ax] is not None and s[ax] % n:
            raise _conflict(0, f"axis {ax} divisible by num_outputs={n}", s)
        if attrs.squeeze_axis and s[ax] is not None and s[ax] != n:
            raise _conflict(0, f"axis {ax} of size num_outputs={n} with squeeze_axis", s)
        part = None if s[ax] is None else s[ax] // n
        o = s[:ax] + s[ax + 1:] if attrs.squeeze_axis else s[:ax] + (part,) + s[ax + 1:]
        for i in range(n):
            rules.set_shape(outs, i, o, "output")
    return ins, outs


def _split_fwd(a, xs):
    x = xs[0]
    ax = norm_axis(a.axis, x.ndim, "SliceChannel")
    parts = np.split(x, a.num_outputs, axis=ax)
    if a.squeeze_axis:
        parts = [np.squeeze(p, axis=ax) for p in parts]
    return tuple(np.array(p) for p in parts)


def _split_bwd(a, xs):
    gs = [st.todense(g) for g in xs]
    if a.squeeze_axis:
        ax = a.axis if a.axis >= 0 else a.axis + gs[0].ndim + 1
        return (np.stack(gs, axis=ax),)
    ax = norm_axis(a.axis, gs[0].ndim, "SliceChannel")
    return (np.concatenate(gs, axis=ax),)


register(OpDef(
    "SliceChannel", params=_SPLIT, num_outputs=lambda a: a.num_outputs,
    output_names=lambda a: tuple(f"output{i}" for i in range(a.num_outputs)),
    dispatch=(Dispatch((DNS,), (DNS,), _split_fwd),), infer_shape=split_shape,
    infer_type=rules.same_type,
    gradient=lambda node, og: [bw("_backward_SliceChannel", list(og), node, "backward",
                                  **kept(node))],
    aliases=("split",),
    doc="""Split into ``num_outputs`` equal parts along ``axis``.

    With ``squeeze_axis=True`` (parts of size 1) the axis is removed from each part.

    Parameters
    ----------
    data : Symbol or NDArray
    num_outputs : int
    axis : int, default 1
    squeeze_axis : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> parts = mx.sym.split(mx.sym.var('x'), num_outputs=3, axis=1, squeeze_axis=True)
    >>> parts.infer_shape(x=(2, 3, 4))[1]
    [(2, 4), (2, 4), (2, 4)]
    """))
register(OpDef(
    "_backward_SliceChannel", params=_SPLIT,
    inputs=lambda a: tuple(f"ograd{i}" for i in range(a.num_outputs)),
    dispatch=(Dispatch(("*", "..."), (DNS,), _split_bwd),),
    infer_shape=lambda a, i, o: split_shape(a, o, i)[::-1], infer_type=rules.same_type))


# ----------------------------------------------------------------------------- reverse
def _reverse(a, x):
    axes = tuple(norm_axis(ax, x.ndim, "reverse") for ax in a.axis)
    return np.ascontiguousarray(np.flip(x, axis=axes))


unary_shape_op(
    "reverse", Params(axis=Field("shape", doc="axes to reverse")), _reverse, lambda a, s: s,
    lambda a, g, x: _reverse(a, g), in_shape=lambda a, o, c: o, aliases=("flip",),
    doc="Reverse the order of elements along ``axis``.\n\n    Parameters\n    ----------\n"
        "    data : Symbol or NDArray\n    axis : tuple of int\n")
