"""BatchNorm, Convolution, Deconvolution and Pooling: NumPy references, gradients, errors."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError, ShapeError
from sparsym.test_utils import assert_almost_equal, check_numeric_gradient, check_symbolic_forward

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")

rng = np.random.RandomState(7)


# ----------------------------------------------------------------------------- BatchNorm
def _bn_ref(x, gamma, beta, mean, var, eps, axis=1):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * \
        gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("axis", [1, -1])
def test_batchnorm_training_and_moving_stats(fix_gamma, axis):
    x = rng.randn(4, 3, 2)
    c = x.shape[axis]
    gamma, beta = rng.rand(c) + 0.5, rng.randn(c)
    bn = mx.sym.BatchNorm(mx.sym.var("x"), fix_gamma=fix_gamma, axis=axis, momentum=0.8,
                          eps=1e-3, name="bn")
    assert bn.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.infer_shape(x=x.shape)[2] == [(c,), (c,)]
    exe = bn.simple_bind(mx.cpu(), x=x.shape, type_dict={"x": "float64"})
    exe.arg_dict["x"][:] = x
    exe.arg_dict["bn_gamma"][:] = gamma
    exe.arg_dict["bn_beta"][:] = beta
    exe.aux_dict["bn_moving_var"][:] = np.ones(c)
    red = tuple(i for i in range(3) if i != axis % 3)
    mean, var = x.mean(axis=red), x.var(axis=red)
    g = np.ones(c) if fix_gamma else gamma
    out = exe.forward(is_train=True)[0]
    assert_almost_equal(out, _bn_ref(x, g, beta, mean, var, 1e-3, axis % 3), rtol=1e-6)
    assert_almost_equal(exe.aux_dict["bn_moving_mean"], 0.2 * mean, rtol=1e-6)
    assert_almost_equal(exe.aux_dict["bn_moving_var"], 0.8 + 0.2 * var, rtol=1e-6)
    # inference uses the moving statistics
    out = exe.forward(is_train=False)[0]
    assert_almost_equal(out, _bn_ref(x, g, beta, 0.2 * mean, 0.8 + 0.2 * var, 1e-3, axis % 3),
                        rtol=1e-6)
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(rng.randn(*x.shape), dtype="float64"))
    if fix_gamma:
        assert np.all(exe.grad_dict["bn_gamma"].asnumpy() == 0)
    # use_global_stats: the moving statistics are used and never updated
    gs = mx.sym.BatchNorm(mx.sym.var("x"), use_global_stats=True, axis=axis, name="bn")
    e2 = gs.simple_bind(mx.cpu(), x=x.shape)
    e2.aux_dict["bn_moving_var"][:] = np.ones(c)
    e2.forward(is_train=True)
    e2.backward(mx.nd.ones(x.shape))
    assert np.all(e2.aux_dict["bn_moving_mean"].asnumpy() == 0)


@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("use_global_stats", [False, True])
@pytest.mark.parametrize("axis", [1, -1])
def test_batchnorm_numeric_gradient(fix_gamma, use_global_stats, axis):
    x = rng.randn(3, 2, 2) if axis == 1 else rng.randn(2, 2, 3, 2)
    loc = {"x": x, "bn_gamma": rng.rand(2) + 0.5, "bn_beta": rng.randn(2)}
    aux = {"bn_moving_mean": rng.randn(2), "bn_moving_var": rng.rand(2) + 0.5}
    bn = mx.sym.BatchNorm(mx.sym.var("x"), fix_gamma=fix_gamma, axis=axis,
                          use_global_stats=use_global_stats, name="bn")
    nodes = ["x", "bn_beta"] + ([] if fix_gamma else ["bn_gamma"])
    check_numeric_gradient(bn, loc, aux_states=aux, grad_nodes=nodes, rtol=1e-4, atol=1e-6,
                           dtype=np.float64)
    if use_global_stats:
        g = np.ones(2) if fix_gamma else loc["bn_gamma"]
        check_symbolic_forward(bn, loc, [_bn_ref(x, g, loc["bn_beta"], aux["bn_moving_mean"],
                                                 aux["bn_moving_var"], 1e-3, axis % x.ndim)],
                               aux_states=aux, dtype=np.float64, rtol=1e-6)


def test_batchnorm_output_mean_var():
    bn = mx.sym.BatchNorm(mx.sym.var("x"), output_mean_var=True, name="bn")
    assert bn.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    x = rng.randn(5, 2)
    exe = bn.simple_bind(mx.cpu(), x=x.shape)
    exe.arg_dict["x"][:] = x
    exe.forward(is_train=True)
    assert_almost_equal(exe.outputs[1], x.mean(0), rtol=1e-5)
    assert_almost_equal(exe.outputs[2], 1 / np.sqrt(x.var(0) + 1e-3), rtol=1e-5)


# ----------------------------------------------------------------------------- Convolution
def _conv_ref(x, w, b, stride, pad, dilate, groups):
    """Direct (loop) 2-D cross-correlation, NCHW."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, f, oh, ow))
    fg = f // groups
    for o in range(f):
        gi = o // fg
        for i in range(oh):
            for j in range(ow):
                hs, ws = i * stride[0], j * stride[1]
                patch = xp[:, gi * cg:(gi + 1) * cg, hs:hs + dilate[0] * (kh - 1) + 1:dilate[0],
                           ws:ws + dilate[1] * (kw - 1) + 1:dilate[1]]
                y[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return y + (0 if b is None else b.reshape(1, f, 1, 1))


@pytest.mark.parametrize("stride,pad,dilate,groups", [
    ((1, 1), (1, 1), (1, 1), 1), ((2, 1), (0, 1), (1, 1), 1), ((1, 1), (1, 0), (2, 1), 2)])
def test_convolution_2d(stride, pad, dilate, groups):
    x = rng.randn(2, 4, 5, 5)
    w = rng.randn(4, 4 // groups, 3, 2)
    b = rng.randn(4)
    s = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 2), num_filter=4, stride=stride,
                           pad=pad, dilate=dilate, num_group=groups, name="c")
    loc = {"x": x, "c_weight": w, "c_bias": b}
    assert s.infer_shape(x=x.shape)[0][1] == w.shape
    check_symbolic_forward(s, loc, [_conv_ref(x, w, b, stride, pad, dilate, groups)],
                           rtol=1e-4, atol=1e-5)
    small = {"x": rng.randn(1, 4, 4, 3), "c_weight": rng.randn(4, 4 // groups, 3, 2),
             "c_bias": rng.randn(4)}
    check_numeric_gradient(s, small, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_convolution_1d_nobias_and_nhwc():
    x = rng.randn(2, 3, 7)
    w = rng.randn(5, 3, 3)
    s = mx.sym.Convolution(mx.sym.var("x"), kernel=(3,), num_filter=5, stride=(2,),
                           pad=(1,), no_bias=True, name="c")
    assert s.list_arguments() == ["x", "c_weight"]
    want = _conv_ref(x[:, :, None, :], w[:, :, None, :], None, (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    check_symbolic_forward(s, {"x": x, "c_weight": w}, [want], rtol=1e-4, atol=1e-5)
    check_numeric_gradient(s, {"x": rng.randn(1, 3, 5), "c_weight": rng.randn(5, 3, 3)},
                           rtol=1e-5, atol=1e-7, dtype=np.float64)
    x4 = rng.randn(1, 4, 4, 3)       # NHWC
    w4 = rng.randn(2, 3, 3, 3)       # (F, kh, kw, C)
    s2 = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=2, layout="NHWC",
                            no_bias=True, name="c")
    assert s2.infer_shape(x=x4.shape)[0][1] == (2, 3, 3, 3)
    ref = _conv_ref(x4.transpose(0, 3, 1, 2), w4.transpose(0, 3, 1, 2), None, (1, 1), (0, 0),
                    (1, 1), 1).transpose(0, 2, 3, 1)
    check_symbolic_forward(s2, {"x": x4, "c_weight": w4}, [ref], rtol=1e-4, atol=1e-5)


def test_convolution_bad_params():
    with pytest.raises(ParamError, match="positive"):
        mx.sym.Convolution(mx.sym.var("x"), kernel=(-1, 3), num_filter=2)
    with pytest.raises(ParamError, match="num_filter"):
        mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=0)
    with pytest.raises(ParamError, match="stride"):
        mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=2, stride=(0, 1))
    with pytest.raises(ParamError, match="1, 2 or 3 dims"):
        mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3, 3, 3), num_filter=2)
    s = mx.sym.Convolution(mx.sym.var("x"), kernel=(5, 5), num_filter=2, name="c")
    with pytest.raises(ShapeError, match="c"):
        s.infer_shape(x=(1, 3, 3, 3))
    with pytest.raises(ShapeError):
        mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=2, num_group=2) \
            .infer_shape(x=(1, 3, 5, 5))


