"""Typed operator parameters: parsed from keyword args or MXNet's string attrs in JSON."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...base import ParamError, dtype_of, format_attr, parse_attr

_REQUIRED = object()


@dataclass(frozen=True)
class Field:
    """One parameter: its kind ('int', 'float', 'bool', 'str', 'shape', 'dtype', 'any',
    'float_or_none', 'int_or_none', 'shape_or_none', 'floats': a tuple of floats), default,
    allowed choices and doc."""

    kind: str
    default: Any = _REQUIRED
    choices: tuple | None = None
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


def _convert(kind, value, where):
    if isinstance(value, str) and kind not in ("str",):
        value = parse_attr(value)
    if value is None and (kind.endswith("_or_none") or kind == "any"):
        return None
    base = kind.replace("_or_none", "")
    try:
        if base == "int":
            if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        if base == "float":
            return float(value)
        if base == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, (int, np.integer)) and value in (0, 1):
                return bool(value)
            raise ValueError
        if base == "str":
            # dtype-valued string params (Cast, Embedding) also take numpy types, as in MXNet
            if isinstance(value, np.dtype) or (isinstance(value, type)
                                               and issubclass(value, np.generic)):
                return np.dtype(value).name
            return str(value)
        if base == "shape":
            if isinstance(value, (int, np.integer)):
                return (int(value),)
            return tuple(int(v) if v is not None else None for v in value)
        if base == "floats":
            if isinstance(value, (int, float, np.number)):
                return (float(value),)
            return tuple(float(v) for v in value)
        if base == "dtype":
            return None if value is None else dtype_of(value).name
        return value
    except (TypeError, ValueError):
        raise ParamError(f"{where}: expected {kind}, got {value!r}") from None


class Attrs(dict):
    """Parsed parameters of one node: an immutable dict with attribute access, hashable for
    plan keys (the hash is computed once: every imperative call looks its plan up by it).

    Derive a changed copy with ``type(attrs)(attrs, key=value)``.
    """

    # _strs: the string form a tape node of these parameters carries (see ndarray.tape);
    # __dict__: the parameters again, as instance attributes
    __slots__ = ("_hash", "_strs", "__dict__")

    def __init__(self, *args, **kwargs):
        dict.__init__(self, *args, **kwargs)
        # ``attrs.axis`` is then a plain instance-attribute read: reaching __getattr__ costs
        # a formatted AttributeError first (~2 us), and kernels read several per call.
        # Names of dict's own attributes (``items``, ``get``...) stay the methods.
        d = self.__dict__
        for k, v in dict.items(self):
            if k not in _OWN_NAMES and k.__class__ is str:
                d[k] = v

    def __setattr__(self, key, value):
        if key not in ("_hash", "_strs"):  # the caches; the parameters stay immutable
            self._immutable()
        object.__setattr__(self, key, value)

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __hash__(self):
        try:
            return self._hash
        except AttributeError:
            h = self._hash = hash(tuple(sorted((k, _hashable(v)) for k, v in self.items())))
            return h

    def _immutable(self, *args, **kwargs):
        raise TypeError("Attrs are immutable (their hash is cached): derive a copy with "
                        "type(attrs)(attrs, key=value)")

    __setitem__ = __delitem__ = update = pop = popitem = setdefault = clear = _immutable
    __ior__ = _immutable

    def __reduce__(self):
        return type(self), (dict(self),)

    def to_strings(self) -> dict:
        """MXNet's JSON form: every value a string; None values omitted."""
        return {k: format_attr(v) for k, v in self.items() if v is not None}


_OWN_NAMES = frozenset(dir(Attrs))


def is_plain(v) -> bool:
    """Whether a parameter value is plain data (numbers, strings, dtypes, tuples of them),
    so that memoising by it keeps no object graph alive."""
    if isinstance(v, tuple):
        return all(is_plain(x) for x in v)
    return v is None or isinstance(v, (str, int, float, np.generic, np.dtype))


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


class Params:
    """A parameter schema: ``Params(num_hidden=Field('int'), no_bias=Field('bool', False))``."""

    def __init__(self, **fields: Field):
        self.fields = fields

    def accepts(self, key: str) -> bool:
        """Whether ``key`` names a parameter (JSON and set_attr split attributes by it)."""
        return key in self.fields

    def parse(self, op_name: str, kwargs: dict) -> Attrs:
        """Validate and convert ``kwargs``; unknown names and bad values raise ParamError."""
        if not self.fields:
            # MXNet: an operator without a parameter struct keeps whatever attributes it is
            # given and ignores them (nd.broadcast_maximum(a, b, axis=1) runs)
            return Attrs({})
        out = {}
        for key, value in kwargs.items():
            if key not in self.fields:
                known = ", ".join(sorted(self.fields)) or "none"
                raise ParamError(f"operator {op_name}: unknown parameter {key!r}; "
                                 f"known parameters: {known}")
            f = self.fields[key]
            v = _convert(f.kind, value, f"operator {op_name}: parameter {key!r}")
            if f.choices is not None and v not in f.choices:
                raise ParamError(f"operator {op_name}: parameter {key!r} must be one of "
                                 f"{list(f.choices)}, got {v!r}")
            out[key] = v
        for key, f in self.fields.items():
            if key not in out:
                if f.required:
                    raise ParamError(f"operator {op_name}: required parameter {key!r} is missing")
                out[key] = f.default
        return Attrs(out)

    def positional(self, op_name: str, values, kwargs: dict) -> dict:
        """``kwargs`` with positional parameter ``values`` filled in declaration order (the
        order of MXNet's generated front ends: ``mx.nd.sum(x, 1)`` sets ``axis``)."""
        if not values:
            return kwargs
        names = list(self.fields)
        if len(values) > len(names):
            raise ParamError(f"operator {op_name}: {len(values)} positional parameter values "
                             f"for {len(names)} parameters {names}")
        out = dict(kwargs)
        for key, v in zip(names, values):
            if key in out:
                raise ParamError(f"operator {op_name}: got multiple values for parameter "
                                 f"{key!r} (positional and keyword)")
            out[key] = v
        return out

    def doc(self) -> str:
        """numpydoc 'Parameters' lines for the schema."""
        lines = []
        for key, f in self.fields.items():
            opt = "required" if f.required else f"optional, default={f.default!r}"
            lines.append(f"{key} : {f.kind}, {opt}")
            if f.doc:
                lines.append(f"    {f.doc}")
        return "\n".join(lines)


NO_PARAMS = Params()
