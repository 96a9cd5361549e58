"""One frozen record per operator; storage dispatch resolution and the fallback policy."""
from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ... import storage as st
from ...base import MXNetError, NotImplementedForStype, getenv
from . import rules
from .params import NO_PARAMS, Params

logger = logging.getLogger("sparsym")

__all__ = ["Dispatch", "OpDef", "register", "register_alias", "get_op", "all_ops",
           "resolve_dispatch", "run_raw", "ufunc_kernel"]


@dataclass(frozen=True)
class Dispatch:
    """One storage row: input stypes ('*' = any) -> output stypes, the kernel and a guard.

    ``kernel(attrs, inputs) -> tuple of outputs`` works on raw values. ``ins`` may end with
    ``"..."``: any further inputs, of the stype before it. ``outs`` entries may be an int
    ``i`` meaning "the stype of input i". ``when(attrs, in_stypes)`` guards the row.

    Kernel capabilities the executor and ``nd.*`` read:

    writes_out
        The kernel is called ``kernel(attrs, inputs, out=None)``; when ``out`` is a tuple of
        preallocated C-contiguous arrays with the inferred output shapes and dtypes, it
        writes its results there (they may alias an input named in the op's ``inplace``
        pairs) and returns them. Without ``out`` it behaves as a pure kernel. Honoured only
        when every output is dense.
    weight_inplace
        Optimizer updates: when ``nd.<op>(..., out=weight)`` is called, attrs carry
        ``__inplace__`` and the kernel updates the weight where it lies.
    blocked
        Inside a plan (attrs carry ``__blocked__``) the kernel accepts
        ``kernels.onednn.Tensor`` inputs (oneDNN's blocked layouts) and may return Tensor
        outputs; the executor turns a Tensor into a NumPy array before any other step and
        at the plan's edges, so NDArray users never see one. Never set with writes_out.
    """

    ins: tuple
    outs: tuple
    kernel: Callable
    when: Callable | None = None
    writes_out: bool = False
    weight_inplace: bool = False
    blocked: bool = False
    # ``f(attrs, in_stypes) -> out stypes`` when the row's output stypes are computed
    # (Custom ops ask the user's infer_storage_type); ``outs`` is then a placeholder
    infer_stypes: Callable | None = None

    def matches(self, attrs, in_stypes) -> bool:
        """Whether this row takes ``in_stypes`` under ``attrs`` (stypes, then the guard)."""
        if self.ins and self.ins[-1] == "...":
            fixed = self.ins[:-1]
            if len(in_stypes) < len(fixed):
                return False
            pairs = zip(fixed, in_stypes)
            rest = in_stypes[len(fixed):]
            last = fixed[-1] if fixed else "*"
            if not all(r == last or last == "*" for r in rest):
                return False
        else:
            if len(self.ins) != len(in_stypes):
                return False
            pairs = zip(self.ins, in_stypes)
        if not all(p == "*" or p == s for p, s in pairs):
            return False
        return self.when is None or bool(self.when(attrs, in_stypes))

    def out_stypes(self, in_stypes, n_out):
        outs = self.outs if len(self.outs) == n_out else (self.outs[0],) * n_out
        return tuple(in_stypes[o] if isinstance(o, int) else o for o in outs)


