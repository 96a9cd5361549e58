"""Loss-head cases run identically under MXNet 1.9.1 (make_mxnet_loss_fixtures.py records
mxnet_nn_loss.json) and under sparsym (test_nn_loss.py compares)."""
import numpy as np

SOFTMAX_CASES = [
    {}, {"normalization": "batch"},
    {"normalization": "valid", "use_ignore": True, "ignore_label": 2},
    {"use_ignore": True, "ignore_label": 1, "grad_scale": 2.0}, {"multi_output": True},
    {"multi_output": True, "normalization": "valid", "use_ignore": True, "ignore_label": 0},
    {"preserve_shape": True}, {"smooth_alpha": 0.1},
    {"multi_output": True, "normalization": "batch"},
]


def _fwd_bwd(mx, sym, arrays):
    exe = sym.simple_bind(mx.cpu(), **{k: v.shape for k, v in arrays.items()})
    for k, v in arrays.items():
        exe.arg_dict[k][:] = v
    exe.forward(is_train=True)
    exe.backward()
    return [exe.outputs[0].asnumpy().round(5).tolist(),
            exe.grad_dict["data"].asnumpy().round(5).tolist()]


def softmax_cases(mx):
    rng = np.random.RandomState(0)
    out = []
    for kw in SOFTMAX_CASES:
        if kw.get("multi_output"):
            x, lab = rng.randn(2, 3, 4), rng.randint(0, 3, (2, 4))
        elif kw.get("preserve_shape"):
            x, lab = rng.randn(2, 3, 4), rng.randint(0, 4, (2, 3))
        else:
            x, lab = rng.randn(4, 3), np.array([0, 2, 1, 2])
        s = mx.sym.SoftmaxOutput(mx.sym.var("data"), mx.sym.var("label"), name="sm", **kw)
        out.append(_fwd_bwd(mx, s, {"data": x, "label": lab.astype(np.float32)}))
    return out


def other_cases(mx):
    rng = np.random.RandomState(1)
    x = rng.randn(3, 4)
    out = []
    for kw in ({}, {"grad_scale": 2.0}, {"normalization": "batch"},
               {"normalization": "valid", "valid_thresh": 0.1}):
        out.append(_fwd_bwd(mx, mx.sym.MakeLoss(mx.sym.var("data"), **kw), {"data": x}))
    for op in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
        s = getattr(mx.sym, op)(mx.sym.var("data"), mx.sym.var("label"), grad_scale=3.0)
        out.append(_fwd_bwd(mx, s, {"data": x, "label": rng.randn(3, 4).round(2)}))
    s = mx.sym.MakeLoss(mx.sym.BlockGrad(mx.sym.var("data")) * mx.sym.var("b"))
    exe = s.simple_bind(mx.cpu(), data=(2,), b=(2,))
    exe.arg_dict["data"][:] = np.array([1., 2.])
    exe.arg_dict["b"][:] = np.array([3., 4.])
    exe.forward(is_train=True)
    exe.backward()
    out.append([exe.grad_dict["data"].asnumpy().tolist(), exe.grad_dict["b"].asnumpy().tolist()])
    return out
