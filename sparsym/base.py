"""Error hierarchy, environment flags, MXNet attribute-string parsing, and the names of
``mxnet.base`` that Python code uses (type tuples, ``py_str``, ``data_dir``...)."""
from __future__ import annotations

import ast
import ctypes
import os
import platform
import threading

import numpy as np

__all__ = [
    "MXNetError", "ShapeError", "DTypeError", "StorageError", "ParamError",
    "ParamAssertionError",
    "NotImplementedForStype", "FormatError", "AllocationError", "IndexOutOfRange", "getenv",
    "parse_attr", "format_attr",
    "NotImplementedForSymbol", "NotSupportedForSparseNDArray", "mx_real_t", "string_types",
    "numeric_types", "integer_types", "py_str", "data_dir", "data_dir_default",
    "classproperty", "with_metaclass", "register_error", "error_types",
    "add_fileline_to_docstring", "build_param_doc",
]

# The per-thread NumPy-semantics switches of mx.util (np_shape, np_array): held here so
# that the operator layer can read them (ops/ may not import util).
NP_SEMANTICS = threading.local()


def np_shape_active() -> bool:
    """Whether NumPy-shape semantics (``mx.np_shape()``) is on in this thread."""
    return getattr(NP_SEMANTICS, "np_shape", False)


# MXNet's type names (mx_real_t is the default dtype; the ctypes ones size C fields)
mx_real_t = np.float32
mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float
NDArrayHandle = ctypes.c_void_p  # what ctypes.cast(NDArray, NDArrayHandle) gives
string_types = (str,)
basestring = str
long = int
numeric_types = (float, int, np.generic)
integer_types = (int, np.int32, np.int64)


class MXNetError(RuntimeError):
    """Base class of every error raised by sparsym (MXNet's name, so `except` clauses port;
    a RuntimeError, as MXNet's)."""


class ShapeError(MXNetError, ValueError):
    """A shape is inconsistent, unknown where it must be known, or out of range."""


class DTypeError(MXNetError, TypeError):
    """A dtype is inconsistent or unsupported."""


class StorageError(MXNetError, ValueError):
    """A storage type is invalid, inconsistent, or a sparse array is malformed."""


class ParamError(MXNetError, TypeError, ValueError):
    """An operator parameter is unknown, missing or invalid (also a ValueError: a bad value
    such as a non-positive ``batch_size`` is caught by ``except ValueError`` too)."""


class ParamAssertionError(ParamError, AssertionError):
    """A bad argument that MXNet rejects with an ``assert`` (its tests and users catch
    AssertionError); also a ParamError, so a TypeError and a ValueError."""


class NotImplementedForStype(MXNetError, NotImplementedError):
    """No kernel exists and fallback is disabled (SPARSYM_STORAGE_FALLBACK=raise)."""


class FormatError(MXNetError, ValueError):
    """A file (params, JSON, LibSVM) is truncated, corrupt or malformed."""


class AllocationError(MXNetError, MemoryError):
    """An array larger than this machine's memory was asked for (refused before allocating,
    so a typo in a shape fails at once instead of swapping or being killed)."""


class IndexOutOfRange(MXNetError, IndexError):
    """An index outside its axis (gather_nd, scatter_nd: MXNet raises IndexError)."""


class UnsupportedFeatureError(MXNetError, NotImplementedError, AttributeError):
    """An MXNet name sparsym does not implement; also an AttributeError, so ``hasattr()``
    feature checks in user scripts answer False instead of raising."""