def test_deconvolution_is_conv_adjoint():
    x = rng.randn(2, 3, 4, 4)
    w = rng.randn(3, 2, 3, 3)
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    d = mx.sym.Deconvolution(mx.sym.var("x"), num_filter=2, name="d", **kw)
    assert d.list_arguments() == ["x", "d_weight"]           # no_bias defaults to True
    y = d.eval(x=mx.nd.array(x), d_weight=mx.nd.array(w))[0].asnumpy()
    assert y.shape == (2, 2, 7, 7)
    z = rng.randn(*y.shape)
    cz = mx.nd.Convolution(mx.nd.array(z), mx.nd.array(w), num_filter=3, no_bias=True,
                           **kw).asnumpy()
    assert np.isclose((y * z).sum(), (x * cz).sum(), rtol=1e-4)
    small = {"x": rng.randn(1, 3, 3, 3), "d_weight": rng.randn(3, 2, 3, 3), "d_bias": rng.randn(2)}
    db = mx.sym.Deconvolution(mx.sym.var("x"), num_filter=2, no_bias=False, adj=(1, 1),
                              name="d", **kw)
    assert db.infer_shape(x=(1, 3, 3, 3))[1] == [(1, 2, 6, 6)]
    check_numeric_gradient(db, small, rtol=1e-5, atol=1e-7, dtype=np.float64)
    t = mx.sym.Deconvolution(mx.sym.var("x"), num_filter=2, target_shape=(8, 8), name="d", **kw)
    assert t.infer_shape(x=(2, 3, 4, 4))[1] == [(2, 2, 8, 8)]


