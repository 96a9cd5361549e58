"""A hybridized block in a training loop: one backward plan for every step, one executor
per pending call, gradients as without hybridize."""
import numpy as np

import sparsym as mx
from sparsym import autograd, gluon
from sparsym.executor import plan as plan_mod


def _net(hybridize):
    mx.random.seed(0)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(5, activation="relu", in_units=4), gluon.nn.Dense(3, in_units=5))
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    return net


def _batches():
    rng = np.random.RandomState(1)
    return [(mx.nd.array(rng.rand(6, 4)), mx.nd.array(rng.randint(0, 3, 6)))
            for _ in range(4)]


def _train(net, steps):
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    out = []
    for x, y in steps:
        with autograd.record():
            lv = loss(net(x), y)
        lv.backward()
        tr.step(x.shape[0])
        out.append(float(lv.mean().asscalar()))
    return out


def test_hybridized_training_builds_its_backward_plan_once(monkeypatch):
    calls = []
    real = plan_mod.build_plan
    monkeypatch.setattr(plan_mod, "build_plan", lambda *a: calls.append(1) or real(*a))
    net = _net(True)
    batches = _batches()
    _train(net, batches[:1])
    first = len(calls)  # the block's own executor and the tape's backward plan
    _train(net, batches[1:])
    assert len(calls) == first
    assert len(net._cached_op._execs) == 1


def test_hybridized_losses_and_weights_match_imperative():
    batches = _batches()
    a, b = _net(False), _net(True)
    la, lb = _train(a, batches), _train(b, batches)
    np.testing.assert_allclose(la, lb, rtol=1e-5)
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        np.testing.assert_allclose(pa.data().asnumpy(), pb.data().asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_two_pending_calls_keep_their_own_executors():
    net = _net(True)
    x1, x2 = mx.nd.ones((2, 4)), mx.nd.array(np.arange(8).reshape(2, 4) / 8.0)
    ref = _net(False)
    for _step in range(2):  # the second step reuses both executors
        with autograd.record():
            y = net(x1).sum() + 2 * net(x2).sum()
        y.backward()
        with autograd.record():
            r = ref(x1).sum() + 2 * ref(x2).sum()
        r.backward()
        for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
            np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-5)
    assert sum(len(v) for v in net._cached_op._execs.values()) == 2


def test_unread_fc_data_gradient_is_skipped_and_monitor_still_runs():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    exe = fc.simple_bind(mx.cpu(), x=(2, 4), grad_req={"x": "null", "fc_weight": "write",
                                                       "fc_bias": "write"})
    bw = [s for s in exe._plan.backward_steps if s.op_name == "_backward_FullyConnected"]
    assert bw and bw[0].attrs["__unused__"] == (0,)
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append(name))
    exe.arg_dict["x"][:] = 1.0
    exe.arg_dict["fc_weight"][:] = 0.5
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), np.full((3, 4), 2.0))
    assert seen


def test_dropped_blocks_do_not_stay_alive_in_the_plan_cache():
    # each hybridized block's plan holds its bound executor: only a few are kept
    import gc

    from sparsym import autograd as ag
    for _ in range(7):
        net = mx.gluon.nn.Dense(3, in_units=4)
        net.initialize()
        net.hybridize()
        x = mx.nd.ones((2, 4))
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        y.backward()
        del net, x, y
        gc.collect()
    assert len(ag._BOUND_PLANS) <= ag._BOUND_PLANS_MAX
