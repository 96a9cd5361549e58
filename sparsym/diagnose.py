"""``python -m sparsym``: what this installation runs on, for bug and speed reports.

Prints the versions of sparsym and of the libraries it runs on, the Numba threading layer in
use and why it was chosen, the BLAS libraries and their thread counts, where Numba caches
compiled kernels and how much is there, the CPU and its vector instruction sets, the
relevant environment variables and ``mx.runtime.Features()``. It imports nothing heavy that
sparsym does not already load (Ray, ONNX and oneDNN are looked up, not imported), so it
answers in about a second on a warm machine.

    python -m sparsym            # the report as text
    python -m sparsym --json     # the same as one JSON object

Examples
--------
>>> import sparsym.diagnose as d
>>> report = d.collect()
>>> report["sparsym"]["MXNet API"]
'1.9.1'
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys

__all__ = ["collect", "format_report", "main"]
# environment variables that change what sparsym does (prefixes, then exact names)
_ENV_PREFIXES = ("SPARSYM_", "MXNET_", "NUMBA_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_", "MKL_",
                 "BLIS_", "DNNL_", "ONEDNN_")
# vector instruction sets worth naming (LLVM's names); the full list is long
_SIMD = ("sse2", "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
         "avx512dq", "avx512vnni", "avx512bf16", "amx-tile", "neon", "sve")


def _dist_version(*names):
    """The installed version of the first distribution found among ``names``, else None."""
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _sparsym_info():
    import sparsym
    return {"version": sparsym.__version__, "MXNet API": sparsym.__mxnet_version__,
            "location": os.path.dirname(os.path.abspath(sparsym.__file__))}


def _python_info():
    return {"version": platform.python_version(), "implementation":
            platform.python_implementation(), "executable": sys.executable,
            "platform": platform.platform()}


def _packages():
    """Versions of the dependencies (read from metadata: nothing is imported)."""
    out = {}
    for label, names in (("numpy", ("numpy",)), ("scipy", ("scipy",)), ("numba", ("numba",)),
                         ("llvmlite", ("llvmlite",)), ("threadpoolctl", ("threadpoolctl",)),
                         ("tbb", ("tbb",)), ("ray", ("ray",)), ("onnx", ("onnx",)),
                         ("onnxruntime", ("onnxruntime",)),
                         ("scikit-learn", ("scikit-learn",))):
        out[label] = _dist_version(*names) or "not installed"
    return out


def _onednn_info():
    """Whether the oneDNN binding and its library are present (neither is loaded here)."""
    spec = importlib.util.find_spec("sparsym.kernels.onednn")
    wheel = _dist_version("onednn-cpu-gomp", "onednn-cpu-iomp", "onednn-cpu-tbb", "onednn")
    info = {"binding": "present" if spec is not None else "not in this version",
            "library": f"onednn {wheel}" if wheel else "not installed"}
    mod = sys.modules.get("sparsym.kernels.onednn")
    version = getattr(mod, "version", None)
    if callable(version):          # loaded by an earlier kernel call in this process
        try:
            loaded = version()
        except Exception:  # noqa: BLE001 - a report never fails on an optional library
            loaded = None
        if loaded:
            info["loaded"] = ".".join(str(v) for v in loaded[:3])
    return info


def _threading_info():
    """Numba's threading layer (started here: it is what kernels get) and why."""
    from . import _threading_env as tenv
    info = {}
    try:
        import numba
        from numba.np.ufunc import parallel
        parallel._launch_threads()
        info["numba threading layer"] = numba.threading_layer()
        info["numba threads"] = numba.get_num_threads()
    except Exception as err:  # noqa: BLE001
        info["numba threading layer"] = f"unavailable ({err})"
    chosen = os.environ.get("NUMBA_THREADING_LAYER")
    if chosen and chosen.lower() != "default":
        why = f"NUMBA_THREADING_LAYER={chosen} in the environment (the user's choice)"
    elif tenv._TBB is not None:
        why = (f"sparsym preloaded the tbb wheel's {getattr(tenv._TBB, '_name', 'libtbb')}, "
               "Numba's first choice (see docs/threading.md)")
    elif os.environ.get("SPARSYM_NO_TBB_PRELOAD") == "1":
        why = "SPARSYM_NO_TBB_PRELOAD=1: TBB not preloaded, Numba took the next layer"
    else:
        why = ("no loadable tbb wheel (pip install tbb): Numba fell back to OpenMP "
               f"(OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')})")
    info["why"] = why
    info["cpu count"] = os.cpu_count()
    if hasattr(os, "sched_getaffinity"):
        info["usable cpus"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["load average"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return info


def _blas_info():
    """The BLAS/OpenMP libraries NumPy and friends loaded, with their thread counts."""
    out = {}
    try:
        from threadpoolctl import threadpool_info
        for lib in threadpool_info():
            key = f"{lib.get('user_api')}: {lib.get('internal_api')}"
            out[key] = (f"{lib.get('version')}, {lib.get('num_threads')} threads, "
                        f"{os.path.basename(lib.get('filepath', ''))}"
                        + (f", {lib['architecture']}" if lib.get("architecture") else ""))
    except Exception as err:  # noqa: BLE001
        out["libraries"] = f"unknown ({err})"
    from .kernels import blas
    state = blas.policy_state()
    out["sparsym policy"] = ("1 thread for small GEMMs, " f"{state['full']} for large ones"
                             if state["active"] else
                             "off (the user's thread setting, or SPARSYM_BLAS_POLICY=0)")
    return out


def _numba_cache_info():
    """Where Numba writes sparsym's compiled kernels, and how much is there."""
    import numba
    pkg = os.path.dirname(os.path.abspath(__file__))
    if numba.config.CACHE_DIR:
        where, roots = numba.config.CACHE_DIR, [numba.config.CACHE_DIR]
        why = "NUMBA_CACHE_DIR"
    elif os.access(pkg, os.W_OK):
        where, roots = os.path.join(pkg, "**", "__pycache__"), [pkg]
        why = "beside the package's sources"
    else:
        from numba.misc.appdirs import AppDirs
        where = AppDirs(appname="numba", appauthor=False).user_cache_dir
        roots, why = [where], "Numba's user cache (the package directory is read-only)"
    files = size = 0
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            for n in names:
                if n.endswith((".nbi", ".nbc")):
                    files += 1
                    try:
                        size += os.path.getsize(os.path.join(dirpath, n))
                    except OSError:
                        pass
    return {"location": where, "why": why, "files": files, "size": f"{size / 2**20:.1f} MiB"}


def _cpu_info():
    info = {"machine": platform.machine()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import llvmlite.binding as ll
        feats = ll.get_host_cpu_features()
        info["llvm cpu"] = ll.get_host_cpu_name()
        info["vector isa"] = " ".join(k for k in _SIMD if feats.get(k)) or "none found"
    except Exception as err:  # noqa: BLE001
        info["llvm cpu"] = f"unknown ({err})"
    return info


def _features():
    from .runtime import Features
    feats = Features()
    return {"enabled": " ".join(n for n, f in feats.items() if f.enabled),
            "disabled": " ".join(n for n, f in feats.items() if not f.enabled)}


def _environment():
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(_ENV_PREFIXES)}


def collect() -> dict:
    """The report as a dict of sections (name -> {item: value}).

    Returns
    -------
    dict
        Sections ``sparsym``, ``python``, ``packages``, ``oneDNN``, ``threading``, ``BLAS``,
        ``numba cache``, ``CPU``, ``features`` and ``environment``.
    """
    return {"sparsym": _sparsym_info(), "python": _python_info(), "packages": _packages(),
            "oneDNN": _onednn_info(), "threading": _threading_info(), "BLAS": _blas_info(),
            "numba cache": _numba_cache_info(), "CPU": _cpu_info(),
            "features": _features(), "environment": _environment() or {"(none set)": ""}}


def format_report(report) -> str:
    """The report of :func:`collect` as text, one ``----------Section----------`` block per
    section as MXNet's ``diagnose.py`` prints."""
    lines = []
    for section, items in report.items():
        lines.append(f"----------{section}----------")
        width = max((len(str(k)) for k in items), default=0)
        lines += [f"{str(k) + ':':<{width + 1}} {v}".rstrip() for k, v in items.items()]
    return "\n".join(lines)


def main(argv=None):
    """Print the report (``--json``: as JSON)."""
    parser = argparse.ArgumentParser(prog="python -m sparsym", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    report = collect()
    print(json.dumps(report, indent=1) if args.json else format_report(report))
    return 0
