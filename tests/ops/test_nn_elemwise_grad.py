"""Numeric gradient checks (float64) for the elementwise, broadcast, scalar and dot families
the nn operators build on (issue 5's "every operator gradient-checked")."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(17)

# op -> (numpy reference, domain offset): inputs are U(0.1, 0.4) + offset
UNARY = {
    "negative": (np.negative, 0), "abs": (np.abs, -0.6), "square": (np.square, -0.3),
    "sqrt": (np.sqrt, 0), "cbrt": (np.cbrt, 0), "relu": (lambda x: np.maximum(x, 0), -0.25),
    "tanh": (np.tanh, 0), "sin": (np.sin, 0), "sinh": (np.sinh, 0), "tan": (np.tan, 0),
    "arcsin": (np.arcsin, 0), "arcsinh": (np.arcsinh, 0), "arctan": (np.arctan, 0),
    "arctanh": (np.arctanh, 0), "expm1": (np.expm1, 0), "log1p": (np.log1p, 0),
    "degrees": (np.degrees, 0), "radians": (np.radians, 0), "sigmoid":
    (lambda x: 1 / (1 + np.exp(-x)), -0.3), "exp": (np.exp, 0), "log": (np.log, 0),
    "log2": (np.log2, 0), "log10": (np.log10, 0), "cos": (np.cos, 0), "cosh": (np.cosh, 0),
    "arccos": (np.arccos, 0), "arccosh": (np.arccosh, 1.5), "rsqrt": (lambda x: x ** -0.5, 0),
    "rcbrt": (lambda x: x ** (-1 / 3), 0), "reciprocal": (np.reciprocal, 0),
    "softsign": (lambda x: x / (1 + np.abs(x)), -0.2),
    "ceil": (np.ceil, 0), "floor": (np.floor, 0), "rint": (np.rint, 0), "trunc": (np.trunc, 0),
    "fix": (np.fix, 0), "sign": (np.sign, -0.25),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_forward_and_gradient(op):
    fn, off = UNARY[op]
    x = rng.uniform(0.1, 0.4, size=(2, 3)) + off
    s = getattr(mx.sym, op)(mx.sym.var("x"))
    check_symbolic_forward(s, {"x": x}, [fn(x)], rtol=1e-4, atol=1e-6)
    check_numeric_gradient(s, {"x": x}, numeric_eps=1e-5, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_rint_and_round_on_halves_as_mxnet():
    # MXNet 1.9.1's values: rint takes the floor on a tie (n.5 -> n, -n.5 -> -n-1), round
    # goes away from zero; NumPy's rint would give 2.0 for 1.5 and -0.0 for -0.5
    x = mx.nd.array([0.5, 1.5, 2.5, -0.5, -1.5, -0.3, 0.49999997, -2.7])
    assert mx.nd.rint(x).asnumpy().tolist() == [0, 1, 2, -1, -2, 0, 0, -3]
    assert mx.nd.round(x).asnumpy().tolist() == [1, 2, 3, -1, -2, 0, 0, -3]
    assert mx.nd.rint(x.astype("float64")).asnumpy().tolist() == [0, 1, 2, -1, -2, 0, 0, -3]


@pytest.mark.parametrize("op", ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
                                "_power", "_maximum", "_minimum", "_hypot", "broadcast_power",
                                "broadcast_maximum", "broadcast_minimum", "broadcast_hypot"])
def test_binary_elemwise_gradient(op):
    loc = {"a": rng.uniform(0.5, 1.5, (2, 3)), "b": rng.uniform(2.1, 2.9, (2, 3))}
    check_numeric_gradient(getattr(mx.sym, op)(mx.sym.var("a"), mx.sym.var("b")), loc,
                           rtol=1e-5, atol=1e-8, dtype=np.float64)


@pytest.mark.parametrize("op", ["broadcast_add", "broadcast_sub", "broadcast_mul",
                                "broadcast_div"])
@pytest.mark.parametrize("shapes", [((2, 3), (1, 3)), ((2, 1, 3), (4, 1)), ((3,), (2, 3))])
def test_broadcast_gradient(op, shapes):
    loc = {"a": rng.uniform(0.5, 1.5, shapes[0]), "b": rng.uniform(0.5, 1.5, shapes[1])}
    check_numeric_gradient(getattr(mx.sym, op)(mx.sym.var("a"), mx.sym.var("b")), loc,
                           rtol=1e-5, atol=1e-8, dtype=np.float64)


@pytest.mark.parametrize("op", ["_plus_scalar", "_minus_scalar", "_rminus_scalar",
                                "_mul_scalar", "_div_scalar", "_rdiv_scalar", "_power_scalar",
                                "_rpower_scalar", "_maximum_scalar", "_minimum_scalar"])
def test_scalar_gradient(op):
    x = rng.uniform(0.5, 1.5, (2, 3))
    check_numeric_gradient(getattr(mx.sym, op)(mx.sym.var("x"), scalar=1.1), {"x": x},
                           rtol=1e-5, atol=1e-8, dtype=np.float64)


def test_symbol_arithmetic_operators_gradient():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = (a * b - a / b + 2.0 ** a) / (b + 1.0) - (-a)
    loc = {"a": rng.uniform(0.5, 1.5, (2, 2)), "b": rng.uniform(0.5, 1.5, (2, 2))}
    check_numeric_gradient(s, loc, rtol=1e-5, atol=1e-8, dtype=np.float64)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_dot_and_batch_dot_with_transposes(ta, tb):
    a = rng.randn(*((4, 3) if ta else (3, 4)))
    b = rng.randn(*((5, 4) if tb else (4, 5)))
    s = mx.sym.dot(mx.sym.var("a"), mx.sym.var("b"), transpose_a=ta, transpose_b=tb)
    check_symbolic_forward(s, {"a": a, "b": b}, [(a.T if ta else a) @ (b.T if tb else b)],
                           rtol=1e-4, atol=1e-5)
    check_numeric_gradient(s, {"a": a, "b": b}, rtol=1e-5, atol=1e-8, dtype=np.float64)
    x = rng.randn(*((2, 4, 3) if ta else (2, 3, 4)))
    y = rng.randn(*((2, 5, 4) if tb else (2, 4, 5)))
    bs = mx.sym.batch_dot(mx.sym.var("x"), mx.sym.var("y"), transpose_a=ta, transpose_b=tb)
    want = np.matmul(x.swapaxes(1, 2) if ta else x, y.swapaxes(1, 2) if tb else y)
    check_symbolic_forward(bs, {"x": x, "y": y}, [want], rtol=1e-4, atol=1e-5)
    check_numeric_gradient(bs, {"x": x, "y": y}, rtol=1e-5, atol=1e-8, dtype=np.float64)


@pytest.mark.parametrize("op", ["_equal", "_not_equal", "_greater", "_greater_equal",
                                "_lesser", "_lesser_equal", "_logical_and", "_logical_or",
                                "_logical_xor", "broadcast_equal", "broadcast_greater",
                                "broadcast_logical_and"])
def test_comparison_and_logical_have_zero_gradient(op):
    a = np.array([[1., 0., 2.], [3., -1., 0.]])
    b = np.array([[1., 1., 0.], [2., -1., 0.]])
    va = mx.sym.var("a")
    s = getattr(mx.sym, op)(va, mx.sym.var("b")) + va
    exe = s.simple_bind(mx.cpu(), a=a.shape, b=b.shape)
    exe.arg_dict["a"][:] = a
    exe.arg_dict["b"][:] = b
    out = exe.forward(is_train=True)[0].asnumpy() - a
    assert set(np.unique(out).tolist()) <= {0.0, 1.0}
    exe.backward(mx.nd.ones(a.shape))
    assert np.all(exe.grad_dict["a"].asnumpy() == 1)
    assert np.all(exe.grad_dict["b"].asnumpy() == 0)


# Values MXNet 1.9.1 produced for the same inputs (forward, then backward with ograd = 1):
# the gradients of mod and gamma that MXNet defines and sparsym added later.
_MOD_A = np.array([[5.5, -3.2, 7.0], [1.5, 2.5, -8.1]])
_MOD_B = np.array([[2.0, 1.5, -3.0], [0.7, -2.0, 3.3]])
_MXNET_GRADS = {
    "_mod": {"a": np.ones((2, 3)), "b": [[-2.0, 3.0, 3.0], [-2.0, 2.0, 3.0]]},
    "broadcast_mod": {"a": np.ones((2, 3)), "b": [[-2.0, 3.0, 3.0], [-2.0, 2.0, 3.0]]},
    "_mod_scalar": {"a": np.ones((2, 3))},
    "_rmod_scalar": {"a": [[-1.0, 3.0, -1.0], [-4.0, -2.0, 1.0]]},
    "gamma": {"a": [[84.3291, 2.4212, 1348.4049], [0.0323, 0.9347, 12517.2969]]},
    "gammaln": {"a": [[1.6111, 0.9988, 1.8728], [0.0365, 0.7032, 2.0289]]},
}


def _mod_gamma_symbol(op, a, b):
    return {"_mod": lambda: a % b, "broadcast_mod": lambda: mx.sym.broadcast_mod(a, b),
            "_mod_scalar": lambda: a % 2.5, "_rmod_scalar": lambda: 7.3 % a,
            "gamma": lambda: mx.sym.gamma(a), "gammaln": lambda: mx.sym.gammaln(a)}[op]()


@pytest.mark.parametrize("op", sorted(_MXNET_GRADS))
def test_mod_and_gamma_gradients_match_mxnet(op):
    s = _mod_gamma_symbol(op, mx.sym.var("a"), mx.sym.var("b"))
    vals = {"a": np.abs(_MOD_A) if "gamma" in op else _MOD_A, "b": _MOD_B}
    ex = s.simple_bind(mx.cpu(), **{k: (2, 3) for k in s.list_arguments()})
    for k in s.list_arguments():
        ex.arg_dict[k][:] = vals[k]
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3)))
    for k, want in _MXNET_GRADS[op].items():
        np.testing.assert_allclose(ex.grad_dict[k].asnumpy(), want, rtol=2e-4, atol=1e-3)


@pytest.mark.parametrize("op", sorted(_MXNET_GRADS))
def test_mod_and_gamma_numeric_gradients(op):
    # away from mod's jumps: a / b, a / 2.5 and 7.3 / a stay inside (2.5, 2.9), (1, 1.1) and
    # (2.7, 2.9); gamma has no pole there
    a = rng.uniform(2.55, 2.7, (2, 3))
    b = rng.uniform(0.95, 1.0, (2, 3))
    check_numeric_gradient(_mod_gamma_symbol(op, mx.sym.var("a"), mx.sym.var("b")),
                           {"a": a, "b": b} if op in ("_mod", "broadcast_mod") else {"a": a},
                           numeric_eps=1e-6, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_gamma_gradients_at_the_poles_match_mxnet():
    # MXNet's psi is +inf at 0, -1, -2, ... (cephes); scipy's is -inf at 0 and nan below
    for fn, want in ((mx.nd.gamma, [np.inf, np.nan, np.nan, -3.480231]),
                     (mx.nd.gammaln, [np.inf, np.inf, np.inf, -1.9635108])):
        x = mx.nd.array([0.0, -1.0, -2.0, 0.5])
        x.attach_grad()
        with mx.autograd.record():
            y = fn(x)
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("make", [lambda a, b: a % b, lambda a, b: mx.sym.broadcast_mod(a, b)])
def test_integer_mod_gradient_is_zero_and_head_gradient_takes_output_dtype(make):
    """MXNet: mod's gradients are 0 for integer operands (even where rhs is 0); a float head
    gradient is copied into the int32 output's dtype (0.5 -> 0, 2.7 -> 2)."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    ints = make(mx.sym.cast(a, dtype="int32"), mx.sym.cast(b, dtype="int32"))
    grads = [mx.nd.empty((2, 3)), mx.nd.empty((2, 3))]
    ex = ints.bind(mx.cpu(), args={"a": mx.nd.array([[5, 7, 9], [3, 4, 5]]),
                                   "b": mx.nd.array([[2, 2, 2], [1, 0, 3]])}, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.array([[1.0, 0.5, 2.7], [1.5, 3, -2.5]])])
    assert not grads[0].asnumpy().any() and not grads[1].asnumpy().any()
    plus = mx.sym.cast(a, dtype="int32") + mx.sym.cast(b, dtype="int32")
    ex = plus.bind(mx.cpu(), args={"a": mx.nd.ones((2, 3)), "b": mx.nd.ones((2, 3))},
                   args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.array([[1.0, 0.5, 2.7], [1.5, 3, -2.5]])])
    np.testing.assert_array_equal(grads[0].asnumpy(), [[1, 0, 2], [1, 3, -2]])
