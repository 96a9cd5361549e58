"""mx.test_utils: MXNet 1.9.1's helpers, tolerances, messages and star import."""
import os
import sys

import numpy as np
import pytest

import sparsym as mx
from sparsym import test_utils as tu


def test_star_import_brings_what_mxnet_test_files_use():
    ns = {}
    exec("from sparsym.test_utils import *", ns)
    for name in ("np", "mx", "rnd", "os", "sys", "time", "npt", "ss", "json", "OrderedDict",
                 "Context", "array", "Symbol", "assert_almost_equal", "rand_ndarray",
                 "check_consistency", "DummyIter", "environment", "retry", "np_symbol"):
        assert name in ns, name
    assert ns["mx"] is mx and ns["np"] is np and ns["rnd"] is np.random
    assert not any(k.startswith("_") and k not in ("__builtins__",) for k in ns)


def test_assert_almost_equal_message_is_mxnets(capsys):
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    b = a.copy()
    b[1, 2], b[0, 0] = 6.5, 1.01
    with pytest.raises(AssertionError) as e:
        tu.assert_almost_equal(mx.nd.array(a), b, names=("x", "y"))
    # the text MXNet 1.9.1 produces for the same call (probed)
    assert str(e.value) == (
        "\nItems are not equal:\nError 303.030304 exceeds tolerance rtol=1.000000e-04, "
        "atol=1.000000e-03 (mismatch 33.333333%).\nLocation of maximum error: (1, 2), "
        "x=6.00000000, y=6.50000000\n ACTUAL: array([[1., 2., 3.],\n       [4., 5., 6.]], "
        "dtype=float32)\n DESIRED: array([[1.01, 2.  , 3.  ],\n       [4.  , 5.  , 6.5 ]], "
        "dtype=float32)")
    out = capsys.readouterr().out
    assert "1: Error 303.030304  Location of error: (1, 2)" in out
    assert "2: Error 9.082644  Location of error: (0, 0)" in out
    with pytest.raises(AssertionError, match=r"mismatch at least 20\.000000%"):
        tu.assert_almost_equal(np.arange(30.0), np.arange(30.0) + 1, mismatches=(3, 5))
    with pytest.raises(AssertionError, match=r"rtol=1.000000e-05, atol=1.000000e-20\.\n"):
        tu.assert_almost_equal(np.float64(1.0), np.float64(1.1))


def test_default_tolerances_follow_the_looser_dtype():
    assert tu.get_tols(np.ones(1, np.float16), np.ones(1, np.float64), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.ones(1, np.float32), 1.0, None, None) == (1e-4, 1e-3)
    assert tu.get_tols(np.ones(1, np.float64), 1.0, {np.dtype(np.float64): 0.5}, 2) == (0.5, 2)
    # float32 data passes at 5e-4 absolute error but float64 does not
    tu.assert_almost_equal(np.float32(1.0), np.float32(1.0005))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.float64(1.0), np.float64(1.0005))
    assert tu.almost_equal(np.array([1.0]), np.array([1.0 + 1e-7]))
    assert not tu.almost_equal(np.array([1.0]), np.array([1.001]))
    with pytest.raises(AssertionError, match="are not equal"):
        tu.assert_almost_equal(np.ones(3), np.ones((1, 3)), use_broadcast=False)
    tu.assert_allclose(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError):
        tu.assert_allclose(np.array([1.0]), np.array([1.0 + 1e-6]))
    tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    tu.assert_almost_equal_with_err(np.arange(10.0), np.r_[np.arange(9.0), 100.0], etol=0.2)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(np.arange(10.0), np.arange(10.0) + 1, etol=0.2)
    # sparse arrays compare by value
    c = tu.rand_ndarray((4, 5), "csr", density=0.5)
    tu.assert_almost_equal(c, c.asnumpy())


def test_random_sparse_arrays():
    arr, (indptr, indices, data) = tu.rand_sparse_ndarray((6, 10), "csr", density=0.5)
    assert arr.stype == "csr" and arr.data.shape == (30,) and arr.dtype == np.float32
    assert np.all((data.asnumpy() >= 0) & (data.asnumpy() < 1))
    assert indptr.asnumpy()[-1] == 30
    pw, _ = tu.rand_sparse_ndarray((5, 16), "csr", density=0.5, distribution="powerlaw")
    counts = np.diff(pw.indptr.asnumpy())
    assert counts[2] == 2 * counts[1] and counts[3] == 2 * counts[2]
    with pytest.raises(ValueError, match="not supported for this density"):
        tu.rand_sparse_ndarray((10, 10), "csr", density=0.1, distribution="powerlaw")
    rsp, (val, idx) = tu.rand_sparse_ndarray((8, 3), "row_sparse", density=1.0, dtype=np.float64)
    assert rsp.stype == "row_sparse" and list(idx) == list(range(8)) and val.dtype == np.float64
    z = tu.create_sparse_array_zd((5, 2), "row_sparse", density=0.9, rsp_indices=[3, 1],
                                  data_init=2.0)
    assert z.indices.asnumpy().tolist() == [1, 3] and np.all(z.data.asnumpy() == 2.0)
    empty, (ev, _) = tu.rand_sparse_ndarray((4, 3), "row_sparse", density=0.0)
    assert empty.indices.shape == (0,) and ev.size == 0
    sh = tu.rand_ndarray((20, 30), "csr", density=0.5, shuffle_csr_indices=True)
    assert sh.asnumpy()[sh.asnumpy() != 0].size == sh.data.shape[0]
    assert tu.rand_ndarray((2, 3), dtype=np.float16).dtype == np.float16


