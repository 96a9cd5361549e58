"""Automatic mixed precision (MXNet 1.9.1's ``mx.contrib.amp.amp``).

What runs here, on sparsym's CPU kernels:

- ``init('float16')`` wraps the ``mx.nd`` / ``mx.sym`` operator functions as MXNet does:
  the operators of :func:`list_lp16_ops` cast their float inputs to float16, those of
  :func:`list_fp32_ops` (and the conditional ones) to float32, those of
  :func:`list_widest_type_cast` to the widest input type, and the loss outputs
  (``SoftmaxOutput``...) scale their gradient by the dynamic loss scale. sparsym applies
  the float16 casts to CPU arrays (MXNet does so only on GPUs, and its CPU kernels then
  refuse float16 ``FullyConnected``/``Convolution``): the float16 operators run in
  NumPy's float16, correct but not faster than float32.
- ``init_trainer``, ``scale_loss``, ``unscale`` and the loss scaler of a Gluon ``Trainer``
  (a step whose gradients overflow is skipped and the scale halves) work as in MXNet.
- ``list_*`` return MXNet 1.9.1's operator lists.

What does not: bfloat16 (NumPy has no bfloat16 arrays; ``init('bfloat16')`` raises
``NotImplementedError``) and the graph conversions ``convert_symbol``, ``convert_model``,
``convert_hybrid_block`` and ``convert_bucketing_module`` (MXNet's C++
``ReducePrecision`` pass; they raise ``NotImplementedError``).
"""
from __future__ import annotations

import contextlib
import logging

import numpy as np

from ... import ndarray, symbol
from ... import optimizer as opt
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol
from . import lists
from .loss_scaler import LossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "list_lp16_ops", "list_fp32_ops",
           "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params",
           "convert_symbol"]

# MXNet's marker for bfloat16 (a uint16 record): the list_* functions take it as the
# bfloat16 target
bfloat16 = np.dtype([("bfloat16", np.uint16)])

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None

# operator-name prefixes and the submodule holding the short name (MXNet's
# base._OP_NAME_PREFIX_LIST)
_PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")
_FLOAT_TYPES = (np.dtype(np.float16), np.dtype(np.float32))


def _cast(x, dtype):
    """``x`` cast to ``dtype`` by ``amp_cast`` when it is a float16/float32 array or any
    symbol; anything else unchanged."""
    if isinstance(x, Symbol):
        return symbol.amp_cast(x, dtype=dtype)
    if isinstance(x, NDArray) and np.dtype(x.dtype) != np.dtype(dtype) \
            and np.dtype(x.dtype) in _FLOAT_TYPES:
        return ndarray.amp_cast(x, dtype=dtype)
    return x


def _home(name, module):
    """(short name, module holding it) for an operator name, or None when absent here."""
    for prefix in _PREFIXES:
        if name.startswith(prefix) and not (prefix == "_random_"
                                            and not name.endswith("_like")):
            short, where = name[len(prefix):], getattr(module, prefix[1:-1], None)
            break
    else:
        short, where = name, (module._internal if name.startswith("_") else module)
    if where is None or not hasattr(where, short):
        return None   # a numpy-interface (_np*) or other operator sparsym lacks
    return short, where


def _replace(module, name, make):
    """Replace operator ``name`` of ``module`` (and of ``module.op``) by ``make(f)``."""
    found = _home(name, module)
    if found is None:
        return
    short, where = found
    wrapped = make(getattr(where, short))
    setattr(where, short, wrapped)
    if where is module and hasattr(module.op, short):
        setattr(module.op, short, wrapped)


def _named_like(new, f):
    """Give wrapper ``new`` the name, module and docstring of ``f``."""
    new.__name__, new.__module__, new.__doc__ = f.__name__, f.__module__, f.__doc__
    return new


def _nd_caster(target, fp32_param=None, cond=None):
    """A wrapper factory: cast the NDArray arguments to ``target`` before the call."""
    def make(f):
        def call(*args, **kwargs):
            if cond is not None and kwargs.get(cond[0]) not in cond[1]:
                return f(*args, **kwargs)
            if fp32_param:
                args = [x if i < len(fp32_param) and fp32_param[i] else _cast(x, target)
                        for i, x in enumerate(args)]
                kwargs = {k: v if k in fp32_param else _cast(v, target)
                          for k, v in kwargs.items()}
            else:
                args = [_cast(x, target) for x in args]
                kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
            return f(*args, **kwargs)
        return _named_like(call, f)
    return make


