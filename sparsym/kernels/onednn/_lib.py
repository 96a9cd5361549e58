"""Loading libdnnl, its generated signatures, status checks, the engine, stream and threads.

The library comes from the ``onednn-cpu-gomp`` wheel, which puts ``libdnnl.so.3`` in
``<prefix>/lib`` (the venv, the interpreter's prefix or the user base), a folder the loader
does not search: it is loaded by absolute path. ``SPARSYM_ONEDNN_LIBRARY`` names another
file. Every function's argument and result types are set from the signatures generated from
the headers (``_enums.FUNCTIONS``), so a float is never passed as a double.
"""
from __future__ import annotations

import ctypes
import os
import site
import sys
import threading
import time
import types

from ...base import MXNetError
from . import _enums

__all__ = ["OneDNNError", "OneDNNUnavailable", "OneDNNUnimplemented", "E", "lib", "load",
           "check", "engine", "stream", "set_threads", "library_path", "version"]


class OneDNNUnavailable(ImportError, MXNetError):
    """oneDNN's library is not installed or cannot be loaded on this machine."""


class OneDNNError(MXNetError, RuntimeError):
    """A oneDNN call returned an error status."""


class OneDNNUnimplemented(OneDNNError):
    """oneDNN has no implementation for this combination (the caller falls back)."""


def _namespace():
    """Every generated constant under its name without the ``dnnl_``/``DNNL_`` prefix."""
    flat = {}
    for vals in _enums.ENUMS.values():
        flat.update(vals)
    flat.update(_enums.DEFINES)
    out = {}
    for k, v in flat.items():
        short = k[5:] if k.lower().startswith("dnnl_") else k
        if short in out and out[short] != v:
            raise RuntimeError(f"oneDNN constant {short} has two values")  # generator bug
        out[short] = v
    return types.SimpleNamespace(**out)


E = _namespace()
_STATUS = {v: k for k, v in _enums.ENUMS["dnnl_status_t"].items()}
_CT = {"p": ctypes.c_void_p, "i": ctypes.c_int, "I": ctypes.c_uint, "q": ctypes.c_int64,
       "Q": ctypes.c_uint64, "z": ctypes.c_size_t, "f": ctypes.c_float, "d": ctypes.c_double,
       "b": ctypes.c_uint8, "c": ctypes.c_int8, "v": None}


class _Version(ctypes.Structure):
    _fields_ = [(n, _CT[k]) for n, k in _enums.STRUCTS["dnnl_version_t"]]


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``."""

    _fields_ = [(n, _CT[k]) for n, k in _enums.STRUCTS["dnnl_exec_arg_t"]]


_state = {"lib": None, "error": None, "path": None, "engine": None, "stream": None,
          "omp": None, "threads": None, "version": None, "load_s": 0.0}
_lock = threading.Lock()


def _candidates():
    env = os.environ.get("SPARSYM_ONEDNN_LIBRARY")
    if env:
        return [env]
    prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    try:
        prefixes.append(site.getuserbase())
    except Exception:  # noqa: BLE001 - no user base: skip it
        pass
    out = []
    for p in prefixes:
        path = os.path.join(p, "lib", "libdnnl.so.3")
        if path not in out:
            out.append(path)
    return out


def _open(path):
    """CDLL of ``path``; the TBB build's runtime libraries are preloaded from its folder."""
    try:
        return ctypes.CDLL(path)
    except OSError as first:
        folder = os.path.dirname(path)
        pre = [os.path.join(folder, n) for n in ("libtbb.so.12", "libintlc.so.5", "libimf.so")]
        if not any(os.path.exists(p) for p in pre):
            raise
        for p in pre:
            if os.path.exists(p):
                ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)
        try:
            return ctypes.CDLL(path)
        except OSError:
            raise first from None


def _bind(dll):
    for name, (ret, args) in _enums.FUNCTIONS.items():
        fn = getattr(dll, name, None)
        if fn is None:  # declared but not exported by this build (e.g. threadpool-only)
            continue
        fn.restype = _CT[ret]
        fn.argtypes = [_CT[a] for a in args]
    return dll


