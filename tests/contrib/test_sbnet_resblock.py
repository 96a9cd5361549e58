"""The fused sparse bottleneck residual block (contrib.SparseBottleneck)."""
import numpy as np
import pytest
from sbnet_helpers import (
    assert_numeric_grads,
    executor,
    from_nhwc,
    naive_conv_nhwc,
    receptive_mask,
    to_nhwc,
)

import sparsym as mx
from sparsym.contrib import sbnet

# every test runs on oneDNN's primitives and on the Numba kernels
pytestmark = pytest.mark.usefixtures("dnn_path")

RNG = np.random.default_rng(5)
EPS = 1e-3
PARAMS = ("bn1_gamma", "bn1_beta", "conv1_weight", "bn2_gamma", "bn2_beta", "conv2_weight",
          "bn3_gamma", "bn3_beta", "conv3_weight")
AUX = ("bn1_moving_mean", "bn1_moving_var", "bn2_moving_mean", "bn2_moving_var",
       "bn3_moving_mean", "bn3_moving_var")


def _values(layout, n, h, w, c, k):
    x = RNG.standard_normal((n, h, w, c))
    ws = [RNG.standard_normal((k, c, 1, 1)) * 0.5, RNG.standard_normal((k, k, 3, 3)) * 0.3,
          RNG.standard_normal((c, k, 1, 1)) * 0.5]
    if layout == "NHWC":
        ws = [wt.transpose(0, 2, 3, 1) for wt in ws]
    args = {"x": from_nhwc(x, layout)}
    for i, (ch, wt) in enumerate(zip((c, k, k), ws), 1):
        args[f"rb_bn{i}_gamma"] = RNG.random(ch) + 0.5
        args[f"rb_bn{i}_beta"] = RNG.standard_normal(ch) * 0.2
        args[f"rb_conv{i}_weight"] = wt
    aux = {}
    for i, ch in enumerate((c, k, k), 1):
        aux[f"rb_bn{i}_moving_mean"] = RNG.standard_normal(ch) * 0.1
        aux[f"rb_bn{i}_moving_var"] = RNG.random(ch) + 0.5
    return args, aux


def _sparse_sym(layout, k, **kw):
    return sbnet.sparse_res_block_bottleneck(mx.sym.var("x"), mx.sym.var("m"), num_filter=k,
                                             layout=layout, name="rb", **kw)


def _dense_sym(layout, k, c):
    """The same block from registered ops (the dense network)."""
    ax = 3 if layout == "NHWC" else 1
    lay = "NHWC" if layout == "NHWC" else None
    x = mx.sym.var("x")
    h = x
    for i, (f, kern, pad) in enumerate(((k, 1, 0), (k, 3, 1), (c, 1, 0)), 1):
        h = mx.sym.BatchNorm(h, mx.sym.var(f"rb_bn{i}_gamma"), mx.sym.var(f"rb_bn{i}_beta"),
                             mx.sym.var(f"rb_bn{i}_moving_mean"),
                             mx.sym.var(f"rb_bn{i}_moving_var"), fix_gamma=False, eps=EPS,
                             axis=ax, name=f"rb_bn{i}")
        h = mx.sym.Activation(h, act_type="relu")
        h = mx.sym.Convolution(h, mx.sym.var(f"rb_conv{i}_weight"), kernel=(kern, kern),
                               pad=(pad, pad), num_filter=f, no_bias=True, layout=lay)
    return x + h


def _oracle(args, aux, mask, layout, train):
    """NumPy: y = x + F(x) * m_out with BN statistics over the pixel-exact regions."""
    x = to_nhwc(args["x"], layout)
    n, h, w, c = x.shape
    mo = receptive_mask(mask, (3, 3), (1, 1), (1, 1), (h, w))
    r1 = receptive_mask(mo.astype(np.float32), (3, 3), (1, 1), (1, 1), (h, w))

    def wt(i):
        v = args[f"rb_conv{i}_weight"]
        return v if layout == "NCHW" else v.transpose(0, 3, 1, 2)

    def bn(v, i, region):
        if train:
            mean, var = v[region].mean(axis=0), v[region].var(axis=0)
        else:
            mean, var = aux[f"rb_bn{i}_moving_mean"], aux[f"rb_bn{i}_moving_var"]
        stats[i] = (mean, var)
        return np.maximum((v - mean) / np.sqrt(var + EPS) * args[f"rb_bn{i}_gamma"]
                          + args[f"rb_bn{i}_beta"], 0)

    stats = {}
    t = bn(x, 1, r1) @ wt(1)[:, :, 0, 0].T
    t = naive_conv_nhwc(bn(t, 2, r1), wt(2), (1, 1), ((1, 1), (1, 1)))
    t = bn(t, 3, mo) @ wt(3)[:, :, 0, 0].T
    return from_nhwc(x + t * mo[..., None], layout), stats


