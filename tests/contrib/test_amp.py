"""mx.contrib.amp: MXNet 1.9.1's names and lists, dynamic loss scaling with a Gluon Trainer
(compared with values MXNet 1.9.1 printed for the same script), float16 operators after
``amp.init()``, and clear errors for what does not run here."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import sparsym as mx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# amp.init() rewraps the operator functions for the whole process, as in MXNet: the
# scripts run in a child interpreter
_LOSS_SCALING = """
import json
import sparsym as mx
from sparsym.contrib.amp import amp
from sparsym import gluon, autograd
amp.init()
p = gluon.Parameter('w', shape=(3,)); p.initialize(mx.init.Constant(0.5))
tr = gluon.Trainer([p], 'sgd', {'learning_rate': 0.1})
amp.init_trainer(tr)
x = mx.nd.array([1., 2., 3.])
res = {"initialized": amp._amp_initialized, "scales": [], "weights": []}
for big in [False, True, False]:
    with autograd.record():
        L = (p.data() * x).sum()
        with amp.scale_loss(L, tr) as sl:
            autograd.backward(sl)
    if big:
        p.grad()[:] = float('inf')
    tr.step(2)
    res["scales"].append(tr._amp_loss_scaler.loss_scale)
    res["weights"].append(p.data().asnumpy().tolist())
with autograd.record():
    L = (p.data() * x).sum()
    with amp.scale_loss([L, L], tr) as sl:
        res["list_scaled"] = [float(l.asscalar()) for l in sl]
        autograd.backward(sl)
amp.unscale(tr)
res["unscaled_grad"] = p.grad().asnumpy().tolist()
res["scale_after_unscale"] = tr._scale
xs = mx.nd.array([[1., 2.]]); xs.attach_grad()
with autograd.record():
    o = mx.nd.SoftmaxOutput(xs, mx.nd.array([0.]))
o.backward()
res["softmax_grad"] = xs.grad.asnumpy().tolist()
print(json.dumps(res))
"""

# printed by MXNet 1.9.1 for the script above (with ``mxnet`` in place of ``sparsym``):
# the overflowing second step is skipped and the scale halves after it; SoftmaxOutput's
# gradient carries the loss scale
_MXNET = {"initialized": True, "scales": [65536.0, 65536.0, 32768.0],
          "weights": [[0.45, 0.4, 0.35], [0.45, 0.4, 0.35], [0.4, 0.3, 0.2]],
          "list_scaled": [52428.796875, 52428.796875], "unscaled_grad": [2.0, 4.0, 6.0],
          "scale_after_unscale": 1.0, "softmax_grad": [[-23955.328125, 23955.328125]]}


def _run(code):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_import_forms_and_state():
    from sparsym.contrib.amp import amp
    assert mx.contrib.amp.amp is amp and amp._amp_initialized is False
    assert mx.contrib.amp.init is amp.init and mx.contrib.amp.LossScaler().loss_scale == 2 ** 16


def test_lists_are_mxnets():
    from sparsym.contrib.amp import amp
    assert amp.list_lp16_ops("float16") == ["Convolution", "Deconvolution",
                                            "FullyConnected", "RNN"]
    assert len(amp.list_fp32_ops("float16")) == 136
    assert amp.list_conditional_fp32_ops("float16") == [
        ("Activation", "act_type", ["softrelu"]), ("LeakyReLU", "act_type", ["elu", "selu"])]
    assert amp.list_loss_output_functions(np.float16)[0] == "SoftmaxOutput"
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_ops(amp.bfloat16) == ["Convolution", "FullyConnected"]
    assert amp.list_lp16_use_fp32_params(amp.bfloat16)["BatchNorm"][1] == "gamma"
    with pytest.raises(AssertionError, match="not supported type"):
        amp.list_lp16_ops("bfloat16")   # MXNet wants amp.bfloat16 here


def test_loss_scaling_matches_mxnet():
    got = json.loads(_run(_LOSS_SCALING).strip().splitlines()[-1])
    for key, want in _MXNET.items():
        np.testing.assert_allclose(np.array(got[key], dtype=float), np.array(want, dtype=float),
                                   rtol=1e-6, err_msg=key)


def test_float16_operators_after_init():
    code = """
import sparsym as mx
from sparsym.contrib.amp import amp
amp.init()
net = mx.gluon.nn.Dense(4, in_units=3); net.initialize()
print(net(mx.nd.ones((2, 3))).dtype.__name__)
s = mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=4, name='fc')
print(' '.join(s.get_internals().list_outputs()))
print(mx.nd.Activation(mx.nd.ones((2,), dtype='float16'), act_type='softrelu').dtype.__name__)
print(mx.nd.Activation(mx.nd.ones((2,), dtype='float16'), act_type='relu').dtype.__name__)
print(mx.nd.elemwise_add(mx.nd.ones((2,), dtype='float16'), mx.nd.ones((2,))).dtype.__name__)
"""
    lines = _run(code).strip().splitlines()[-5:]
    assert lines[0] == "float16"
    assert lines[1] == ("d amp_cast0_output fc_weight amp_cast1_output fc_bias "
                        "amp_cast2_output fc_output")
    assert lines[2:] == ["float32", "float16", "float32"]


def test_what_does_not_run_says_so():
    from sparsym.contrib.amp import amp
    with pytest.raises(NotImplementedError, match="amp.convert_hybrid_block: .*ReducePrec"):
        amp.convert_hybrid_block(mx.gluon.nn.Dense(2))
    with pytest.raises(NotImplementedError, match="amp.convert_symbol"):
        amp.convert_symbol(mx.sym.var("x"))
    with pytest.raises(AssertionError, match="AMP not initialized"):
        amp.init_trainer(None)
    with pytest.raises(AssertionError, match="Loss scaler is not initialized"):
        w = mx.gluon.Parameter("w", shape=(1,))
        w.initialize()
        with amp.scale_loss(mx.nd.ones((1,)), mx.gluon.Trainer([w], "sgd")):
            pass
    code = """
from sparsym.contrib.amp import amp
try:
    amp.init('bfloat16')
except NotImplementedError as e:
    print('refused', amp._amp_initialized, e)
"""
    assert "refused False amp.init(target_dtype='bfloat16'): sparsym has no bfloat16" in _run(code)
