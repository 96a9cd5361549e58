"""Embedding-bag fusion (passes/fuse.py, fuse_embedding_bags): Embedding -> broadcast_mul by
per-id values -> sum over axis 1 runs as one step, in training plans too, with the unfused
outputs and gradients bit for bit; it is left alone where it would change anything."""
import numpy as np
import pytest

import sparsym as mx


def _bag(swap=False, axis=2):
    ids, vals = mx.sym.var("ids"), mx.sym.var("vals")
    emb = mx.sym.Embedding(ids, mx.sym.var("w"), input_dim=60, output_dim=6, sparse_grad=True,
                           name="emb")
    ex = mx.sym.expand_dims(vals, axis=axis)
    prod = mx.sym.broadcast_mul(ex, emb) if swap else mx.sym.broadcast_mul(emb, ex)
    return mx.sym.sum(prod, axis=1, name="bag")


def _net(**kw):
    bag = _bag(**kw)
    fc = mx.sym.FullyConnected(bag, num_hidden=3, name="fc")
    return mx.sym.LogisticRegressionOutput(mx.sym.sum(fc, axis=1, keepdims=True),
                                           mx.sym.var("y"), name="out")


def _run(sym, monkeypatch, on, grad_req=None, stype="row_sparse", ids_dtype=np.float32):
    monkeypatch.setenv("SPARSYM_FUSE", "1" if on else "0")
    rng = np.random.default_rng(0)
    args = {"ids": mx.nd.array(rng.integers(-2, 62, (40, 5)), dtype=ids_dtype),
            "vals": mx.nd.array(rng.standard_normal((40, 5))),
            "w": mx.nd.array(rng.standard_normal((60, 6))),
            "y": mx.nd.array(rng.integers(0, 2, (40, 1)))}
    names = sym.list_arguments()
    if "fc_weight" in names:
        args["fc_weight"] = mx.nd.array(rng.standard_normal((3, 6)))
        args["fc_bias"] = mx.nd.array(rng.standard_normal(3))
    reqs = grad_req or {n: ("write" if n in ("w", "fc_weight", "fc_bias") else "null")
                        for n in names}
    grads = {n: mx.nd.zeros(args[n].shape, stype=stype if n == "w" else "default")
             for n, r in reqs.items() if r != "null"}
    ex = sym.bind(mx.cpu(), {n: args[n] for n in names}, args_grad=grads, grad_req=reqs)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    ex.backward()
    return ex, outs, {n: g.asnumpy() for n, g in grads.items()}


def _ops(ex):
    return [s.op_name for s in ex._plan.forward_steps + ex._plan.backward_steps]


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("stype", ["row_sparse", "default"])
def test_training_plan_fuses_the_bag_with_the_same_results(monkeypatch, swap, stype):
    sym = _net(swap=swap)
    ex_on, on, g_on = _run(sym, monkeypatch, True, stype=stype)
    ex_off, off, g_off = _run(sym, monkeypatch, False, stype=stype)
    fused = _ops(ex_on)
    if swap:  # the values come first: the fused op's inputs would reorder the arguments
        assert "_embedding_bag_sum" not in fused
    else:
        assert "_embedding_bag_sum" in fused and "_backward_embedding_bag_sum" in fused
        assert "Embedding" not in fused and "broadcast_mul" not in fused
    assert "_embedding_bag_sum" not in _ops(ex_off)
    assert ex_on.output_names == ex_off.output_names
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)
    assert sorted(g_on) == sorted(g_off)
    for n in g_on:
        np.testing.assert_array_equal(g_on[n], g_off[n])


def test_inference_plan_fuses_the_bag(monkeypatch):
    sym = _bag()
    ex_on, on, _ = _run(sym, monkeypatch, True, grad_req={"ids": "null", "w": "null",
                                                           "vals": "null"})
    ex_off, off, _ = _run(sym, monkeypatch, False, grad_req={"ids": "null", "w": "null",
                                                             "vals": "null"})
    assert [s.op_name for s in ex_on._plan.forward_steps] == ["_embedding_bag_sum"]
    assert ex_on.output_names == ex_off.output_names == ["bag_output"]
    np.testing.assert_array_equal(on[0], off[0])


def test_values_wanting_a_gradient_keep_the_separate_ops(monkeypatch):
    sym = _net()
    reqs = {n: "write" if n in ("w", "vals", "fc_weight", "fc_bias") else "null"
            for n in sym.list_arguments()}
    ex_on, on, g_on = _run(sym, monkeypatch, True, grad_req=reqs)
    _, off, g_off = _run(sym, monkeypatch, False, grad_req=reqs)
    assert "_embedding_bag_sum" not in _ops(ex_on)
    for n in g_on:
        np.testing.assert_array_equal(g_on[n], g_off[n])


def test_an_intermediate_read_elsewhere_keeps_the_separate_ops(monkeypatch):
    ids, vals = mx.sym.var("ids"), mx.sym.var("vals")
    emb = mx.sym.Embedding(ids, mx.sym.var("w"), input_dim=60, output_dim=6, name="emb")
    bag = mx.sym.sum(mx.sym.broadcast_mul(emb, mx.sym.expand_dims(vals, axis=2)), axis=1)
    sym = mx.sym.Group([bag, mx.sym.sum(emb, axis=(1, 2))])
    reqs = {"ids": "null", "w": "null", "vals": "null"}
    ex, on, _ = _run(sym, monkeypatch, True, grad_req=reqs)
    _, off, _ = _run(sym, monkeypatch, False, grad_req=reqs)
    assert "_embedding_bag_sum" not in _ops(ex)
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)


def test_gluon_sparse_embedding_model_trains_alike(monkeypatch):
    """The benchmark's model (hybridized, Trainer with lazy SGD): the same weights after a
    few steps with and without the fusion."""
    def train(on):
        monkeypatch.setenv("SPARSYM_FUSE", "1" if on else "0")
        mx.random.seed(0)
        gluon = mx.gluon

        class Net(gluon.HybridBlock):
            def __init__(self, **kw):
                super().__init__(**kw)
                with self.name_scope():
                    self.emb = gluon.nn.Embedding(500, 8, sparse_grad=True)
                    self.head = gluon.nn.Dense(1, in_units=8)

            def hybrid_forward(self, F, ids, vals):
                e = F.broadcast_mul(self.emb(ids), F.expand_dims(vals, axis=2))
                return self.head(F.sum(e, axis=1))

        net = Net()
        net.initialize(mx.init.Normal(0.1))
        net.hybridize()
        lossf = gluon.loss.SigmoidBinaryCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        rng = np.random.default_rng(1)
        for _ in range(4):
            ids = mx.nd.array(rng.integers(0, 500, (64, 6)))
            vals = mx.nd.array(rng.random((64, 6)))
            y = mx.nd.array(rng.integers(0, 2, 64))
            with mx.autograd.record():
                loss = lossf(net(ids, vals), y)
            loss.backward()
            trainer.step(64)
        plan = net._cached_op.last_executor._plan
        ops = [s.op_name for s in plan.forward_steps + plan.backward_steps]
        return [p.data().asnumpy() for p in net.collect_params().values()], ops

    on, ops_on = train(True)
    off, ops_off = train(False)
    assert "_backward_embedding_bag_sum" in ops_on and "Embedding" in ops_off
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)