# ----------------------------------------------------------------------------- Pooling
def _pool_ref(x, k, s, p, kind, full=False, cip=True):
    n, c, h, w = x.shape

    def osz(size, kk, ss, pp):
        span = size + 2 * pp - kk
        return (-(-span // ss) if full else span // ss) + 1
    oh, ow = osz(h, k[0], s[0], p[0]), osz(w, k[1], s[1], p[1])
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            area = (h1 - h0) * (w1 - w0)
            hs, ws = max(h0, 0), max(w0, 0)
            he, we = min(h0 + k[0], h), min(w0 + k[1], w)
            win = x[:, :, hs:he, ws:we]
            if kind == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            elif kind == "sum":
                y[:, :, i, j] = win.sum(axis=(2, 3))
            else:
                y[:, :, i, j] = win.sum(axis=(2, 3)) / (area if cip else win[0, 0].size)
    return y


@pytest.mark.parametrize("kind", ["max", "avg", "sum"])
@pytest.mark.parametrize("conv", ["valid", "full"])
def test_pooling_2d(kind, conv):
    x = rng.randn(2, 2, 6, 6)
    s = mx.sym.Pooling(mx.sym.var("x"), kernel=(2, 3), stride=(2, 2), pad=(1, 0),
                       pool_type=kind, pooling_convention=conv)
    want = _pool_ref(x, (2, 3), (2, 2), (1, 0), kind, conv == "full")
    assert s.infer_shape(x=x.shape)[1] == [want.shape]
    check_symbolic_forward(s, {"x": x}, [want], rtol=1e-5, atol=1e-6)
    check_numeric_gradient(s, {"x": rng.randn(1, 1, 4, 5)}, rtol=1e-5, atol=1e-7, dtype=np.float64)


def test_pooling_global_lp_count_include_pad_1d():
    x = rng.rand(2, 3, 4, 5) + 0.1
    g = mx.nd.Pooling(mx.nd.array(x), pool_type="avg", global_pool=True)
    assert_almost_equal(g, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)
    lp = mx.sym.Pooling(mx.sym.var("x"), kernel=(2, 2), pool_type="lp", p_value=2)
    want = np.sqrt(_pool_ref(x ** 2, (2, 2), (1, 1), (0, 0), "sum"))
    check_symbolic_forward(lp, {"x": x}, [want], rtol=1e-5, atol=1e-6)
    check_numeric_gradient(lp, {"x": rng.rand(1, 1, 3, 3) + 0.5}, rtol=1e-5, atol=1e-7,
                           dtype=np.float64)
    a = mx.nd.Pooling(mx.nd.array(x), kernel=(3, 3), pad=(1, 1), pool_type="avg",
                      count_include_pad=False)
    assert_almost_equal(a, _pool_ref(x, (3, 3), (1, 1), (1, 1), "avg", cip=False), rtol=1e-5)
    x1 = rng.randn(2, 3, 7)
    p1 = mx.nd.Pooling(mx.nd.array(x1), kernel=(3,), stride=(2,), pool_type="max")
    assert_almost_equal(p1, _pool_ref(x1[:, :, None], (1, 3), (1, 2), (0, 0), "max")[:, :, 0],
                        rtol=1e-6)


def test_pooling_bad_params():
    with pytest.raises(ParamError):
        mx.sym.Pooling(mx.sym.var("x"), kernel=(-2, 2))
    with pytest.raises(ParamError, match="pool_type"):
        mx.sym.Pooling(mx.sym.var("x"), kernel=(2, 2), pool_type="median")
    with pytest.raises(ShapeError):
        mx.sym.Pooling(mx.sym.var("x"), kernel=(4, 4)).infer_shape(x=(1, 1, 2, 2))


@pytest.mark.parametrize("onednn", [True, False])
@pytest.mark.parametrize("want", ["data", "params"])
def test_deconv_backward_computes_only_the_gradients_read(onednn, want):
    # autograd's plan marks the gradients nothing reads; the deconvolution's backward skips
    # them (one primitive each on oneDNN) and its gradients match the full backward's
    from sparsym.kernels import onednn as dnn
    if onednn and not dnn.available():
        pytest.skip("oneDNN wheel not installed")
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, 16, 5, 5)).astype(np.float32)
    w0 = rng.standard_normal((16, 8, 4, 4)).astype(np.float32)
    b0 = rng.standard_normal(8).astype(np.float32)
    kw = dict(kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=8, no_bias=False)
    with dnn.use(onednn):
        full = [mx.nd.array(v) for v in (x0, w0, b0)]
        part = [mx.nd.array(v) for v in (x0, w0, b0)]
        for a in full:
            a.attach_grad()
        for i in ([0] if want == "data" else [1, 2]):
            part[i].attach_grad()
        for arrs in (full, part):
            with mx.autograd.record():
                y = mx.nd.Deconvolution(*arrs, **kw)
            y.backward(mx.nd.array(np.linspace(-1, 1, y.size, dtype=np.float32)
                                   .reshape(y.shape)))
        for i in ([0] if want == "data" else [1, 2]):
            np.testing.assert_allclose(part[i].grad.asnumpy(), full[i].grad.asnumpy(),
                                       rtol=1e-5, atol=1e-5)
        c = mx.sym.Deconvolution(mx.sym.var("x"), name="d", **kw)
        req = {"x": "write" if want == "data" else "null",
               "d_weight": "null" if want == "data" else "write",
               "d_bias": "null" if want == "data" else "write"}
        exe = c.simple_bind(mx.cpu(), x=x0.shape, grad_req=req)
        step, = [s for s in exe._plan.backward_steps if s.op_name == "_backward_Deconvolution"]
        assert step.attrs["__unused__"] == ((1, 2) if want == "data" else (0,))
        g = rng.standard_normal((2, 8, 10, 10)).astype(np.float32)
        outs = step.kernel(step.attrs, [g, x0, w0])
        assert [o is None for o in outs] == ([False, True, True] if want == "data"
                                              else [True, False, False])