def unsupported_module(module, why):
    """A module ``__getattr__`` for an MXNet module sparsym does not implement: importing
    works, any name raises UnsupportedFeatureError saying ``why``."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedFeatureError(f"{module}.{name}: {why}")
    return __getattr__


# MXNet operators that are engine internals: the node a CachedOp leaves in a graph needs
# the C++ CachedOp state, which a front-end call cannot pass (MXNet 1.9.1 fails with "The
# any container is empty"); name -> what to use instead
_ENGINE_INTERNAL_OPS = {
    "_CachedOp": "mx.nd.CachedOp(symbol) or HybridBlock.hybridize()",
    "_CachedOpThreadSafe": "mx.nd.CachedOp(symbol) or HybridBlock.hybridize()",
}


def install_engine_internal_ops(namespace: dict) -> None:
    """Put MXNet's engine-internal operators in an ``_internal`` namespace: calling one
    raises UnsupportedFeatureError naming the public alternative."""
    for name, instead in _ENGINE_INTERNAL_OPS.items():
        def op(*args, _name=name, _instead=instead, **kwargs):
            raise UnsupportedFeatureError(
                f"{_name} is an engine-internal operator (the node a cached graph leaves "
                f"behind) and cannot be called directly: use {_instead}")
        op.__name__ = op.__qualname__ = name
        op.__doc__ = f"Engine internal; use {instead}."
        namespace[name] = op


class MissingFileError(FileNotFoundError, MXNetError):
    """A file to load does not exist (MXNet raises MXNetError; scripts catch either)."""


def open_for_load(fname, mode="rb", **kwargs):
    """``open(fname, mode)`` for a loader: a missing file is a MissingFileError naming it."""
    import os
    try:
        return open(os.fspath(fname), mode, **kwargs)
    except FileNotFoundError as err:
        raise MissingFileError(err.errno, err.strerror,
                               err.filename) from None


def normalize_axis(axis, ndim, where):
    """``axis`` in [0, ndim) (negative counts from the end; None stays None), else ShapeError."""
    if axis is None:
        return None
    a = int(axis)
    if a < 0:
        a += ndim
    if not 0 <= a < ndim:
        raise ShapeError(f"{where}: axis {axis} out of range for {ndim}-D input")
    return a


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


class _FunctionNotAvailable(MXNetError, NotImplementedError):
    """'Function f (namely operator "op") with arguments (...) is not <where>' errors."""

    _where = ""

    def __init__(self, function, alias=None, *args):
        name = getattr(function, "__name__", function)
        self.function, self.alias, self.args = name, alias, [str(type(a)) for a in args]
        msg = f"Function {name}"
        if alias:
            msg += f' (namely operator "{alias}")'
        if args:
            msg += " with arguments (" + ", ".join(self.args) + ")"
        super().__init__(f"{msg} {self._where}")


class NotImplementedForSymbol(_FunctionNotAvailable):
    """An NDArray-only operation was called on a Symbol (MXNet's error of the same name)."""

    _where = "is not implemented for Symbol and only available in NDArray."


class NotSupportedForSparseNDArray(_FunctionNotAvailable):
    """A dense-only NDArray operation was called on a sparse array (MXNet's error)."""

    _where = "is not supported for SparseNDArray and only available in NDArray."


def py_str(x):
    """Decode bytes (UTF-8) to str; a str passes through."""
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else x


def _as_list(obj):
    """``obj`` itself when a list or tuple, else ``[obj]``."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def flatten_nested(args, leaf, what):
    """(flat list of leaves, format) of a leaf or a nested list/tuple of leaves; the format
    is 0 for a bare leaf, else the list of the items' formats (MXNet's contrib _flatten).
    ``leaf`` is the leaf type; anything else raises TypeError naming ``what``."""
    if isinstance(args, leaf):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{what} must be (nested) lists of {leaf.__name__}, got "
                        f"{type(args).__name__}")
    flat, fmts = [], []
    for a in args:
        f, fmt = flatten_nested(a, leaf, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup_nested(flat, fmt):
    """Inverse of :func:`flatten_nested`: (nested value, the leaves left over)."""
    if fmt == 0:
        return flat[0], flat[1:]
    out = []
    for f in fmt:
        item, flat = regroup_nested(flat, f)
        out.append(item)
    return out, flat


def data_dir_default():
    """MXNet's default data folder: ``%APPDATA%/mxnet`` on Windows, else ``~/.mxnet``."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir():
    """Where downloads (datasets, models) go: ``$MXNET_HOME``, else :func:`data_dir_default`."""
    return os.getenv("MXNET_HOME", data_dir_default())


