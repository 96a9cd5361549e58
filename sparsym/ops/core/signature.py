"""The Python signature and docstring of a generated operator front end (nd.*, sym.*).

MXNet generates ``f(input1=None, ..., param1=_Null, ..., out=None, name=None, **kwargs)``
(``f(*data, **kwargs)`` for variadic ops): inputs, then parameters in declaration order.
"""
from __future__ import annotations

import inspect

from .params import Attrs

__all__ = ["front_end_signature", "front_end_doc"]

_P = inspect.Parameter


def declared_inputs(op) -> tuple:
    """The op's input names as its front end lists them (for parameter-dependent inputs:
    the inputs under the default parameters, required ones unset)."""
    if not callable(op.inputs):
        return tuple(op.inputs)
    attrs = Attrs({k: (None if f.required else f.default) for k, f in op.params.fields.items()})
    try:
        return tuple(op.inputs(attrs))
    except Exception:  # noqa: BLE001 - a rule that needs a required parameter: no names
        return ()


# (id(op), trailing) -> (op, signature), id(signature) -> (signature, its text): an op is
# generated under several names and namespaces (nd, nd.sparse, sym, aliases...); building
# each Signature once takes a fifth off the package's import time
_SIGS: dict = {}
_TEXT: dict = {}


def front_end_signature(op, trailing=("out", "name")) -> inspect.Signature:
    """``inspect.Signature`` of the generated function for ``op``."""
    hit = _SIGS.get((id(op), trailing))
    if hit is not None and hit[0] is op:
        return hit[1]
    sig = _signature(op, trailing)
    _SIGS[(id(op), trailing)] = (op, sig)
    _TEXT[id(sig)] = (sig, str(sig))
    return sig


def _signature(op, trailing):
    if op.key_var_num_args:
        return inspect.Signature([_P("data", _P.VAR_POSITIONAL), _P("kwargs", _P.VAR_KEYWORD)])
    params = [_P(n, _P.POSITIONAL_OR_KEYWORD, default=None) for n in declared_inputs(op)]
    params += [_P(k, _P.POSITIONAL_OR_KEYWORD, default=None if f.required else f.default)
               for k, f in op.params.fields.items()]
    taken = {p.name for p in params}
    params += [_P(k, _P.KEYWORD_ONLY, default=None) for k in trailing if k not in taken]
    params.append(_P("kwargs", _P.VAR_KEYWORD))
    return inspect.Signature(params)


def front_end_doc(pub_name, op, signature) -> str:
    """The op's docstring headed by the call signature (MXNet's generated docs show it)."""
    body = op.doc or f"{op.name} operator.\n\nParameters\n----------\n{op.params.doc()}"
    hit = _TEXT.get(id(signature))
    text = hit[1] if hit is not None and hit[0] is signature else str(signature)
    return f"{pub_name}{text}\n\n{body}"