@dataclass(frozen=True)
class OpDef:
    """Declarative operator record; passes read these fields and never branch on ``name``.

    inputs: input names, or ``f(attrs) -> names`` for variadic ops.
    num_outputs: int or ``f(attrs) -> int``; output_names likewise (MXNet's list_outputs).
    aux: names of inputs that are auxiliary states (BatchNorm's moving stats), or
    ``f(attrs) -> names`` (Custom ops).
    infer_shape / infer_type: ``f(attrs, in, out) -> (in, out)``; None marks unknown.
    gradient: ``f(node, out_grads) -> [entry | None per input]`` built from registered ops.
    forward_stype: ``f(attrs, in_stypes) -> out stypes`` overrides the table for the
    requested-stype ops (cast_storage, dot's forward_stype) when the kernel cannot decide.
    """

    name: str
    dispatch: tuple
    params: Params = NO_PARAMS
    inputs: tuple | Callable = ("data",)
    num_outputs: int | Callable = 1
    output_names: tuple | Callable = ("output",)
    aux: tuple | Callable = ()
    mutates: tuple = ()
    infer_shape: Callable = rules.same_shape
    infer_type: Callable = rules.same_type
    gradient: Callable | None = None
    aliases: tuple = ()
    doc: str = ""
    # var-arg ops take their count from this param (add_n's num_args)
    key_var_num_args: str | None = None
    # when True the kernel receives attrs with '__is_train__' (Dropout, BatchNorm)
    needs_is_train: bool = False
    # the kernel draws random numbers: two equal nodes are different (no merging)
    random: bool = False
    # ``f(attrs, in_stypes)`` raising MXNetError where MXNet refuses the dense fallback
    # (BatchNorm's fix_gamma on sparse inputs); called before a fallback is chosen
    check_fallback: Callable | None = None
    # when True the kernel's attrs carry '__out_shapes__' (inferred output shapes): ops with
    # no data input whose shape may be completed by inference (zeros with shape (0, n))
    needs_out_shapes: bool = False
    # output shapes depend on the input values (boolean_mask): a recorded tape's plan takes
    # them from the values the call produced
    value_dependent_shape: bool = False
    # when True an executor step's attrs carry '__unused__' (indices of outputs nothing
    # reads) and the kernel may return None for them (MXNet's kNullOp request: FC's
    # backward skips the data gradient of a first layer)
    skips_unused_outputs: bool = False
    # outputs a Symbol exposes (MXNet's NumVisibleOutputs); None = all. Hidden outputs
    # (Dropout's mask, BatchNorm's saved mean/var) feed the backward op only.
    num_visible_outputs: int | Callable | None = None
    # (input index, output index) pairs whose buffers may be shared when the input is not
    # used afterwards (MXNet's FInplaceOption); honoured only for ``out``-capable kernels
    inplace: tuple = ()
    # MXNet registers no FListInputNames for the op: its executor monitor names the inputs
    # input0, input1... (Activation, SoftmaxActivation) instead of the argument names
    monitor_input_names: tuple | None = None
    # (input name, initializer JSON) pairs: an input the symbol front end auto-creates as a
    # variable gets this ``__init__`` attribute (MXNet's FSetInputVarAttrOnCompose: BatchNorm's
    # moving_var starts at one, PReLU's gamma at 0.25)
    input_init: tuple = ()
    # ``f(attrs) -> post-op tuple or None``: the op (one data input, elementwise) can run as
    # a post-op of its input's producer (``passes/fuse.py``): ('relu',), ('tanh',)...
    post_op: Callable | None = None
    # the kernel applies the post-ops in its attrs' ``__post_ops__`` to its output, in order,
    # on every path (Convolution: oneDNN's post-op attribute, else NumPy after the kernel)
    fuses_post_ops: bool = False
    # ``f(attrs) -> op name or None``: the op whose node computes this op followed by a
    # per-channel affine consumer (``affine_fold``) in one step (Convolution -> BatchNorm)
    folds_affine: Callable | None = None
    # ``f(attrs) -> bool``: on its moving statistics the op is an affine map per channel of
    # its first input's axis 1, foldable into that input's producer (``folds_affine``)
    affine_fold: Callable | None = None
    # the op is ``lhs + rhs`` of two dense same-shape inputs: it can run as a sum post-op of
    # the producer of either (``passes/fuse.py``), accumulating into a copy of the other
    sums_inputs: bool = False
    # the kernel takes one more input when its attrs carry ``__sum__`` and adds it to its
    # first output before its post-ops (oneDNN's sum post-op: a residual add)
    fuses_sum: bool = False

    def input_names(self, attrs) -> tuple:
        return tuple(self.inputs(attrs)) if callable(self.inputs) else self.inputs

    def aux_names(self, attrs) -> tuple:
        return tuple(self.aux(attrs)) if callable(self.aux) else self.aux

    def n_outputs(self, attrs) -> int:
        return self.num_outputs(attrs) if callable(self.num_outputs) else self.num_outputs

    def n_visible(self, attrs) -> int:
        v = self.num_visible_outputs
        if v is None:
            return self.n_outputs(attrs)
        return v(attrs) if callable(v) else v

    def out_names(self, attrs) -> tuple:
        if callable(self.output_names):
            return tuple(self.output_names(attrs))
        n = self.n_outputs(attrs)
        if len(self.output_names) == n:
            return self.output_names
        return tuple(f"output{i}" for i in range(n)) if n > 1 else ("output",)