def _mask(shape, layout, density):
    m = (RNG.random(shape) < density).astype(np.float32)
    n, h, w = shape
    return m, (m.reshape(n, h, w, 1) if layout == "NHWC" else m.reshape(n, 1, h, w))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("train", [False, True])
def test_all_ones_mask_reproduces_the_dense_block(layout, train):
    n, h, w, c, k = 2, 9, 8, 5, 3
    args, aux = _values(layout, n, h, w, c, k)
    ones = np.ones((n, h, w), np.float32)
    sp = executor(_sparse_sym(layout, k, eps=EPS), dict(args, m=ones), aux=aux)
    de = executor(_dense_sym(layout, k, c), args, aux=aux)
    ys = sp.forward(is_train=train)[0].asnumpy()
    yd = de.forward(is_train=train)[0].asnumpy()
    np.testing.assert_allclose(ys, yd, rtol=1e-10, atol=1e-10)
    for name in aux:    # moving statistics updated (training) or kept, identically
        np.testing.assert_allclose(sp.aux_dict[name].asnumpy(), de.aux_dict[name].asnumpy(),
                                   rtol=1e-10, atol=1e-12)
    head = mx.nd.array(RNG.standard_normal(yd.shape), dtype=np.float64)
    sp.backward(head, is_train=train)
    de.backward(head, is_train=train)
    for name in args:
        np.testing.assert_allclose(sp.grad_dict[name].asnumpy(), de.grad_dict[name].asnumpy(),
                                   rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("dispatch,bsize", [("sparse", None), ("sparse", (6, 5)),
                                            ("dense", None), ("auto", None)])
def test_sparse_mask_matches_the_numpy_oracle(layout, train, dispatch, bsize):
    n, h, w, c, k = 2, 13, 11, 3, 4
    args, aux = _values(layout, n, h, w, c, k)
    mask, m4 = _mask((n, h, w), layout, 0.06)
    exe = executor(_sparse_sym(layout, k, eps=EPS, dispatch=dispatch, bsize=bsize),
                   dict(args, m=m4), aux=aux)
    y = exe.forward(is_train=train)[0].asnumpy()
    want, stats = _oracle(args, aux, mask, layout, train)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-10)
    if train:   # moving = moving * 0.9 + batch * 0.1 over the same regions
        for i in (1, 2, 3):
            np.testing.assert_allclose(exe.aux_dict[f"rb_bn{i}_moving_mean"].asnumpy(),
                                       aux[f"rb_bn{i}_moving_mean"] * 0.9 + stats[i][0] * 0.1,
                                       rtol=1e-10)
            np.testing.assert_allclose(exe.aux_dict[f"rb_bn{i}_moving_var"].asnumpy(),
                                       aux[f"rb_bn{i}_moving_var"] * 0.9 + stats[i][1] * 0.1,
                                       rtol=1e-10)


@pytest.mark.parametrize("layout,train,bsize", [("NCHW", True, (5, 6)), ("NHWC", True, None),
                                                ("NHWC", False, (4, 4))])
def test_numeric_gradients_through_the_block(layout, train, bsize):
    n, h, w, c, k = 2, 6, 7, 3, 2
    args, aux = _values(layout, n, h, w, c, k)
    mask, m4 = _mask((n, h, w), layout, 0.08)
    mask[0, 0, 0] = 1   # a border block
    m4 = m4.copy()
    m4.reshape(n, h, w)[0, 0, 0] = 1
    s = _sparse_sym(layout, k, eps=EPS, bsize=bsize, dispatch="sparse")
    vals = dict(args, m=m4)
    exe = executor(s, vals, aux=aux)
    y = exe.forward(is_train=train)[0].asnumpy()
    head = RNG.standard_normal(y.shape)
    exe.backward(mx.nd.array(head, dtype=np.float64), is_train=train)
    grads = {name: exe.grad_dict[name].asnumpy() for name in args}
    assert_numeric_grads(grads, s, vals, head, list(args), aux=aux, is_train=train)
    assert not exe.grad_dict["m"].asnumpy().any()


def test_empty_mask_is_the_identity():
    args, aux = _values("NCHW", 1, 5, 6, 2, 2)
    exe = executor(_sparse_sym("NCHW", 2), dict(args, m=np.zeros((1, 5, 6), np.float32)),
                   aux=aux)
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), args["x"])
    exe.backward(mx.nd.ones(args["x"].shape, dtype=np.float64))
    assert (exe.grad_dict["x"].asnumpy() == 1).all()
    assert not exe.grad_dict["rb_conv2_weight"].asnumpy().any()
    for name in aux:   # no statistics from an empty region
        np.testing.assert_array_equal(exe.aux_dict[name].asnumpy(), aux[name])


def test_symbol_interface():
    s = _sparse_sym("NCHW", 4)
    assert s.list_arguments() == ["x", "m"] + [f"rb_{p}" for p in PARAMS]
    assert s.list_auxiliary_states() == [f"rb_{a}" for a in AUX]
    args, outs, auxs = s.infer_shape(x=(2, 16, 10, 12))
    assert outs == [(2, 16, 10, 12)]
    assert args[1:5] == [(2, 1, 10, 12), (16,), (16,), (4, 16, 1, 1)]
    assert args[7] == (4, 4, 3, 3) and args[10] == (16, 4, 1, 1)
    assert auxs == [(16,), (16,), (4,), (4,), (4,), (4,)]