@pytest.mark.parametrize("onednn", [True, False])
@pytest.mark.parametrize("no_bias", [True, False])
def test_conv_backward_computes_only_the_gradients_read(onednn, no_bias):
    from sparsym.kernels import onednn as dnn
    if onednn and not dnn.available():
        pytest.skip("oneDNN wheel not installed")
    c = mx.sym.Convolution(mx.sym.var("x"), kernel=(1, 1), stride=(2, 2), num_filter=8,
                           no_bias=no_bias, name="c")
    names = ("x", "c_weight") + (() if no_bias else ("c_bias",))
    req = {n: "null" for n in names}
    req["x"] = "write"
    rng = np.random.default_rng(0)
    vals = {"x": rng.standard_normal((2, 16, 6, 6)), "c_weight": rng.standard_normal(
        (8, 16, 1, 1)), "c_bias": rng.standard_normal(8)}
    g = rng.standard_normal((2, 8, 3, 3))
    with dnn.use(onednn):
        exe = c.simple_bind(mx.cpu(), x=(2, 16, 6, 6), grad_req=req)
        step, = [s for s in exe._plan.backward_steps if s.op_name == "_backward_Convolution"]
        assert step.attrs["__unused__"] == tuple(range(1, len(names)))
        for n in names:
            exe.arg_dict[n][:] = vals[n]
        exe.forward(is_train=True)
        exe.backward(mx.nd.array(g))
        w = vals["c_weight"][:, :, 0, 0]
        want = np.zeros((2, 16, 6, 6))
        want[:, :, ::2, ::2] = np.einsum("nfhw,fc->nchw", g, w)
        np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), want, rtol=1e-4, atol=1e-4)
        outs = step.kernel(step.attrs, [np.asarray(a, np.float32) for a in
                                        (g, vals["x"], vals["c_weight"])])
        assert outs[0] is not None and all(o is None for o in outs[1:])