class _ClassProperty:
    """A read-only property computed on the class."""

    def __init__(self, fget):
        self.fget = fget

    def __get__(self, obj, cls=None):
        return self.fget.__get__(obj, cls if cls is not None else type(obj))()


def classproperty(func):
    """Decorator: a property of the class itself (``Context.default_ctx``)."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassProperty(func)


def with_metaclass(meta, *bases):
    """A base class whose subclasses are created by ``meta`` (Python 2/3 idiom MXNet uses)."""
    return meta("_WithMetaclassBase", bases or (object,), {})


# error names -> classes, as MXNet's FFI error table (register_error adds to it)
error_types = {"NotImplementedForSymbol": NotImplementedForSymbol, "ValueError": ValueError,
               "TypeError": TypeError, "AttributeError": AttributeError,
               "IndexError": IndexError, "NotImplementedError": NotImplementedError}


def register_error(func_name=None, cls=None):
    """Register an error class under its name in :data:`error_types` (usable as a decorator,
    with or without a name)."""
    if callable(func_name):
        cls, func_name = func_name, func_name.__name__

    def register(mycls):
        error_types[func_name if isinstance(func_name, str) else mycls.__name__] = mycls
        return mycls
    return register if cls is None else register(cls)


def add_fileline_to_docstring(module, incursive=True):
    """Append "From:file:line" to the docstrings of a module's functions and classes."""
    import inspect
    import sys

    def _add(obj):
        try:
            fname, line = inspect.getsourcefile(obj), inspect.getsourcelines(obj)[-1]
        except (TypeError, OSError):
            return
        if obj.__doc__ is not None and "From:" not in obj.__doc__:
            try:
                obj.__doc__ += f"\n\nFrom:{fname}:{line}"
            except (AttributeError, TypeError):
                pass
    if isinstance(module, str):
        module = sys.modules[module]
    for v in list(vars(module).values()):
        if inspect.isfunction(v) or (incursive and inspect.isclass(v)):
            _add(v)


def build_param_doc(arg_names, arg_types, arg_descs, remove_dup=True):
    """A numpydoc "Parameters" section from parallel lists of names, types and texts."""
    seen, lines = set(), []
    for key, typ, desc in zip(arg_names, arg_types, arg_descs):
        if remove_dup and key in seen:
            continue
        if key == "num_args":
            continue
        seen.add(key)
        lines.append(f"{key} : {typ}")
        if desc:
            lines.append(f"    {desc}")
    return "Parameters\n----------\n" + "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- C API names
# MXNet's ctypes helpers, for Python code written against MXNet's C API. Those that only
# move data between ctypes and Python work as MXNet's; sparsym has no C library, so
# ``_LIB`` answers only the calls registered in ``LIB_CALLS`` (sparsym/c_api.py) and names
# any other call in an UnsupportedFeatureError.
mx_float_p = ctypes.POINTER(mx_float)
SymbolHandle = FunctionHandle = OpHandle = CachedOpHandle = ExecutorHandle = ctypes.c_void_p
DataIterCreatorHandle = DataIterHandle = KVStoreHandle = RecordIOHandle = ctypes.c_void_p
RtcHandle = CudaModuleHandle = CudaKernelHandle = ProfileHandle = DLPackHandle = ctypes.c_void_p


