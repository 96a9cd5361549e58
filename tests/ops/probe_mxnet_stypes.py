"""Record MXNet 1.9.1's storage behaviour for the sparse operator table (run with the oracle).

    ~/mxref/bin/python tests/ops/probe_mxnet_stypes.py      # writes tests/ops/mxnet_stypes.json

For every case (op, params, input stypes) the imperative call is made and we record the
output stypes and the dispatch: ``sparse`` (FComputeEx), ``dense`` (all default),
``fallback`` (MXNet logged "Storage type fallback detected"), or ``NI`` with the error's
first line. Differentiable cases are also bound with ``simple_bind(stype_dict=...)`` and the
inferred gradient stypes and backward dispatch modes are recorded. MXNet is never a
dependency of sparsym: tests read only the JSON this writes.
"""
import itertools
import json
import os
import re
import sys
import tempfile
import threading

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mxnet_stypes.json")
DNS, RSP, CSR = "default", "row_sparse", "csr"  # the package's storage-type names
ALL = (DNS, RSP, CSR)


class Capture:
    """Capture fd 2 (MXNet's C++ log) around a call."""

    def __enter__(self):
        self.tmp = tempfile.TemporaryFile(mode="w+b")
        sys.stderr.flush()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf8", "replace")
        self.tmp.close()


def make_input(shape, stype, seed, kind="rand"):
    rs = np.random.RandomState(seed)
    if kind == "index":
        return mx.nd.array(rs.randint(0, shape[0] if False else 3, size=shape), dtype="float32")
    x = rs.uniform(0.5, 1.5, size=shape) * (rs.rand(*shape) < 0.5)
    if len(shape) >= 1 and shape[0] > 1:
        x[0] = 0  # an empty row
    arr = mx.nd.array(x.astype(np.float32))
    return arr.tostype(stype) if stype != DNS else arr


def in_thread(f):
    """Run f in a fresh thread: MXNet logs each fallback once per message per thread."""
    box = {}

    def run():
        box["v"] = f()
    t = threading.Thread(target=run)
    t.start()
    t.join()
    return box["v"]


def first_error_line(err):
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    for key in ("not implemented", "not supported", "Check failed", "Error"):
        hit = [ln for ln in lines if key.lower() in ln.lower()]
        if hit:
            return hit[-1][:300] if key == "Error" else hit[0][:300]
    return lines[-1][:300] if lines else ""


def call_forward(fn, inputs, params):
    return in_thread(lambda: _call_forward(fn, inputs, params))


def _call_forward(fn, inputs, params):
    with Capture() as cap:
        try:
            out = fn(*inputs, **params)
            mx.nd.waitall()
            err = None
        except Exception as e:  # noqa: BLE001
            out, err = None, str(e)
    if err is not None:
        return {"error": first_error_line(err)}
    outs = out if isinstance(out, (list, tuple)) else [out]
    mode = "fallback" if "fallback detected" in cap.text else None
    stypes = [o.stype for o in outs]
    ins = [i.stype for i in inputs]
    if mode is None:
        mode = "dense" if all(s == DNS for s in ins + stypes) else "sparse"
    return {"out": stypes, "mode": mode}


_NODE = re.compile(r"node (\d+) (\S+): (\w+)")
_IO = re.compile(r"\t\t(input|output) (\d+): (\w+)")


def parse_verbose(text):
    nodes, cur = [], None
    for line in text.splitlines():
        m = _NODE.search(line)
        if m:
            cur = {"op": m.group(2), "mode": m.group(3), "in": [], "out": []}
            nodes.append(cur)
            continue
        m = _IO.search(line)
        if m and cur is not None:
            cur["in" if m.group(1) == "input" else "out"].append(m.group(3))
    return nodes


def call_backward(sym_fn, shapes, stypes, params, grad_inputs):
    return in_thread(lambda: _call_backward(sym_fn, shapes, stypes, params, grad_inputs))