_OPS: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add an operator record under its name and aliases."""
    for key in (op.name,) + tuple(op.aliases):
        if key in _OPS and _OPS[key] is not op:
            raise MXNetError(f"operator {key!r} registered twice")
        _OPS[key] = op
    return op


def register_alias(name: str, *aliases: str) -> OpDef:
    """Add MXNet alias names for an operator registered elsewhere (its record unchanged)."""
    op = get_op(name)
    for key in aliases:
        if key in _OPS and _OPS[key] is not op:
            raise MXNetError(f"operator {key!r} registered twice")
        _OPS[key] = op
    return op


def get_op(name: str) -> OpDef:
    """Look up an operator by name or alias."""
    try:
        return _OPS[name]
    except KeyError:
        raise MXNetError(f"operator {name!r} is not registered") from None


def ufunc_kernel(fn, **kwargs):
    """A dense kernel applying the numpy ufunc ``fn`` to all inputs, able to write into
    preallocated outputs (declare its row ``writes_out=True``; the result is cast to the
    output's dtype, as the shape/type rules decided)."""
    def kernel(attrs, xs, out=None):
        if out is None:
            return (fn(*xs, **kwargs),)
        return (fn(*xs, out=out[0], casting="unsafe", **kwargs),)
    kernel.__name__ = f"ufunc_{getattr(fn, '__name__', 'fn')}"
    return kernel


def has_op(name: str) -> bool:
    return name in _OPS


def all_ops() -> dict:
    """Name (and alias) -> record."""
    return dict(_OPS)


# ----------------------------------------------------------------------------- dispatch
_seen_fallbacks: set = set()
_seen_lock = threading.Lock()


def fallback_policy() -> str:
    """'warn' (default), 'raise' or 'silent' (SPARSYM_STORAGE_FALLBACK)."""
    policy = (getenv("SPARSYM_STORAGE_FALLBACK", "warn") or "warn").lower()
    return policy if policy in ("warn", "raise", "silent") else "warn"


def _fmt_list(stypes):
    return "[" + "".join(f"{s}, " for s in stypes) + "]"


def fallback_message(op_name, attrs, in_stypes, out_stypes) -> str:
    """MXNet's storage-fallback text, so users grepping their logs find it."""
    params = "{" + "".join(f"{json.dumps(k)} : {json.dumps(str(v))}, "
                           for k, v in sorted((attrs or {}).items())) + "}"
    return ("Storage type fallback detected:\n"
            f"operator = {op_name}\n"
            f"input storage types = {_fmt_list(in_stypes)}\n"
            f"output storage types = {_fmt_list(out_stypes)}\n"
            f"params = {params}\n"
            "context.dev_mask = cpu\n"
            "The operator with default storage type will be dispatched for execution. You're "
            "seeing this warning message because the operator above is unable to process the "
            "given ndarrays with specified storage types, context and parameter. Temporary dense "
            "ndarrays are generated in order to execute the operator. This does not affect the "
            "correctness of the programme. You can set environment variable "
            "MXNET_STORAGE_FALLBACK_LOG_VERBOSE to 0 to suppress this warning.")


def report_fallback(op_name, attrs, in_stypes, out_stypes):
    """Apply the fallback policy: raise, or log once per (op, stypes) signature."""
    policy = fallback_policy()
    if policy == "raise":
        raise NotImplementedForStype(
            f"operator {op_name}: no kernel for input storage types {list(in_stypes)} and "
            f"SPARSYM_STORAGE_FALLBACK=raise forbids the dense fallback (it would produce "
            f"{list(out_stypes)}); cast the inputs with cast_storage or change the policy")
    if policy == "silent" or getenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1") == "0":
        return
    key = (op_name, tuple(in_stypes))
    with _seen_lock:
        if key in _seen_fallbacks:
            return
        _seen_fallbacks.add(key)
    logger.warning(fallback_message(op_name, attrs, in_stypes, out_stypes))


def reset_fallback_log():
    """Forget which fallbacks were reported (tests)."""
    with _seen_lock:
        _seen_fallbacks.clear()


def resolve_dispatch(op: OpDef, attrs, in_stypes, n_out=None):
    """Return (row, out_stypes, mode) for one node; mode is 'sparse', 'dense' or 'fallback'.

    The first matching row wins. No match: the dense row (the first that takes all-dense
    inputs, row 0 by convention) on densified inputs, outputs 'default', reported by the
    fallback policy by the caller.
    """
    in_stypes = tuple(in_stypes)
    n_out = op.n_outputs(attrs) if n_out is None else n_out
    for row in op.dispatch:
        if row.matches(attrs, in_stypes):
            outs = (row.out_stypes(in_stypes, n_out) if row.infer_stypes is None
                    else tuple(row.infer_stypes(attrs, in_stypes)))
            dense = all(s == "default" for s in in_stypes) and all(s == "default" for s in outs)
            return row, outs, ("dense" if dense else "sparse")
    if op.check_fallback is not None:
        op.check_fallback(attrs, in_stypes)
    dense_in = ("default",) * len(in_stypes)
    dense_row = next((r for r in op.dispatch if r.matches(attrs, dense_in)), op.dispatch[0])
    # MXNet: a requested forward_stype (dot) without a kernel falls back to dense and
    # casts the result to the requested stype
    fs = attrs.get("forward_stype") if hasattr(attrs, "get") else None
    return dense_row, ((fs or "default"),) * n_out, "fallback"


def run_raw(name: str, inputs: Sequence, **params) -> tuple:
    """Run the registered operator ``name`` on raw values (``np.ndarray``, ``storage.CSR``,
    ``storage.RSP``), ``params`` parsed as ``nd.<name>`` parses them; returns its raw
    results.

    The dispatch row the inputs' stypes select runs, or the dense row on densified inputs
    (results cast to the declared stypes). No shape or type inference runs: this is for the
    layers above ``ops`` that hold raw values they built (kvstore, module) and reach kernels
    only through registered operators.
    """
    op = get_op(name)
    attrs = op.params.parse(name, params)
    in_stypes = tuple(st.stype_of(r) for r in inputs)
    row, out_stypes, mode = resolve_dispatch(op, attrs, in_stypes)
    if mode == "fallback":
        inputs = [st.todense(r) for r in inputs]
    results = tuple(row.kernel(attrs, list(inputs)))
    if mode == "fallback":
        results = tuple(st.cast_raw(r, s) for r, s in zip(results, out_stypes))
    return results
