"""Every registered operator that MXNet 1.9.1 also has, timed against MXNet in one run.

    python benchmarks/ops_vs_mxnet.py [--quick] [--ops REGEX [REGEX ...]]
        [--mxnet-python ~/mxref/bin/python] [--no-mxnet] [--rounds 3] [--max-elems 1000000]

For each forward operator (MXNet's name; aliases counted once) the inputs come from the
registry sweep's cases (tests/ops/sweep_cases.py: valid inputs and attributes per op), with
every input dimension above 1 multiplied by the largest power of two that keeps the inputs
(and the outputs) under ``--max-elems`` elements: a (4, 6) case becomes (512, 768), the
(2, 3, 6, 6) image case (16, 24, 48, 48). Size parameters (num_hidden, num_filter, shape)
and index values scale along; a case whose parameters pin its shapes runs at the largest
scale its shape inference accepts, down to the sweep's own size.

Two modes per op: ``fwd`` (the ``nd.<op>`` call) and ``fwd_bwd`` (the call under
``autograd.record()`` and ``backward()`` of its first output, every float input with a
gradient). Both packages run the same public front end on the same arrays; MXNet runs in a
child process (``--mxnet-python``, never imported here) that serves requests over a pipe,
and the two take turns ``--rounds`` times per op and mode, so both see the same machine
load. A timed call ends with ``nd.waitall()`` (MXNet's engine is asynchronous).

Output: one JSON line per op and mode::

    {"op", "mode", "shapes", "scale", "sparsym_ms", "mxnet_ms", "ratio",
     "sparsym_first_ms", "mxnet_first_ms", "reps"}

``*_ms`` is the median per-call time over every timed call (after the first call, which
compiles Numba kernels and is reported alone as ``*_first_ms``, and a warm-up call);
``ratio`` is ``mxnet_ms / sparsym_ms`` (> 1: sparsym is faster). An op or mode that cannot
run says why in ``skipped``. The last line is ``{"summary": {...}}``: the geometric mean of
the ratios (overall and per mode), the number of ops below 0.33x and the ten slowest
entries by ratio.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIGNATURES = os.path.join(ROOT, "tests", "fixtures", "mxnet", "op_signatures.json")

# operators that cannot be called from a plain front end with arrays and attributes
SKIP = {
    "Custom": "runs a CustomOp registered by the user",
    "_CustomFunction": "runs a user's autograd.Function",
    "_foreach": "takes a subgraph (mx.nd.contrib.foreach runs Python loops instead)",
    "_while_loop": "takes a subgraph (mx.nd.contrib.while_loop runs Python loops instead)",
    "_cond": "takes a subgraph (mx.nd.contrib.cond runs Python branches instead)",
}
# Why an op stays slower than MXNet, and what would close the gap: added as ``why`` to its
# records when its ratio is below 1 (and so to the summary's slowest entries)
_CONV = ("im2col + OpenBLAS sgemm against MXNet's oneDNN direct convolution (JIT AVX2 "
         "kernels on blocked layouts); a blocked direct kernel (or Winograd for 3x3) in Numba "
         "would close it")
_LAPACK = ("LAPACK in float64 (kept for gradient accuracy) against MXNet's float32 calls; "
           "float32 LAPACK for float32 inputs would halve it")
NOTES = {
    "Convolution": _CONV, "Deconvolution": _CONV,
    "RNN": ("one GEMM per step and gate arithmetic in NumPy against oneDNN's fused RNN "
            "primitive; a fused Numba cell loop would close most of it"),
    "CTCLoss": ("alpha-beta per sequence in one Numba thread; MXNet runs the sequences of a "
                "batch on OpenMP threads; a prange over sequences would close it"),
    **dict.fromkeys(("BilinearSampler", "SpatialTransformer"), (
        "a compiled loop on one thread, channels innermost (strided reads) against MXNet's "
        "OpenMP loop over the batch; a prange over samples would close it")),
    "_contrib_box_nms": ("the full IoU matrix of the candidates in NumPy float64 before the "
                         "compiled greedy loop; MXNet computes the overlaps it needs inside "
                         "its loop, which a compiled IoU would match"),
    "SoftmaxOutput": ("softmax as NumPy passes (max, exp, sum, divide) against MXNet's one "
                      "fused pass per row; a Numba row kernel would close it"),
    "exp": ("float32 exp computed in float64 and rounded (NumPy's SIMD float32 exp is 1 ulp "
            "off where MXNet's expf is not; float64 exp has no SIMD loop here); a correctly "
            "rounded float32 exp kernel would close it"),
    "transpose": ("NumPy's strided copy of the transposed view against MXNet's blocked "
                  "(cache-tiled) transpose; a tiled compiled copy would close it"),
    **dict.fromkeys(("_random_pdf_normal", "_random_pdf_gamma", "_random_pdf_exponential",
                     "_random_pdf_poisson", "_random_pdf_negative_binomial",
                     "_random_pdf_generalized_negative_binomial", "_random_pdf_dirichlet"), (
        "log densities and their partials in float64 NumPy passes (exp/log without SIMD in "
        "float64) against MXNet's fused float32 kernels; a compiled float32 kernel per "
        "distribution would close it")),
    "_hypot": "NumPy's hypot has no SIMD loop (MXNet's is vectorised by the compiler)",
    **dict.fromkeys(("_linalg_gelqf", "_linalg_syevd", "_linalg_syrk", "_linalg_slogdet",
                     "_linalg_det", "_linalg_inverse", "_linalg_potrf", "_linalg_potri",
                     "_linalg_trsm", "_linalg_trmm", "_linalg_gemm", "_linalg_gemm2",
                     "_linalg_sumlogdiag"), _LAPACK),
}
QUICK = ("elemwise_add", "broadcast_mul", "_plus_scalar", "exp", "relu", "sum", "dot",
         "FullyConnected", "Convolution", "Pooling", "BatchNorm", "softmax", "transpose",
         "Concat", "take", "topk", "LayerNorm", "where", "clip", "Reshape")
SCALES = (256, 128, 64, 32, 16, 8, 4, 2, 1)
# size parameters scaled with the inputs (FullyConnected's num_hidden with its weight's rows)
SIZE_PARAMS = ("num_hidden", "num_filter", "state_size", "input_dim", "output_dim", "N")


def extra_cases():
    """Cases for ops the sweep checks elsewhere (tests/ops/test_*.py) on inputs of their own
    kind; the same scaling applies to them."""
    from sweep_cases import Case
    s2, img = (4, 6), (2, 3, 6, 6)
    rows = np.array([[0, 3, 1, 2, 3]], np.float32)
    idx = np.array([0, 5, 2, 1], np.float32)
    upd = {"lr": 0.1}
    return {
        "Pad": [Case({"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 1, 1)}, (img,))],
        "UpSampling": [Case({"scale": 2, "sample_type": "nearest", "num_args": 1}, (img,))],
        "_contrib_AdaptiveAvgPooling2D": [Case({"output_size": (2, 3)}, (img,))],
        "depth_to_space": [Case({"block_size": 2}, ((1, 4, 2, 3),))],
        "space_to_depth": [Case({"block_size": 2}, ((1, 1, 4, 6),))],
        "gather_nd": [Case({}, (s2, (1, 5)), values={1: rows})],
        "scatter_nd": [Case({"shape": s2}, ((5, 6), (1, 5)), values={1: rows})],
        "broadcast_to": [Case({"shape": s2}, ((1, 6),))],
        "moments": [Case({"axes": (1,)}, (s2,))],
        "batch_take": [Case({}, (s2, (4,)), values={1: idx.astype(np.int32)})],
        "_contrib_boolean_mask": [Case({}, (s2, (4,)),
                                       values={1: np.array([1, 0, 1, 1], np.float32)})],
        "im2col": [Case({"kernel": (2, 2)}, (img,))],
        "col2im": [Case({"output_size": (6, 6), "kernel": (2, 2)}, ((2, 12, 25),))],
        "_eye": [Case({"N": 4}, ())],
        "_split_v2": [Case({"indices": (0,), "sections": 2, "axis": 1}, (s2,))],
        "amp_cast": [Case({"dtype": "float16"}, (s2,))],
        "amp_multicast": [Case({"num_outputs": 2}, (s2, s2))],
        "mp_sgd_update": [Case(upd, (s2, s2, s2))],
        "mp_sgd_mom_update": [Case(dict(upd, momentum=0.9), (s2,) * 4, zeros=(2,))],
        "mp_nag_mom_update": [Case(dict(upd, momentum=0.9), (s2,) * 4, zeros=(2,))],
        "_random_randint": [Case({"low": 0, "high": 10, "shape": s2}, ())],
        "_rnn_param_concat": [Case({"num_args": 2, "dim": 0}, (s2, s2))],
        "_linalg_syevd": [Case({}, ((4, 4),))],
        # a negative dimension keeps its size when the case is scaled (coordinates, the 6
        # affine parameters); the values are random in [-1, 1]: grids and affine maps
        # that stay near the image
        "SpatialTransformer": [Case({"target_shape": (4, 6), "transform_type": "affine",
                                     "sampler_type": "bilinear"}, (img, (2, -6)))],
        "BilinearSampler": [Case({}, (img, (2, -2, 4, 6)))],
        "GridGenerator": [Case({"transform_type": "affine", "target_shape": (4, 6)}, ((2, -6),)),
                          Case({"transform_type": "warp"}, ((2, -2, 4, 6),))],
        **{op: [Case({"use_sequence_length": True}, ((5, 4, 6), (4,)),
                     values={1: np.array([1, 3, 5, 2], np.float32)})]
           for op in ("SequenceLast", "SequenceMask", "SequenceReverse")},
    }


# ----------------------------------------------------------------------------- both sides
class Side:
    """Runs requests on one package (``mx``): set up an op call, time it, drop it.

    The same class serves sparsym in this process and MXNet in the child process.
    """

    PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_random_", "_image_")

    def __init__(self, mx):
        self.mx = mx
        self.calls = {}

    def front_end(self, name):
        """``nd.<name>`` by MXNet's module layout (contrib, linalg, ... or _internal)."""
        nd = self.mx.nd
        for p in self.PREFIXES:
            if name.startswith(p):
                sub = getattr(nd, p.strip("_"), None)
                fn = getattr(sub, name[len(p):], None) if sub is not None else None
                if fn is not None:
                    return fn
        fn = getattr(nd, name, None) if not name.startswith("_") else None
        fn = fn or getattr(nd._internal, name, None)
        if fn is None:
            raise AttributeError(f"no front end for operator {name}")
        return fn

    def setup(self, req):
        """Build the call of ``req`` and run it twice; returns first-call and estimate ms."""
        mx = self.mx
        fn = self.front_end(req["name"])
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in req["params"].items()}
        with np.load(req["path"]) as z:
            arrays = [z[f"in{i}"] for i in range(req["n_in"])]
        ins = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
        if req["mode"] == "fwd":
            def call():
                fn(*ins, **params)
                mx.nd.waitall()
        else:
            for i in req["grad"]:
                ins[i].attach_grad()

            def call():
                with mx.autograd.record():
                    out = fn(*ins, **params)
                head = out[0] if isinstance(out, (list, tuple)) else out
                head.backward()
                mx.nd.waitall()
        t0 = time.perf_counter()
        call()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        call()
        est = time.perf_counter() - t0
        self.calls[req["key"]] = call
        return {"first_ms": first * 1e3, "est_ms": est * 1e3}

    def time(self, req):
        """Per-call wall times (ms) of ``req['reps']`` calls of a set-up op."""
        call, out = self.calls[req["key"]], []
        for _ in range(req["reps"]):
            t0 = time.perf_counter()
            call()
            out.append((time.perf_counter() - t0) * 1e3)
        return {"times": out}

    def drop(self, req):
        self.calls.pop(req["key"], None)
        return {}

    def handle(self, req):
        """One request -> one reply; an exception becomes ``{"error": text}``."""
        try:
            return getattr(self, req["cmd"])(req)
        except Exception as err:  # noqa: BLE001  (reported per op, the run goes on)
            lines = [ln for ln in str(err).splitlines() if ln.strip()]
            text = next((ln for ln in lines if "Error" in ln or "Check failed" in ln),
                        lines[0] if lines else "")
            return {"error": f"{type(err).__name__}: {text.strip()[:300]}"}