def test_random_shapes_and_arrays():
    np.random.seed(3)
    for _ in range(20):
        s2, s3 = tu.rand_shape_2d(4, 5), tu.rand_shape_3d(2, 2, 2)
        assert 1 <= s2[0] <= 4 and 1 <= s2[1] <= 5 and all(1 <= d <= 2 for d in s3)
        assert all(0 <= d <= 3 for d in tu.rand_shape_nd(4, 3, allow_zero_size=True))
    assert tu.random_arrays((2, 3)).dtype == np.float32
    assert [a.shape for a in tu.random_arrays((1,), ())] == [(1,), ()]
    lo = tu.random_uniform_arrays((100,), low=2, high=3)[0]
    assert lo.min() >= 2 and lo.max() < 3
    with pytest.raises(TypeError):
        tu.random_uniform_arrays((2,), bad=1)
    assert sorted(tu.random_sample(list(range(5)), 5)) == list(range(5))
    m = tu.new_sym_matrix_with_real_eigvals_nd((2, 3, 3))
    np.testing.assert_allclose(m, np.swapaxes(m, -1, -2), atol=1e-10)
    assert np.isrealobj(np.linalg.eigvals(tu.new_matrix_with_real_eigvals_2d(3)).real)
    assert tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).tolist() == [[8.0]] * 3


def test_symbolic_checks_compare_forward_backward_and_numeric_gradient():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    s = x * y
    a, b = np.random.rand(2, 3), np.random.rand(2, 3)
    outs = tu.check_symbolic_forward(s, [a, b], [a * b])
    assert isinstance(outs[0], mx.nd.NDArray)
    with pytest.raises(AssertionError, match="EXPECTED__mul"):
        tu.check_symbolic_forward(s, {"x": a, "y": b}, [a * b + 1])
    g = np.random.rand(2, 3)
    tu.check_symbolic_backward(s, [a, b], [g], [g * b, g * a])
    tu.check_symbolic_backward(s, [a, b], [g], {"x": g * b}, grad_req="add")
    tu.check_symbolic_backward(s, [a, b], [g], {"x": g * b}, grad_req={"x": "write", "y": "null"})
    tu.check_numeric_gradient(s, [a, b])
    tu.check_numeric_gradient(mx.sym.tanh(x), [a], grad_nodes={"x": "add"}, dtype=np.float64)
    # a gradient that is wrong (blocked) is caught
    with pytest.raises(AssertionError, match="NUMERICAL_x"):
        tu.check_numeric_gradient(mx.sym.BlockGrad(x) * y, [a, b])
    with pytest.raises(ValueError, match="do not match"):
        tu.check_symbolic_forward(s, {"x": a}, [a])
    assert tu.simple_forward(s, x=a, y=b).shape == (2, 3)


def test_numeric_gradient_with_sparse_gradient_storage():
    x, w = mx.sym.var("x", stype="csr"), mx.sym.var("w")
    s = mx.sym.sparse.dot(x, w)
    xv = tu.rand_ndarray((4, 5), "csr", density=0.5).tostype("default").asnumpy()
    tu.check_numeric_gradient(s, {"x": xv, "w": np.random.rand(5, 2)}, grad_nodes=["w"],
                              grad_stype_dict={"w": "row_sparse"})


