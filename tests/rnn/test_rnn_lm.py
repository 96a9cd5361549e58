"""End to end: the seed benchmark's sym_gen trains one step; a 2-layer LSTM language model
on a toy corpus trains with Module / BucketingModule and its perplexity falls."""
import math

import numpy as np

import sparsym as mx

VOCAB = 12


def seed_sym_gen(seq_len, num_layers=3, num_hidden=8, num_embed=8, len_vocab=50):
    """The seed benchmark's sym_gen (shared/seeds/seed_bind_bench.py) with small sizes."""
    stack = mx.rnn.SequentialRNNCell()
    for i in range(num_layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=num_hidden, prefix="lstm_l%d_" % i))
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("softmax_label")
    embed = mx.sym.Embedding(data=data, input_dim=len_vocab, output_dim=num_embed, name="embed")
    stack.reset()
    outputs, states = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
    pred = mx.sym.FullyConnected(data=pred, num_hidden=len_vocab, name="pred")
    label = mx.sym.Reshape(label, shape=(-1,))
    return mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax")


def test_seed_sym_gen_binds_and_trains_one_step():
    sym = seed_sym_gen(3)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4, 3))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    rng = np.random.RandomState(0)
    batch = mx.io.DataBatch([mx.nd.array(rng.randint(0, 50, (4, 3)))],
                            [mx.nd.array(rng.randint(0, 50, (4, 3)))])
    before = {k: v.asnumpy().copy() for k, v in mod.get_params()[0].items()}
    mod.forward(batch, is_train=True)
    assert mod.get_outputs()[0].shape == (12, 50)
    mod.backward()
    mod.update()
    after = mod.get_params()[0]
    for name in ("lstm_l0_i2h_weight", "lstm_l2_h2h_bias", "pred_weight", "embed_weight"):
        assert not np.allclose(after[name].asnumpy(), before[name]), name


def test_seed_shared_executor_groups_across_buckets():
    from sparsym.module.executor_group import DataParallelExecutorGroup
    sym = seed_sym_gen(5)
    params = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    ctxs = [mx.cpu(0), mx.cpu(1)]
    shared = DataParallelExecutorGroup(
        symbol=sym, contexts=ctxs, workload=[1, 1], data_shapes=[("data", (4, 5))],
        label_shapes=[("softmax_label", (4, 5))], param_names=params, for_training=True,
        inputs_need_grad=False)
    for length in (1, 3):
        g = DataParallelExecutorGroup(
            symbol=seed_sym_gen(length), contexts=ctxs, workload=[1, 1],
            data_shapes=[("data", (4, length))], label_shapes=[("softmax_label", (4, length))],
            param_names=params, for_training=True, inputs_need_grad=False, shared_group=shared)
        assert g.execs[0].arg_dict["lstm_l0_i2h_weight"] is \
            shared.execs[0].arg_dict["lstm_l0_i2h_weight"]


def _corpus(n, rng):
    """Sentences following a deterministic successor rule with a little noise."""
    sents = []
    for _ in range(n):
        length = rng.choice([4, 6])
        s = [int(rng.randint(1, VOCAB))]
        for _ in range(length - 1):
            s.append(s[-1] % (VOCAB - 1) + 1 if rng.rand() > 0.1 else int(rng.randint(1, VOCAB)))
        sents.append(s)
    return sents


def lm_sym_gen(seq_len, num_hidden=24):
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("softmax_label")
    embed = mx.sym.Embedding(data=data, input_dim=VOCAB, output_dim=16, name="embed")
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=num_hidden, prefix="lstm_l%d_" % i))
    stack.reset()
    outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
    pred = mx.sym.FullyConnected(data=pred, num_hidden=VOCAB, name="pred")
    label = mx.sym.Reshape(label, shape=(-1,))
    return mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax", use_ignore=True,
                                ignore_label=0)


def _perplexity(mod, it):
    metric = mx.metric.Perplexity(ignore_label=0)
    it.reset()
    for batch in it:
        mod.forward(batch, is_train=False)
        mod.update_metric(metric, batch.label)
    return metric.get()[1]


def test_lstm_language_model_perplexity_falls_with_module():
    rng = np.random.RandomState(0)
    it = mx.rnn.BucketSentenceIter(_corpus(160, rng), batch_size=16, buckets=[6],
                                   invalid_label=0)
    mod = mx.mod.Module(lm_sym_gen(6), data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Xavier(factor_type="in", magnitude=2.34))
    mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": 0.02})
    start = _perplexity(mod, it)
    assert start > VOCAB / 2                      # close to uniform before training
    for _ in range(6):
        it.reset()
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
    end = _perplexity(mod, it)
    assert math.isfinite(end) and end < start / 3, (start, end)


def test_lstm_language_model_with_bucketing_module():
    rng = np.random.RandomState(1)
    it = mx.rnn.BucketSentenceIter(_corpus(96, rng), batch_size=16, buckets=[4, 6],
                                   invalid_label=0)

    def sym_gen(key):
        return lm_sym_gen(key), ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": 0.02})
    start = _perplexity(mod, it)
    for _ in range(4):
        it.reset()
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
    assert _perplexity(mod, it) < start / 2