def load():
    """The bound library (loaded once); raises OneDNNUnavailable with the reason."""
    lib_ = _state["lib"]
    if lib_ is not None:
        return lib_
    with _lock:
        if _state["lib"] is not None:
            return _state["lib"]
        if _state["error"] is not None:
            raise OneDNNUnavailable(_state["error"])
        if not (sys.platform.startswith("linux") and
                os.uname().machine in ("x86_64", "AMD64")):
            _state["error"] = (f"oneDNN: the onednn-cpu-gomp wheel exists for Linux x86-64 "
                               f"only, not {sys.platform}/{os.uname().machine}")
            raise OneDNNUnavailable(_state["error"])
        tried = []
        t0 = time.perf_counter()
        for path in _candidates():
            if not os.path.exists(path):
                tried.append(f"{path} (absent)")
                continue
            try:
                dll = _bind(_open(path))
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            ver = ctypes.cast(dll.dnnl_version(), ctypes.POINTER(_Version)).contents
            got = (ver.major, ver.minor)
            if got != _enums.VERSION[:2]:
                tried.append(f"{path} (oneDNN {got[0]}.{got[1]}, the binding was generated "
                             f"from {_enums.VERSION[0]}.{_enums.VERSION[1]})")
                continue
            _state["version"] = (ver.major, ver.minor, ver.patch, ver.cpu_runtime)
            _state["path"], _state["lib"] = path, dll
            _init(dll)
            _state["load_s"] = time.perf_counter() - t0
            return dll
        _state["error"] = ("oneDNN library not found or not loadable: install it with "
                           "`pip install onednn-cpu-gomp==2023.2.0`; tried " + "; ".join(tried))
        raise OneDNNUnavailable(_state["error"])


def check(status, what):
    """Raise OneDNNError (OneDNNUnimplemented for ``unimplemented``) unless success."""
    if status:
        name = _STATUS.get(status, str(status))
        cls = OneDNNUnimplemented if status == E.unimplemented else OneDNNError
        raise cls(f"oneDNN {what} failed: {name}")


def _init(dll):
    """The process's one CPU engine and in-order stream; the OpenMP thread control."""
    from .. import blas
    blas.ensure_policy()  # OpenBLAS at one thread: its spinning workers slow oneDNN's
    eng = ctypes.c_void_p()
    check(dll.dnnl_engine_create(ctypes.byref(eng), E.cpu, 0), "engine_create")
    st = ctypes.c_void_p()
    check(dll.dnnl_stream_create(ctypes.byref(st), eng, E.stream_default_flags),
          "stream_create")
    _state["engine"], _state["stream"] = eng, st
    if _state["version"][3] == E.RUNTIME_OMP:
        try:  # the libgomp libdnnl linked (already loaded: this finds that one)
            omp = ctypes.CDLL("libgomp.so.1")
            omp.omp_set_num_threads.argtypes = [ctypes.c_int]
            omp.omp_get_max_threads.restype = ctypes.c_int
            _state["omp"] = omp
            _state["threads"] = omp.omp_get_max_threads()
        except OSError:
            pass


def lib():
    """The loaded library (after :func:`load`)."""
    return _state["lib"] or load()


def engine():
    """The CPU engine handle."""
    load()
    return _state["engine"]


def stream():
    """The process's stream handle."""
    load()
    return _state["stream"]


def library_path():
    """Absolute path of the loaded libdnnl, or None."""
    return _state["path"]


def version():
    """(major, minor, patch, cpu_runtime) of the loaded library, or None."""
    return _state["version"]


def max_threads():
    """The thread count oneDNN may use (OpenMP's, at load)."""
    load()
    return _state["threads"] or 1


def set_threads(n):
    """Set the calling thread's OpenMP team size for the next primitive created/executed.

    oneDNN sizes a primitive's work split when it is created and runs that many threads,
    so the count is part of the primitive cache key (``core.threads_for``)."""
    omp = _state["omp"]
    if omp is not None:
        omp.omp_set_num_threads(n)