def _call_backward(sym_fn, shapes, stypes, params, grad_inputs):
    names = [f"x{i}" for i in range(len(shapes))]
    vs = [mx.sym.Variable(n, stype=s) for n, s in zip(names, stypes)]
    os.environ["MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING"] = "1"
    with Capture() as cap:
        try:
            out = sym_fn(*vs, **params)
            req = {n: ("write" if i in grad_inputs else "null") for i, n in enumerate(names)}
            exe = out.simple_bind(mx.cpu(), grad_req=req,
                                  stype_dict=dict(zip(names, stypes)),
                                  **dict(zip(names, shapes)))
            grads = {n: exe.grad_dict[n].stype for n in names if n in exe.grad_dict
                     and exe.grad_dict[n] is not None}
            err = None
        except Exception as e:  # noqa: BLE001
            err = str(e)
    os.environ["MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING"] = "0"
    if err is not None:
        return {"error": first_error_line(err)}
    nodes = [n for n in parse_verbose(cap.text) if n["op"] != "var"]
    back = [n for n in nodes if n["op"].startswith("_backward") or n["op"].startswith(
        "_contrib_backward")]
    return {"grads": [grads.get(n) for n in names], "nodes": back}


# ----------------------------------------------------------------------------- cases
S2 = (4, 6)
ZERO_KEEP = ["abs", "sign", "negative", "square", "sqrt", "cbrt", "relu", "tanh", "sin", "sinh",
             "tan", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "floor", "round", "rint",
             "fix", "trunc", "expm1", "log1p", "degrees", "radians", "_contrib_round_ste",
             "_contrib_sign_ste", "_copy", "BlockGrad", "make_loss", "zeros_like"]
DENSE_UNARY = ["sigmoid", "exp", "log", "log2", "log10", "cos", "cosh", "arccos", "arccosh",
               "rsqrt", "rcbrt", "reciprocal", "gamma", "gammaln", "softsign", "erf", "ones_like"]
SCALAR = ["_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
          "_rdiv_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar",
          "_minimum_scalar", "_mod_scalar", "_rmod_scalar", "_scatter_plus_scalar",
          "_scatter_minus_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar",
          "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar"]
BINARY = ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_power", "_grad_add",
          "_maximum", "_minimum", "_hypot", "_scatter_elemwise_div", "_equal", "_not_equal",
          "_greater", "_greater_equal", "_lesser", "_lesser_equal", "_mod", "_logical_and",
          "_logical_or", "_logical_xor"]
BROADCAST = ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
             "broadcast_power", "broadcast_maximum", "broadcast_minimum", "broadcast_equal",
             "broadcast_greater", "broadcast_hypot", "broadcast_mod"]
NO_GRAD = {"sign", "ceil", "floor", "round", "rint", "fix", "trunc", "BlockGrad", "zeros_like",
           "ones_like", "gamma", "gammaln", "_equal", "_not_equal", "_greater", "_greater_equal",
           "_lesser", "_lesser_equal", "_mod", "_logical_and", "_logical_or", "_logical_xor",
           "_scatter_elemwise_div", "_grad_add", "broadcast_equal", "broadcast_greater",
           "broadcast_mod", "_rmod_scalar", "_mod_scalar", "_equal_scalar", "_not_equal_scalar",
           "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar",
           "_scatter_plus_scalar", "_scatter_minus_scalar", "make_loss"}


def nd_fn(name):
    if name == "_sparse_retain":
        return mx.nd.sparse.retain
    return getattr(mx.nd, name, None) or getattr(mx.nd._internal, name, None) or \
        getattr(mx.nd.contrib, name.replace("_contrib_", ""), None)


def sym_fn(name):
    if name == "_sparse_retain":
        return mx.sym.sparse.retain
    return getattr(mx.sym, name, None) or getattr(mx.sym._internal, name, None) or \
        getattr(mx.sym.contrib, name.replace("_contrib_", ""), None)