def _sym_caster(target, fp32_param=None, cond=None):
    """A wrapper factory: build the symbol, then cast every input of its node (auxiliary
    states and float32-only parameters kept) to ``target``."""
    def make(f):
        def call(*args, **kwargs):
            if cond is not None and kwargs.get(cond[0]) not in cond[1]:
                return f(*args, **kwargs)
            out = f(*args, **kwargs)
            aux = set(out.list_auxiliary_states())
            node = out._outputs[0][0]
            new_inputs = []
            for i, (src, idx) in enumerate(node.inputs):
                keep = (src.op is None and src.name in aux) or (
                    fp32_param and i < len(fp32_param) and fp32_param[i])
                new_inputs.append((src, idx) if keep else
                                  _cast(Symbol([(src, idx)]), target)._outputs[0])
            node.inputs = new_inputs
            out._cache = None
            return out
        return _named_like(call, f)
    return make


def _widest(f):
    """Wrap ``f`` so its float inputs run in the widest float type among them."""
    def call(*args, **kwargs):
        args = list(args)
        slots = [(args, i) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
        slots += [(kwargs, k) for k, a in kwargs.items() if isinstance(a, (Symbol, NDArray))]
        values = [c[k] for c, k in slots]
        if any(isinstance(v, Symbol) for v in values):
            cast = symbol.amp_multicast(*values, num_outputs=len(values))
            for (c, k), v in zip(slots, cast):
                c[k] = v
        else:
            wide = (np.float32 if any(np.dtype(v.dtype) == np.float32 for v in values)
                    else np.float16)
            for (c, k), v in zip(slots, values):
                if np.dtype(v.dtype) == np.float16 and wide == np.float32:
                    c[k] = ndarray.amp_cast(v, dtype=wide)
        return f(*args, **kwargs)
    return _named_like(call, f)


def _wrap_operators(module, target, lp16_ops, conditional_fp32_ops, fp32_ops):
    """Wrap the operator functions of ``mx.nd`` or ``mx.sym`` (MXNet's
    ``_wrap_symbol_functions``)."""
    caster = _sym_caster if module is symbol else _nd_caster
    fp32_params = list_lp16_use_fp32_params(target) or {}
    for name in lp16_ops if lp16_ops is not None else list_lp16_ops(target):
        _replace(module, name, caster(target, fp32_param=fp32_params.get(name)))
    for name in fp32_ops if fp32_ops is not None else list_fp32_ops(target):
        _replace(module, name, caster(np.float32))
    conds = (conditional_fp32_ops if conditional_fp32_ops is not None
             else list_conditional_fp32_ops(target))
    for name, arg, values in conds:
        _replace(module, name, caster(np.float32, cond=(arg, values)))
    for name in list_widest_type_cast(target):
        _replace(module, name, _widest)


def _wrap_loss_outputs(module, scaler, target):
    """Loss outputs scale their gradient by the loss scale (NDArrays); symbols warn that
    dynamic scaling does not reach them, as in MXNet."""
    def scaling(f):
        def call(*args, **kwargs):
            kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
            return f(*args, **kwargs)
        return _named_like(call, f)

    def warning(f):
        def call(*args, **kwargs):
            logging.warning("%s does not support dynamic loss scaling in symbolic and "
                            "hybridized execution.", f.__name__)
            return f(*args, **kwargs)
        return _named_like(call, f)

    for name in list_loss_output_functions(target):
        if hasattr(module, name):
            setattr(module, name, (scaling if module is ndarray else warning)(
                getattr(module, name)))


def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Turn AMP on for the operators created from now on (call it before building the model).

    Parameters
    ----------
    target_dtype : {'float16'}
        The low-precision type. MXNet's ``'bfloat16'`` raises ``NotImplementedError`` here.
    target_precision_ops : list of str, optional
        Operators cast to ``target_dtype`` (default :func:`list_lp16_ops`).
    conditional_fp32_ops : list of (str, str, list of str), optional
        (operator, parameter, values): cast to float32 when the parameter takes one of the
        values (default :func:`list_conditional_fp32_ops`).
    fp32_ops : list of str, optional
        Operators cast to float32 (default :func:`list_fp32_ops`).
    """
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    assert target_dtype in ["float16", np.float16, "bfloat16", bfloat16], \
        "AMP currently supports only float16 or bfloat16 as a target_dtype"
    if target_dtype in ("bfloat16", bfloat16):
        raise NotImplementedError(
            "amp.init(target_dtype='bfloat16'): sparsym has no bfloat16 arrays (NumPy "
            "has no bfloat16 type); use target_dtype='float16' or train in float32")
    _amp_initialized = True
    logging.info("Using AMP")
    target = np.dtype(target_dtype)
    for module in (symbol, ndarray):
        _wrap_operators(module, target, target_precision_ops, conditional_fp32_ops, fp32_ops)
    _loss_scaler = LossScaler()
    _wrap_loss_outputs(ndarray, _loss_scaler, target)
    _wrap_loss_outputs(symbol, _loss_scaler, target)


def _trainer_class():
    """Gluon's Trainer (gluon sits above contrib: imported on use)."""
    from ...gluon.trainer import Trainer
    return Trainer


def init_trainer(optimizer_or_trainer):
    """Give a Gluon ``Trainer`` a dynamic loss scaler (after :func:`init`).

    Parameters
    ----------
    optimizer_or_trainer : Trainer
        An ``Optimizer`` raises ``TypeError`` (AMP works with Gluon's Trainer only).
    """
    global _amp_loss_scale_initialized
    assert _amp_initialized, "AMP not initialized, did you forget to call amp.init()?"
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        scaler = _loss_scaler
    else:
        scaler = LossScaler()
    if isinstance(optimizer_or_trainer, _trainer_class()):
        optimizer_or_trainer._amp_loss_scaler = scaler
        optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                        f"instead is {type(optimizer_or_trainer)}")


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Yield ``loss`` (or each loss of a list) times the loss scale, and make the next
    ``step`` divide the gradients by it.

    Parameters
    ----------
    loss : NDArray or list of NDArray
    optimizer_or_trainer : Trainer
        A Trainer given to :func:`init_trainer`.
    """
    trainer = optimizer_or_trainer
    assert getattr(trainer, "_amp_loss_scaler", None) is not None, \
        "Loss scaler is not initialized, did you forget to call amp.init_trainer()?"
    scale = trainer._amp_loss_scaler.loss_scale
    trainer._scale = trainer._amp_original_scale / scale
    if isinstance(loss, (list, tuple)):
        yield [l * scale for l in loss]
    else:
        yield scale * loss


def unscale(optimizer_or_trainer):
    """Divide the gradients by the loss scale now (e.g. before clipping them).

    Parameters
    ----------
    optimizer_or_trainer : Trainer
    """
    trainer = optimizer_or_trainer
    if isinstance(trainer, _trainer_class()):
        for p in trainer._params:
            if p._grad is not None:
                for g in p.list_grad():
                    g[:] *= trainer._scale
        trainer._scale = 1.0
    elif isinstance(trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                        f"instead is {type(trainer)}")


def _no_graph_pass(name):
    """A function that raises NotImplementedError naming MXNet's graph pass."""
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"amp.{name}: the mixed-precision graph conversion (MXNet's ReducePrecision "
            "pass) is not implemented by sparsym; use amp.init() before building the model "
            "to run the float16 operators, or keep the model in float32")
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"MXNet's ``amp.{name}``: not implemented here (NotImplementedError)."
    return refuse


