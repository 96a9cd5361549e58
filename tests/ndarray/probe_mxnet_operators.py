"""How NDArray operators pick output stypes; run with either library:

    ~/mxref/bin/python tests/ndarray/probe_mxnet_operators.py mxnet \\
        > tests/ndarray/mxnet_operator_stypes.txt

Each line is ``<case> -> <stype>[ same|new]``. tests/ndarray/test_operators.py runs
:func:`probe` on sparsym and compares with the recorded MXNet 1.9.1 lines.
"""
import itertools
import operator
import os
import sys

import numpy as np

S = ("default", "row_sparse", "csr")
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "truediv": operator.truediv, "eq": operator.eq, "ne": operator.ne, "gt": operator.gt,
       "ge": operator.ge, "lt": operator.lt, "le": operator.le, "pow": operator.pow,
       "mod": operator.mod}
IOPS = (("iadd", operator.iadd), ("isub", operator.isub), ("imul", operator.imul),
        ("itruediv", operator.itruediv))


def _try(res, key, f):
    try:
        res[key] = f()
    except Exception as e:  # noqa: BLE001  (the error itself is the recorded outcome)
        res[key] = "ERR " + str(e).splitlines()[0][:80]


def probe(mx):
    """Return {case: outcome} for module ``mx`` (mxnet or sparsym)."""
    rs = np.random.RandomState(0)
    x = (rs.rand(4, 6) * (rs.rand(4, 6) < 0.5)).astype(np.float32)
    x[0] = 0
    y = (rs.rand(4, 6) * (rs.rand(4, 6) < 0.5)).astype(np.float32) + 0.1

    def mk(a, s):
        n = mx.nd.array(a)
        return n if s == "default" else n.tostype(s)

    res = {}
    for name, f in OPS.items():
        for a, b in itertools.product(S, S):
            _try(res, f"{name} {a} {b}", lambda: f(mk(x, a), mk(y, b)).stype)
        for a in S:
            for s in (0.0, 2.0):
                _try(res, f"{name} {a} scalar{s}", lambda: f(mk(x, a), s).stype)
                _try(res, f"r{name} {a} scalar{s}", lambda: f(s, mk(y, a)).stype)
    for name in ("add", "sub", "mul", "truediv"):
        for a in S:
            for vs in ((1, 6), (4, 1), (6,)):
                _try(res, f"{name} {a} vec{vs}",
                     lambda: OPS[name](mk(x, a), mx.nd.array(rs.rand(*vs) + 0.1)).stype)

    def inplace(f, a, other):
        z = mk(x, a)
        r = f(z, other)
        return r.stype + (" same" if r is z else " new")

    for name, f in IOPS:
        for a, b in itertools.product(S, S):
            _try(res, f"{name} {a} {b}", lambda: inplace(f, a, mk(y, b)))
        for a in S:
            _try(res, f"{name} {a} scalar", lambda: inplace(f, a, 2.0))
    for a in S:
        _try(res, f"neg {a}", lambda: (-mk(x, a)).stype)
        _try(res, f"abs {a}", lambda: abs(mk(x, a)).stype)
    return res


if __name__ == "__main__":
    os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"
    lib = __import__(sys.argv[1] if len(sys.argv) > 1 else "mxnet")
    for k, v in probe(lib).items():
        print(k, "->", v)