def serve(package):
    """Child-process loop: JSON requests on stdin, JSON replies on stdout."""
    import importlib
    side = Side(importlib.import_module(package))
    out = sys.stdout
    sys.stdout = sys.stderr  # a print inside the package must not corrupt the replies
    out.write(json.dumps({"ready": package}) + "\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "quit":
            break
        out.write(json.dumps(side.handle(req)) + "\n")
        out.flush()


class Remote:
    """The other package's Side in a child process (``python this_file --serve pkg``)."""

    def __init__(self, python, package, timeout=600.0):
        env = dict(os.environ, PYTHONPATH="" if package == "mxnet" else ROOT)
        self.log = tempfile.TemporaryFile(mode="w+")
        self.timeout = timeout
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--serve", package],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env,
                                     cwd=tempfile.gettempdir())
        ready = self._read()
        if "ready" not in ready:
            raise RuntimeError(f"{package} worker did not start: {ready}")

    def _read(self):
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(self.timeout):
            raise TimeoutError(f"no reply from the worker in {self.timeout:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            self.log.seek(0)
            raise RuntimeError("the worker ended: " + self.log.read()[-2000:])
        return json.loads(line)

    def handle(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# ----------------------------------------------------------------------------- cases
def _sweep():
    """The sweep's builders (imported from tests/ops, where they live)."""
    for d in (os.path.join(ROOT, "tests", "ops"), ROOT):
        if d not in sys.path:
            sys.path.insert(0, d)
    import sweep_cases
    import test_op_sweep
    return sweep_cases, test_op_sweep


def mxnet_operators():
    with open(SIGNATURES) as f:
        return set(json.load(f))


def select_ops(patterns=None, quick=False):
    """[(name to call, OpDef)]: forward ops that MXNet 1.9.1 also has, one per record."""
    from sparsym.ops.core.registry import all_ops
    theirs = mxnet_operators()
    ops, seen = [], set()
    for _, op in sorted(all_ops().items()):
        if id(op) in seen or op.name.startswith(("_backward", "_contrib_backward")):
            continue
        seen.add(id(op))
        names = [n for n in (op.name, *op.aliases) if n in theirs]
        if not names:
            continue
        if patterns:
            if not any(re.fullmatch(p, n) for p in patterns for n in (op.name, *op.aliases)):
                continue
        elif quick and not set(QUICK) & {op.name, *op.aliases}:
            continue
        ops.append((names[0], op))
    return ops


def _scaled(shape, k):
    """Every dimension above 1 times k; a negative one (extra_cases) is kept as -d."""
    return tuple(-d if d < 0 else d * k if d > 1 else d for d in shape)


def candidates(op, max_elems):
    """[(case, k)]: the sweep's cases of ``op`` with input dimensions (and size parameters,
    index values) scaled by ``k``, largest first under ``max_elems`` input (and output)
    elements, down to
    the sweep's own size; only those whose shapes inference accepts (the returned cases hold
    the completed shapes)."""
    import dataclasses
    sweep_cases, sweep = _sweep()
    extra = {name: (lambda op, nin, c=c: c) for name, c in extra_cases().items()}
    found, seen = [], set()
    for n, (nin, case, _) in enumerate(sweep_cases.forward_cases(op, extra)):
        shape_param = nin == 0 and "shape" in op.params.fields
        base_shape = tuple(case.params.get("shape") or (4, 6))
        sizes = [p for p in SIZE_PARAMS if isinstance(case.params.get(p), int)]
        sizes += [p for p in ("shape", "target_shape")
                  if isinstance(case.params.get(p), tuple) and not (shape_param and p == "shape")]
        for k, scale_values, scale_sizes in itertools.product(
                sorted(SCALES), (True, False), (True, False)):
            if k == 1 and (scale_values or scale_sizes) or (
                    scale_values and not case.values) or (scale_sizes and not sizes):
                continue
            params, shapes, values = dict(case.params), list(case.shapes), {}
            for p in sizes if scale_sizes else ():
                v = params[p]
                params[p] = _scaled(v, k) if isinstance(v, tuple) else v * k
            if shape_param:
                params["shape"] = _scaled(base_shape, k)
            keep = {}  # values kept as given: all at k == 1; index values unless tiled
            for i, s in enumerate(shapes):
                if i in case.values and not (scale_values and k > 1 and not _is_index(
                        case.values[i])):
                    v = np.asarray(case.values[i])
                    keep[i] = scale_values and k > 1  # index values repeat cyclically
                    shapes[i] = _scaled(v.shape, k) if keep[i] else v.shape
                elif s is not None:
                    shapes[i] = _scaled(s, k)
            try:
                attrs = op.params.parse(op.name, dict(params))
            except Exception:  # noqa: BLE001
                continue
            done = sweep._infer(op, attrs, shapes)
            if done is None:
                continue
            elems = max(sum(math.prod(s) for s in done[0]),
                        sum(math.prod(s) for s in done[1]))
            if shape_param:
                elems = max(elems, math.prod(params["shape"]))
            if elems > max_elems and k > 1:
                continue
            for i, tile in keep.items():
                v = np.asarray(case.values[i])
                values[i] = np.resize(v, done[0][i]) if tile else v
            sig = repr((done[0], sorted(params.items()), sorted(values)))
            if sig in seen:
                continue
            seen.add(sig)
            c = dataclasses.replace(case, params=params, shapes=done[0], values=values)
            found.append(((elems, scale_sizes, -n), k, c))
    found.sort(key=lambda t: t[0], reverse=True)
    return [(c, k) for _, k, c in found]


def _is_index(v):
    """Integral values (indices, lengths): tiled when their input grows; other fixed values
    (a well-conditioned matrix) give way to random ones of the scaled shape."""
    v = np.asarray(v)
    return v.dtype.kind in "iub" or bool(np.array_equal(v, np.round(v)))


def build_inputs(op, case, seed=0):
    """Dense input arrays of a completed case (the sweep's own value builder)."""
    _, sweep = _sweep()
    raws = sweep._build(op, case, ("default",) * len(case.shapes), "full", seed)
    return [np.ascontiguousarray(r) for r in raws]


def _jsonable(params):
    out = {}
    for k, v in params.items():
        if isinstance(v, tuple):
            v = list(v)
        if isinstance(v, np.generic):
            v = v.item()
        json.dumps(v)  # raises for values no front end can be given as text
        out[k] = v
    return out


# ----------------------------------------------------------------------------- driver
class Bench:
    """Alternates requests between our Side and the reference one (or ours alone)."""

    def __init__(self, ours, theirs, rounds, budget_ms, min_reps, max_reps, max_call_ms,
                 tmp):
        self.ours, self.theirs, self.tmp = ours, theirs, tmp
        self.rounds, self.budget_ms = rounds, budget_ms
        self.min_reps, self.max_reps, self.max_call_ms = min_reps, max_reps, max_call_ms
        self.n = 0

    def _sides(self):
        return (self.ours,) if self.theirs is None else (self.ours, self.theirs)

    def measure(self, name, op, mode, cands):
        """One JSON record for ``op`` in ``mode``: the first candidate both sides run."""
        reasons = []
        # after failures, the sweep's own size is tried last
        cands = cands[:6] + [c for c in cands[6:] if c[1] == 1][-1:]
        for case, k in cands:
            try:
                params = _jsonable(case.params)
            except TypeError:
                return {"skipped": "parameters that cannot be passed as text"}
            self.n += 1
            path = os.path.join(self.tmp, f"case{self.n}.npz")
            arrays = build_inputs(op, case, seed=self.n)
            np.savez(path, **{f"in{i}": a for i, a in enumerate(arrays)})
            # gradients for float inputs that are not index values the case fixes
            grad = [i for i, a in enumerate(arrays)
                    if a.dtype.kind == "f" and not (i in case.values
                                                    and _is_index(case.values[i]))]
            if mode == "fwd_bwd" and not grad:
                os.remove(path)
                return {"skipped": "no input to differentiate"}
            req = {"key": self.n, "name": name, "params": params, "path": path,
                   "n_in": len(arrays), "mode": mode, "grad": grad}
            infos = []
            for side in self._sides():
                infos.append(side.handle(dict(req, cmd="setup")))
                if "error" in infos[-1]:
                    break
            if any("error" in i for i in infos):
                who = "sparsym" if "error" in infos[0] else "mxnet"
                reasons.append(f"{who} at scale {k}: {infos[-1]['error']}")
                self._drop(req)
                os.remove(path)
                continue
            slowest = max(i["est_ms"] for i in infos)
            if slowest > self.max_call_ms and k > 1:
                reasons.append(f"scale {k}: {slowest:.0f} ms per call")
                self._drop(req)
                os.remove(path)
                continue
            rec = {"shapes": [list(a.shape) for a in arrays], "scale": k}
            rec.update(self._timed(req, infos))
            if rec.get("ratio", 1.0) < 1.0 and name in NOTES:
                rec["why"] = NOTES[name]
            self._drop(req)
            os.remove(path)
            return rec
        return {"skipped": "; ".join(reasons) or "no sweep case fits"}

    def _timed(self, req, infos):
        est = max(max(i["est_ms"] for i in infos), 1e-3)
        reps = int(min(self.max_reps, max(self.min_reps, self.budget_ms / est)))
        times = [[] for _ in infos]
        for _ in range(self.rounds):
            for side, ts in zip(self._sides(), times):
                got = side.handle(dict(req, cmd="time", reps=reps))
                if "error" in got:
                    raise RuntimeError(got["error"])
                ts += got["times"]
        rec = {"sparsym_ms": _r(np.median(times[0])),
               "sparsym_first_ms": _r(infos[0]["first_ms"])}
        if len(infos) > 1:
            rec["mxnet_ms"] = _r(np.median(times[1]))
            rec["mxnet_first_ms"] = _r(infos[1]["first_ms"])
            rec["ratio"] = _r(rec["mxnet_ms"] / max(rec["sparsym_ms"], 1e-6))
        rec["reps"] = reps * self.rounds
        return rec

    def _drop(self, req):
        for side in self._sides():
            side.handle(dict(req, cmd="drop"))


def _r(x):
    x = float(x)
    return round(x, 4 if x < 1 else 2)


def _geomean(xs):
    return _r(math.exp(sum(math.log(x) for x in xs) / len(xs))) if xs else None


def summary(records, command):
    """The final line's content: geometric means, ops below 0.33x, the ten slowest."""
    timed = [r for r in records if "ratio" in r]
    slow = sorted(timed, key=lambda r: r["ratio"])
    pick = ("op", "mode", "ratio", "sparsym_ms", "mxnet_ms", "shapes")
    return {
        "geomean": _geomean([r["ratio"] for r in timed]),
        "geomean_fwd": _geomean([r["ratio"] for r in timed if r["mode"] == "fwd"]),
        "geomean_fwd_bwd": _geomean([r["ratio"] for r in timed if r["mode"] == "fwd_bwd"]),
        "ops": len({r["op"] for r in records}), "timed": len(timed),
        "skipped": sum("skipped" in r for r in records),
        "below_0.33": [f"{r['op']} {r['mode']}" for r in slow if r["ratio"] < 0.33],
        "slowest": [{k: r[k] for k in pick + ("why",) if k in r} for r in slow[:10]],
        "command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _modes(op):
    if op.gradient is None or op.mutates:
        return ("fwd",)
    return ("fwd", "fwd_bwd")


def run(args, emit):
    """Measure the selected ops, calling ``emit(record)`` per line; returns the summary."""
    _sweep()
    import sparsym
    ops = select_ops(args.ops, args.quick)
    theirs = None
    if not args.no_mxnet:
        python = args.mxnet_python
        if args.ref_package != "mxnet":
            python = sys.executable
        if os.path.exists(python):
            theirs = Remote(python, args.ref_package)
    records = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            bench = Bench(Side(sparsym), theirs, args.rounds, args.budget_ms, args.min_reps,
                          args.max_reps, args.max_call_ms, tmp)
            for name, op in ops:
                print(f"[ops_vs_mxnet] {name}", file=sys.stderr, flush=True)
                if op.name in SKIP:
                    rec = {"op": name, "mode": "fwd", "skipped": SKIP[op.name]}
                    records.append(rec)
                    emit(rec)
                    continue
                cands = candidates(op, args.max_elems)
                for mode in _modes(op):
                    rec = {"op": name, "mode": mode}
                    rec.update(bench.measure(name, op, mode, cands))
                    records.append(rec)
                    emit(rec)
    finally:
        if theirs is not None:
            theirs.close()
    return summary(records, "python benchmarks/ops_vs_mxnet.py " + " ".join(args.argv))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", nargs="+", metavar="REGEX",
                   help="operators whose name or an alias matches one of these (fullmatch)")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: a subset of ops (unless --ops), one round, few calls")
    p.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    p.add_argument("--no-mxnet", action="store_true", help="time sparsym alone")
    p.add_argument("--ref-package", default="mxnet", help=argparse.SUPPRESS)
    p.add_argument("--rounds", type=int, default=3, help="turns each package takes per op")
    p.add_argument("--budget-ms", type=float, default=100.0,
                   help="time per package per round (sets the calls per round)")
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=40)
    p.add_argument("--max-call-ms", type=float, default=1500.0,
                   help="a smaller scale is tried when one call takes longer")
    p.add_argument("--max-elems", type=int, default=1_000_000,
                   help="input elements per case (all inputs together)")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(argv)
    args.argv = argv
    if args.quick:
        args.rounds, args.budget_ms, args.min_reps, args.max_reps = 1, 20.0, 3, 5
    return args


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--serve"]:
        serve(argv[1])
        return

    def emit(rec):
        print(json.dumps(rec), flush=True)
    # the sweep's cases run some ops on inputs they fall back for; one line each is noise
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    emit({"summary": run(parse_args(argv), emit)})


if __name__ == "__main__":
    main()