convert_symbol = _no_graph_pass("convert_symbol")
convert_model = _no_graph_pass("convert_model")
convert_hybrid_block = _no_graph_pass("convert_hybrid_block")
convert_bucketing_module = _no_graph_pass("convert_bucketing_module")


def _lists_for(target_dtype):
    """The list module of a target type, with MXNet's assertion for anything else."""
    if target_dtype in ("float16", np.float16):
        return lists.symbol_fp16, "FP16"
    assert target_dtype == bfloat16, "not supported type"
    return lists.symbol_bf16, "BF16"


def list_lp16_ops(target_dtype):
    """Operators AMP casts to the low-precision type (float16 or ``amp.bfloat16``)."""
    mod, lp = _lists_for(target_dtype)
    return getattr(mod, f"{lp}_FUNCS")


def list_fp32_ops(target_dtype):
    """Operators AMP casts to float32."""
    return _lists_for(target_dtype)[0].FP32_FUNCS


def list_lp16_fp32_ops(target_dtype):
    """Operators that run in either precision (left as they are)."""
    mod, lp = _lists_for(target_dtype)
    return getattr(mod, f"{lp}_FP32_FUNCS")


def list_conditional_fp32_ops(target_dtype):
    """(operator, parameter, values) cast to float32 when the parameter takes a value."""
    return _lists_for(target_dtype)[0].CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype):
    """Operators run in the widest type among their inputs."""
    return _lists_for(target_dtype)[0].WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype):
    """Loss outputs whose gradient the loss scale multiplies."""
    return _lists_for(target_dtype)[0].LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype):
    """Per operator, which inputs stay float32 in bfloat16 mode (None for float16)."""
    mod, lp = _lists_for(target_dtype)
    return None if lp == "FP16" else mod.BF16_USE_FP32_PARAMS