def test_check_consistency_across_dtypes():
    s = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    ctx_list = [{"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float64}},
                {"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float32}}]
    gt = tu.check_consistency(s, ctx_list)
    assert set(gt) >= {"fc_output", "fc_weight", "data"}
    assert gt["fc_output"].dtype == np.float64
    bad = {"fc_output": mx.nd.ones((2, 3), dtype=np.float64)}
    with pytest.raises(AssertionError):
        tu.check_consistency(s, ctx_list, ground_truth=bad, grad_req="null")
    assert tu.check_speed(s, N=2, data=(2, 4)) > 0


def test_environment_restores_and_unsets():
    os.environ.pop("SPARSYM_TU_A", None)
    os.environ["SPARSYM_TU_B"] = "keep"
    with pytest.raises(RuntimeError):
        with tu.environment({"SPARSYM_TU_A": "1", "SPARSYM_TU_B": None}):
            assert os.environ["SPARSYM_TU_A"] == "1" and "SPARSYM_TU_B" not in os.environ
            raise RuntimeError
    assert "SPARSYM_TU_A" not in os.environ and os.environ["SPARSYM_TU_B"] == "keep"
    with tu.environment("SPARSYM_TU_B", "x"):
        assert os.environ["SPARSYM_TU_B"] == "x"
    assert os.environ.pop("SPARSYM_TU_B") == "keep"


def test_generators_statistics():
    np.random.seed(1)
    import scipy.stats as ss
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: ss.norm.ppf(p, 0, 1), 5)
    assert len(buckets) == 5 and probs == [0.2] * 5
    gen = lambda n: np.random.normal(0, 1, size=n)  # noqa: E731
    assert len(tu.verify_generator(gen, buckets, probs, nsamples=20000, nrepeat=3)) == 3
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: np.random.normal(1, 1, size=n), buckets, probs,
                            nsamples=20000, nrepeat=3)
    p, obs, _ = tu.chi_square_check(lambda n: np.random.randint(0, 2, n), [0, 1], [0.5, 0.5],
                                    nsamples=10000)
    assert obs.sum() == 10000 and 0 <= p <= 1
    assert tu.mean_check(gen, 0, 1, nsamples=50000)
    assert not tu.mean_check(gen, 0.5, 1, nsamples=50000)
    assert tu.var_check(gen, 1, nsamples=50000)


def test_retry_exceptions_and_misc():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3

    flaky()
    assert len(calls) == 3
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError):
        tu.assert_exception(int, ValueError, "1")
    a = mx.nd.ones((2,))
    assert tu.same_array(a, a) and not tu.same_array(a, a.copy())
    assert tu.same(np.ones(2), np.ones(2))
    assert tu.default_context() == mx.cpu()
    tu.set_default_context(mx.cpu(1))
    try:
        assert tu.default_context() == mx.cpu(1)
        assert tu.rand_ndarray((2,)).context == mx.cpu(1)
    finally:
        tu.set_default_context(mx.cpu(0))
    assert list(tu.list_gpus()) == []
    assert tu.same_symbol_structure(mx.sym.var("a") + 1, mx.sym.var("b") + 2)
    assert tu.np_reduce(np.ones((2, 3, 4)), (0, 2), True, np.sum).shape == (1, 3, 1)
    assert tu.assign_each(np.array([1.0, 2.0]), lambda v: v * 2).tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="gpu context"):
        tu.get_cuda_compute_capability(mx.cpu())


def test_discard_stderr_silences_fd2(capfd):
    with tu.discard_stderr():
        os.write(2, b"hidden\n")
    print("shown", file=sys.stderr)
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_dummy_iter_repeats_the_first_batch():
    it = mx.io.NDArrayIter(np.arange(12.0).reshape(6, 2), np.arange(6.0), batch_size=2)
    d = tu.DummyIter(it)
    b1, b2 = next(d), d.next()
    assert b1 is b2 and d.batch_size == 2 and d.provide_data == it.provide_data


def test_download_retries_then_raises(tmp_path):
    with pytest.raises(OSError):
        tu.download("http://127.0.0.1:9/nothing", fname=str(tmp_path / "f"), retries=1)
    existing = tmp_path / "have"
    existing.write_text("x")
    assert tu.download("http://127.0.0.1:9/x", fname=str(existing)) == str(existing)


def test_almost_equal_large_arrays_match_numpy_allclose():
    # arrays above a million elements take a one-pass path: same answers as np.allclose
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 600_000)).astype(np.float32)
    b = (a + 1e-7).astype(np.float64)
    assert mx.test_utils.almost_equal(a, b, rtol=1e-5, atol=1e-6)
    b[1, 7] += 1e-3
    assert not mx.test_utils.almost_equal(a, b, rtol=1e-5, atol=1e-6)
    a[0, 3] = b[0, 3] = np.nan
    b[1, 7] = a[1, 7]
    assert not mx.test_utils.almost_equal(a, b, rtol=1e-5, atol=1e-6)
    assert mx.test_utils.almost_equal(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    a[0, 4], b[0, 4] = np.inf, -np.inf
    assert not mx.test_utils.almost_equal(a, b, equal_nan=True)
    with pytest.raises(AssertionError, match="Error"):
        mx.test_utils.assert_almost_equal(a, b, equal_nan=True)
    # float16 (no Numba arithmetic) takes NumPy's path
    h = rng.standard_normal(1_200_000).astype(np.float16)
    assert mx.test_utils.almost_equal(h, h.copy())
    assert not mx.test_utils.almost_equal(h, h + np.float16(1))