def cases():
    """Yield (key, op, params, shapes, stypes, grad inputs)."""
    for op in ZERO_KEEP + DENSE_UNARY + ["Cast", "_contrib_gradientmultiplier"]:
        params = {"dtype": "float64"} if op == "Cast" else (
            {"scalar": 2.0} if op == "_contrib_gradientmultiplier" else {})
        for s in ALL:
            yield op, params, [S2], [s]
    for op in SCALAR:
        for scal in (0.0, 2.0, -1.0):
            for s in ALL:
                yield op, {"scalar": scal}, [S2], [s]
    for op in BINARY:
        for a, b in itertools.product(ALL, ALL):
            yield op, {}, [S2, S2], [a, b]
    for op in BROADCAST:
        for rshape in ((1, 6), (4, 1), (4, 6), (6,)):
            for a, b in itertools.product(ALL, ALL):
                if len(rshape) == 1 and b == CSR:
                    continue
                yield op, {}, [S2, rshape], [a, b]
    for a in ALL:
        for stype in ALL:
            yield "cast_storage", {"stype": stype}, [S2], [a]
    for ta, tb, fs in itertools.product((False, True), (False, True), (None, DNS, RSP, CSR)):
        for a, b in itertools.product(ALL, ALL):
            params = {"transpose_a": ta, "transpose_b": tb}
            if fs:
                params["forward_stype"] = fs
            sa = (6, 4) if ta else (4, 6)
            sb = (5, 6) if tb else (6, 5)
            yield "dot", params, [sa, sb], [a, b]
    for n in (2, 3, 5):
        for combo in itertools.product(ALL, repeat=n):
            if n == 5 and len(set(combo)) > 2:
                continue
            yield "add_n", {}, [S2] * n, list(combo)
    for s in ALL:
        for params in ({"axis": 0}, {"axis": 1}, {"axis": 1, "keepdims": True},
                       {"axis": 0, "keepdims": True}, {}):
            yield "_square_sum", params, [S2], [s]
        for params in ({"a": 1.0, "b": 2.0, "c": 0.0}, {"a": 1.0, "b": 2.0, "c": 1.0}):
            yield "_contrib_quadratic", params, [S2], [s]
        for params in ({}, {"axis": 0}, {"axis": 1}):
            yield "_contrib_getnnz", params, [S2], [s]
    for s in ALL:
        for t in (DNS,):
            yield "_sparse_retain", {}, [S2, (2,)], [s, t]


def probe():
    table = []
    for op, params, shapes, stypes in cases():
        fn = nd_fn(op)
        if fn is None:
            table.append({"op": op, "params": params, "shapes": shapes, "in": stypes,
                          "fwd": {"error": "missing in mxnet"}})
            continue
        if op == "_sparse_retain":
            ins = [make_input(shapes[0], stypes[0], 1), mx.nd.array([0, 2], dtype="int64")]
        else:
            ins = [make_input(sh, s, i + 1) for i, (sh, s) in enumerate(zip(shapes, stypes))]
        rec = {"op": op, "params": {k: v for k, v in params.items()}, "shapes": shapes,
               "in": stypes, "fwd": call_forward(fn, ins, params)}
        if op not in NO_GRAD and op not in ("cast_storage",) and "error" not in rec["fwd"]:
            gi = [0] if op in ("_sparse_retain",) else list(range(len(shapes)))
            if op == "_sparse_retain":
                pass
            elif op == "_contrib_getnnz":
                gi = []
            if gi:
                rec["bwd"] = call_backward(sym_fn(op), shapes, stypes, params, gi)
        table.append(rec)
    return table


if __name__ == "__main__":
    os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "1"
    tab = probe()
    with open(OUT, "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": tab}, f, indent=0, sort_keys=True)
    print(f"wrote {len(tab)} cases to {OUT}")
