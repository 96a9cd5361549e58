"""Optimizer states written by MXNet 1.9.1 and a run resumed from them: shared by
test_mxnet_optimizer_states.py and make_mxnet_states_fixtures.py (which runs ``train_*`` and
``resume_*`` on MXNet 1.9.1 and keeps the files in tests/fixtures/mxnet/optstates/). Every
function takes the engine module as ``mx``."""
import os

import numpy as np

OPTIMIZERS = {"adam": {"learning_rate": 0.1}, "sgd": {"learning_rate": 0.1, "momentum": 0.9}}


def _x(step):
    return np.arange(6, dtype=np.float32).reshape(2, 3) / (step + 1.0)


def _trainer_step(mx, net, trainer, step):
    with mx.autograd.record():
        loss = (net(mx.nd.array(_x(step))) ** 2).sum()
    loss.backward()
    trainer.step(2)


def _weights(net):
    return np.concatenate([p.data().asnumpy().ravel()
                           for _, p in sorted(net.collect_params().items())])


def train_trainer(mx, opt, folder):
    """Two Gluon steps, then ``Trainer.save_states`` (the optimizer is pickled with them)."""
    net = mx.gluon.nn.Dense(2, in_units=3, prefix="dense0_")
    net.initialize(mx.init.Constant(0.5))
    trainer = mx.gluon.Trainer(net.collect_params(), opt, OPTIMIZERS[opt])
    for step in range(2):
        _trainer_step(mx, net, trainer, step)
    trainer.save_states(os.path.join(folder, f"trainer_{opt}.states"))
    net.save_parameters(os.path.join(folder, f"trainer_{opt}.params"))


def resume_trainer(mx, opt, folder):
    """Load parameters and states into a new net and Trainer; the weights after 2 more steps."""
    net = mx.gluon.nn.Dense(2, in_units=3, prefix="dense0_")
    net.load_parameters(os.path.join(folder, f"trainer_{opt}.params"))
    trainer = mx.gluon.Trainer(net.collect_params(), opt, OPTIMIZERS[opt])
    trainer.load_states(os.path.join(folder, f"trainer_{opt}.states"))
    out = []
    for step in range(2, 4):
        _trainer_step(mx, net, trainer, step)
        out.append(_weights(net))
    return np.array(out)


def _module_symbol(mx):
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    return mx.sym.LinearRegressionOutput(fc, name="lro")


def _module_batch(mx, step):
    return mx.io.DataBatch([mx.nd.array(_x(step))], [mx.nd.ones((2, 2))])


def _bind(mod):
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("lro_label", (2, 2))])


def train_module(mx, opt, folder):
    """Two Module steps, then ``save_checkpoint(..., save_optimizer_states=True)``."""
    mod = mx.mod.Module(_module_symbol(mx), label_names=["lro_label"])
    _bind(mod)
    mod.init_params(mx.init.Constant(0.5))
    mod.init_optimizer(optimizer=opt, optimizer_params=OPTIMIZERS[opt])
    for step in range(2):
        mod.forward_backward(_module_batch(mx, step))
        mod.update()
    mod.save_checkpoint(os.path.join(folder, f"module_{opt}"), 2, save_optimizer_states=True)


def resume_module(mx, opt, folder):
    """``Module.load(..., load_optimizer_states=True)``; the weights after 2 more steps."""
    mod = mx.mod.Module.load(os.path.join(folder, f"module_{opt}"), 2,
                             load_optimizer_states=True, label_names=["lro_label"])
    _bind(mod)
    mod.init_optimizer(optimizer=opt, optimizer_params=OPTIMIZERS[opt])
    out = []
    for step in range(2, 4):
        mod.forward_backward(_module_batch(mx, step))
        mod.update()
        arg = mod.get_params()[0]
        out.append(np.concatenate([arg[k].asnumpy().ravel() for k in sorted(arg)]))
    return np.array(out)
