"""NDArray operators (+ - * / ** % comparisons, in-place, unary) pick the output storage
type exactly as MXNet 1.9.1 does: tests/ndarray/mxnet_operator_stypes.txt was recorded with
the oracle by probe_mxnet_operators.py, which this test runs on sparsym."""
import os
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx

HERE = Path(__file__).resolve().parent


def _recorded():
    out = {}
    for line in (HERE / "mxnet_operator_stypes.txt").read_text().splitlines():
        k, _, v = line.partition(" -> ")
        out[k] = v
    return out


@pytest.fixture(scope="module")
def ours():
    import importlib.util
    spec = importlib.util.spec_from_file_location("probe_ops", HERE / "probe_mxnet_operators.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"
    try:
        return mod.probe(mx)
    finally:
        os.environ.pop("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", None)


REC = _recorded()


@pytest.mark.parametrize("case", sorted(REC))
def test_operator_stype_matches_mxnet(ours, case):
    assert ours[case] == REC[case], f"{case}: sparsym {ours[case]}, MXNet {REC[case]}"


def test_operator_values_match_numpy():
    rs = np.random.RandomState(1)
    x = (rs.rand(4, 6) * (rs.rand(4, 6) < 0.5)).astype(np.float32)
    y = rs.rand(4, 6).astype(np.float32) + 0.5
    for s in ("default", "row_sparse", "csr"):
        a = mx.nd.array(x).tostype(s)
        b = mx.nd.array(y)
        np.testing.assert_allclose((a + b).asnumpy(), x + y, rtol=1e-6)
        np.testing.assert_allclose((a - b).asnumpy(), x - y, rtol=1e-6)
        np.testing.assert_allclose((a * b).asnumpy(), x * y, rtol=1e-6)
        np.testing.assert_allclose((a / b).asnumpy(), x / y, rtol=1e-6)
        np.testing.assert_allclose((a * 3).asnumpy(), x * 3, rtol=1e-6)
        np.testing.assert_allclose((2 - a).asnumpy(), 2 - x, rtol=1e-6)
        np.testing.assert_allclose((a ** 2).asnumpy(), x ** 2, rtol=1e-6)
        np.testing.assert_array_equal((a > 0.5).asnumpy(), (x > 0.5).astype(np.float32))
        np.testing.assert_array_equal((a == 0).asnumpy(), (x == 0).astype(np.float32))
        c = a.copy()
        c += b
        np.testing.assert_allclose(c.asnumpy(), x + y, rtol=1e-6)
        assert c.stype == s
        c = a.copy()
        c *= 2
        np.testing.assert_allclose(c.asnumpy(), x * 2, rtol=1e-6)
        np.testing.assert_allclose((-a).asnumpy(), -x)
        np.testing.assert_allclose(abs(-a).asnumpy(), x)