class MXCallbackList(ctypes.Structure):
    """MXNet's callback table for custom operators (a C struct)."""

    _fields_ = [("num_callbacks", ctypes.c_int),
                ("callbacks", ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
                ("contexts", ctypes.POINTER(ctypes.c_void_p))]


def c_str(string):
    """A ``ctypes.c_char_p`` of the UTF-8 bytes of ``string``."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings):
    """A C array of ``char*`` holding the UTF-8 bytes of ``strings``."""
    return (ctypes.c_char_p * len(strings))(*[s.encode("utf-8") for s in strings])


def c_array(ctype, values):
    """A C array of ``ctype`` holding ``values``."""
    return (ctype * len(values))(*values)


def c_array_buf(ctype, buf):
    """A C array of ``ctype`` sharing the memory of the writable buffer ``buf``."""
    return (ctype * len(buf)).from_buffer(buf)


def c_handle_array(objs):
    """A C array of ``void*`` holding the ``handle`` of each object."""
    return (ctypes.c_void_p * len(objs))(*[o.handle for o in objs])


def ctypes2buffer(cptr, length):
    """A ``bytearray`` copy of ``length`` bytes at the ``char*`` ``cptr``."""
    if not isinstance(cptr, ctypes.POINTER(ctypes.c_char)):
        raise TypeError("expected char pointer")
    out = bytearray(length)
    ctypes.memmove((ctypes.c_char * length).from_buffer(out), cptr, length)
    return out


def ctypes2numpy_shared(cptr, shape):
    """A NumPy float32 array of ``shape`` sharing the memory of the ``float*`` ``cptr``."""
    if not isinstance(cptr, ctypes.POINTER(mx_float)):
        raise RuntimeError("expected float pointer")
    size = int(np.prod(shape, dtype=np.int64))
    buf = (mx_float * size).from_address(ctypes.addressof(cptr.contents))
    return np.frombuffer(buf, dtype=np.float32).reshape(shape)


def _error_name(line):
    """The error class name at the start of ``line`` ("ValueError: ..."), or None."""
    name = line.split(":", 1)[0] if ":" in line else ""
    return name if name and all(c.isalnum() or c in "_." for c in name) else None


def c2pyerror(err_msg):
    """(message, error name) of a C API error text, its "Stack trace" lines turned into a
    Python-style traceback (MXNet's translation)."""
    lines = err_msg.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    err_type = _error_name(lines[0]) if lines else None
    trace, message, in_trace = [], [], False
    for line in lines:
        if in_trace and not line.startswith("  "):
            in_trace = False
        if in_trace:
            trace.append(line)
        elif line.startswith("Stack trace"):
            in_trace = True
        else:
            message.append(line)
    head = ("Traceback (most recent call last):\n" + "\n".join(reversed(trace)) + "\n"
            if trace else "")
    return head + "\n".join(message), err_type


def get_last_ffi_error():
    """The error of the last failed ``_LIB`` call, as the class its text names."""
    msg, err_type = c2pyerror(py_str(_LIB.MXGetLastError()))
    if err_type is not None and err_type.startswith("mxnet.error."):
        err_type = err_type[len("mxnet.error."):]
    return error_types.get(err_type, MXNetError)(msg)


def check_call(ret):
    """Raise the last ``_LIB`` error when a C API call returned non-zero."""
    if ret != 0:
        raise get_last_ffi_error()


LIB_CALLS: dict = {}  # C API name -> Python function with the C calling convention
_LAST_ERROR = threading.local()


def set_last_error(text):
    """Record the text ``MXGetLastError`` returns (a failed ``_LIB`` call returns -1)."""
    _LAST_ERROR.text = str(text)


class _Lib:
    """``mx.base._LIB``: the C API calls sparsym can answer, with MXNet's conventions
    (return 0, write results through ``ctypes.byref`` arguments); any other name raises
    UnsupportedFeatureError naming the call (so ``hasattr(_LIB, name)`` is False)."""

    def MXGetLastError(self):  # noqa: N802  (MXNet's C name)
        return getattr(_LAST_ERROR, "text", "").encode("utf-8")

    def __getattr__(self, name):
        try:
            return LIB_CALLS[name]
        except KeyError:
            raise UnsupportedFeatureError(
                f"mx.base._LIB.{name}: sparsym has no C library, and this C API call has no "
                f"Python equivalent here (the calls it answers: "
                f"{', '.join(sorted(LIB_CALLS) + ['MXGetLastError'])})") from None

    def __dir__(self):
        return sorted(set(LIB_CALLS) | {"MXGetLastError"})


_LIB = _Lib()
