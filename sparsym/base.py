"""Error hierarchy, environment flags and MXNet attribute-string parsing."""
from __future__ import annotations

import ast
import os

import numpy as np

__all__ = [
    "MXNetError", "ShapeError", "DTypeError", "StorageError", "ParamError",
    "NotImplementedForStype", "FormatError", "getenv", "parse_attr", "format_attr",
]


class MXNetError(Exception):
    """Base class of every error raised by sparsym (MXNet's name, so `except` clauses port)."""


class ShapeError(MXNetError, ValueError):
    """A shape is inconsistent, unknown where it must be known, or out of range."""


class DTypeError(MXNetError, TypeError):
    """A dtype is inconsistent or unsupported."""


class StorageError(MXNetError, ValueError):
    """A storage type is invalid, inconsistent, or a sparse array is malformed."""


class ParamError(MXNetError, TypeError):
    """An operator parameter is unknown, missing or invalid."""


class NotImplementedForStype(MXNetError, NotImplementedError):
    """No kernel exists and fallback is disabled (SPARSYM_STORAGE_FALLBACK=raise)."""


class FormatError(MXNetError, ValueError):
    """A file (params, JSON, LibSVM) is truncated, corrupt or malformed."""


def getenv(name: str, default: str | None = None) -> str | None:
    """Read an environment flag at call time (tests toggle them)."""
    return os.environ.get(name, default)


_DTYPE_NAMES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "int32": np.int32, "int64": np.int64, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
}


def parse_attr(value):
    """Parse one MXNet attribute string ('(2, 3)', 'True', '0.5', 'relu') into a Python value."""
    if not isinstance(value, str):
        return value
    s = value.strip()
    if s in ("True", "true"):
        return True
    if s in ("False", "false"):
        return False
    if s in ("None", "none"):
        return None
    if s.startswith(("(", "[")):
        try:
            v = ast.literal_eval(s.replace("L", "").replace("None", "None"))
            return tuple(v) if isinstance(v, (list, tuple)) else v
        except (ValueError, SyntaxError):
            return s
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def format_attr(value) -> str:
    """Format a Python attribute value the way MXNet writes it in JSON."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(format_attr(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.dtype):
        return value.name
    return str(value)


def dtype_of(value) -> np.dtype:
    """Normalise a dtype given as str, numpy type or np.dtype."""
    if isinstance(value, str) and value in _DTYPE_NAMES:
        return np.dtype(_DTYPE_NAMES[value])
    try:
        return np.dtype(value)
    except TypeError as err:
        raise DTypeError(f"unknown dtype {value!r}") from err