@pytest.mark.parametrize("train", [False, True])
def test_chained_blocks_update_in_place_when_nothing_reads_the_input_later(train):
    """x -> block1 -> block2: in inference block2 takes block1's output buffer and adds its
    residual in place (SBNet's use_var); in training backward reads it, so no."""
    if "inplace" not in getattr(mx.ops.registry.OpDef, "__dataclass_fields__", {}):
        pytest.skip("executor without in-place memory planning")
    from sparsym.kernels.sbnet import fused
    n, h, w, c, k = 1, 20, 24, 4, 2
    m = mx.sym.var("m")
    b1 = sbnet.sparse_res_block_bottleneck(mx.sym.var("x"), m, k, name="b1", bsize=(6, 6))
    b2 = sbnet.sparse_res_block_bottleneck(b1, m, k, name="b2", bsize=(6, 6))
    net = b2 * 1.0
    mask = np.zeros((n, 1, h, w), np.float32)
    mask[0, 0, 3:9, 5:15] = 1
    exe = net.simple_bind(mx.cpu(), grad_req="write" if train else "null", x=(n, c, h, w),
                          m=mask.shape, type_dict={"x": np.float64})
    for name, arr in exe.arg_dict.items():
        arr[:] = mask if name == "m" else RNG.standard_normal(arr.shape) * 0.5 + (
            1.0 if name.endswith("gamma") else 0.0)
    for name, arr in exe.aux_dict.items():
        arr[:] = 1.0 if name.endswith("var") else 0.0
    before = dict(fused.stats)
    y = exe.forward(is_train=train)[0].asnumpy()
    assert (fused.stats["res_inplace"] - before["res_inplace"]) == (0 if train else 1)
    # the reference: each block on its own through the imperative front end
    args = {n_: a for n_, a in exe.arg_dict.items()}
    aux = {n_: a for n_, a in exe.aux_dict.items()}
    h1 = args["x"]
    for b in ("b1", "b2"):
        h1 = mx.nd.contrib.SparseBottleneck(
            h1, args["m"], *[args[f"{b}_{p}"] for p in PARAMS], *[aux[f"{b}_{a}"] for a in AUX],
            num_filter=k, bsize=(6, 6))
    if not train:
        np.testing.assert_allclose(y, h1.asnumpy(), rtol=1e-12, atol=1e-12)
    # the bound input is never modified
    assert exe.arg_dict["x"].asnumpy().std() > 0.3


def test_json_round_trip_of_a_sparse_network():
    m = mx.sym.var("m")
    s = sbnet.SparseBlockConvolution(mx.sym.var("x"), m, num_filter=4, kernel=(3, 3),
                                     pad=(1, 1), name="sb", bsize=(6, 6))
    net = sbnet.sparse_res_block_bottleneck(s, m, 2, name="rb", dispatch="sparse")
    back = mx.sym.load_json(net.tojson())
    assert back.list_arguments() == net.list_arguments()
    assert back.list_auxiliary_states() == net.list_auxiliary_states()
    assert back.infer_shape(x=(1, 3, 10, 10))[1] == [(1, 4, 10, 10)]
    assert back.tojson() == net.tojson()


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_backward_reuses_the_training_forward_activations(layout):
    # a training forward keeps its tiles and stage activations with the data array; the
    # backward reuses them, with the gradients of a backward that recomputes them
    from sparsym.kernels.sbnet import fused
    n, h, w, c, k = 1, 20, 18, 4, 2
    args, aux = _values(layout, n, h, w, c, k)
    _, m4 = _mask((n, h, w), layout, 0.05)
    m4 = m4.copy()
    m4.reshape(n, h, w)[0, 9, 9] = 1
    x = mx.nd.array(args["x"], dtype="float32")
    params = [mx.nd.array(args[f"rb_{p}"], dtype="float32") for p in PARAMS]
    moving = [mx.nd.array(aux[f"rb_{a}"], dtype="float32") for a in AUX]
    m = mx.nd.array(m4)
    head = mx.nd.array(RNG.standard_normal(x.shape), dtype="float32")
    grads = []
    for reuse in (True, False):
        for v in [x] + params:
            v.attach_grad()
        with mx.autograd.record():
            y = mx.nd.contrib.SparseBottleneck(x, m, *params, *moving, num_filter=k,
                                               layout=layout, bsize=(6, 6),
                                               dispatch="sparse")
        assert fused._RES_KEPT.get(x._raw) is not None
        if not reuse:
            fused._RES_KEPT.put(x._raw, None)  # forget: the backward recomputes
        y.backward(head)
        grads.append([v.grad.asnumpy() for v in [x] + params])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
