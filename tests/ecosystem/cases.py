"""Everyday uses of GluonCV 0.10.5.post0, GluonNLP 0.10.0 and Keras-MXNet 2.2.4.3, written
against ``import mxnet`` so the same code runs on MXNet 1.9.1 (to record its outputs) and
on sparsym (through the alias).

Each case returns a dict of NumPy arrays. Parameters come from :func:`fill` (a fixed
NumPy stream in registration order), so both engines run the same weights without
storing them; ``record_mxnet.py`` writes MXNet's outputs into ``fixtures/``.
"""
import collections
import collections.abc
import os
import tempfile

import numpy as np

# Keras-MXNet 2.2.4.3 imports collections.Iterable, which Python 3.10 removed
if not hasattr(collections, "Iterable"):
    collections.Iterable = collections.abc.Iterable
os.environ.setdefault("KERAS_BACKEND", "mxnet")

import mxnet as mx  # noqa: E402

CASES = {}


def case(lib):
    """Register a case under ``<lib>.<function name>``."""
    def deco(f):
        CASES[f"{lib}.{f.__name__}"] = f
        return f
    return deco


def fill(params):
    """Give every parameter (in registration order) values from one seeded stream:
    weights ~ N(0, 1/fan_in), gammas and variances near 1, biases and means near 0."""
    rng = np.random.RandomState(0)
    for name, p in params.items():
        shape = p.shape
        if name.endswith(("gamma", "running_var", "moving_var")):
            v = rng.uniform(0.8, 1.2, shape)
        elif name.endswith(("beta", "bias", "running_mean", "moving_mean")):
            v = rng.uniform(-0.1, 0.1, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            v = rng.normal(0, 1.0 / np.sqrt(max(fan_in, 1)), shape)
        p.set_data(mx.nd.array(v.astype(np.float32), dtype=p.dtype))


def _image(shape, seed=1):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32))


def _ready(net, x):
    """Initialize ``net``, infer its shapes on ``x`` and fill its parameters."""
    net.initialize()
    net(x)
    fill(net.collect_params())
    return net


# ------------------------------------------------------------------ GluonCV classification
def _classify(name, shape, **kwargs):
    from gluoncv import model_zoo
    x = _image(shape)
    net = _ready(model_zoo.get_model(name, pretrained=False, **kwargs), x)
    out = {"forward": net(x).asnumpy()}
    # one SGD step on a cross-entropy loss
    label = mx.nd.array(np.arange(shape[0]) % 10)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    # Dropout off: the two engines draw different masks (and MXNet's CPU max-pooling
    # gradient is wrong outside training mode, so the step runs in training mode)
    net.apply(lambda b: setattr(b, "_rate", 0.0) if isinstance(b, mx.gluon.nn.Dropout) else None)
    with mx.autograd.record():
        loss = loss_fn(net(x), label)
    loss.backward()
    trainer.step(shape[0])
    out["loss"] = loss.asnumpy()
    out["after_step"] = net(x).asnumpy()
    # hybridize, export, import as a SymbolBlock
    net.hybridize()
    net(x)
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "model")
        net.export(prefix, epoch=0)
        back = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                            prefix + "-0000.params")
        out["imported"] = back(x).asnumpy()
    return out


_CLASSIFIERS = {"cifar_resnet20_v1": (2, 3, 32, 32), "resnet18_v1b": (2, 3, 64, 64),
                "mobilenetv3_small": (2, 3, 64, 64), "squeezenet1.1": (1, 3, 224, 224),
                "densenet121": (1, 3, 224, 224)}   # the last two pool to a fixed size
for _name, _shape in _CLASSIFIERS.items():
    CASES["gluoncv." + _name.replace(".", "_")] = (
        lambda name=_name, shape=_shape: _classify(name, shape))


# ------------------------------------------------------------------ GluonCV detection etc.
def _detect(name, shape, **kwargs):
    from gluoncv import model_zoo
    x = _image(shape)
    net = _ready(model_zoo.get_model(name, pretrained=False, pretrained_base=False, **kwargs), x)
    outs = net(x)
    return {f"out{i}": o.asnumpy() for i, o in enumerate(outs)}


@case("gluoncv")
def ssd_512_mobilenet1_0_voc():
    return _detect("ssd_512_mobilenet1.0_voc", (1, 3, 128, 128))


@case("gluoncv")
def yolo3_mobilenet0_25_voc():
    return _detect("yolo3_mobilenet0.25_voc", (1, 3, 128, 128))


@case("gluoncv")
def center_net_resnet18_v1b_voc():
    return _detect("center_net_resnet18_v1b_voc", (1, 3, 128, 128))


@case("gluoncv")
def fcn_resnet50_voc():
    from gluoncv import model_zoo
    x = _image((1, 3, 64, 64))
    net = _ready(model_zoo.get_model("fcn_resnet50_voc", pretrained=False,
                                     pretrained_base=False, base_size=64, crop_size=64), x)
    return {"out": net(x)[0].asnumpy()}


@case("gluoncv")
def transforms_presets():
    from gluoncv.data.transforms import image as timage
    from gluoncv.data.transforms import presets
    rng = np.random.RandomState(2)
    img = mx.nd.array(rng.randint(0, 255, (48, 64, 3)), dtype="uint8")
    x, orig = presets.ssd.transform_test(img, short=32)
    y, _ = presets.yolo.transform_test(img, short=32)
    z = timage.resize_short_within(img, 32, max_size=40)
    c = timage.resize_contain(img, (40, 40))[0]
    return {"ssd": x.asnumpy(), "orig": orig, "yolo": y.asnumpy(), "short": z.asnumpy(),
            "crop": c.asnumpy()}


@case("gluoncv")
def bbox_utils():
    from gluoncv.data.transforms import bbox as tbbox
    from gluoncv.utils import bbox as ubbox
    a = np.array([[0, 0, 10, 10], [5, 5, 15, 15]], dtype=np.float32)
    b = np.array([[0, 0, 10, 10], [20, 20, 30, 30], [2, 2, 8, 12]], dtype=np.float32)
    return {"iou": ubbox.bbox_iou(a, b),
            "resize": tbbox.resize(a.copy(), (20, 20), (40, 30)),
            "flip": tbbox.flip(a.copy(), (20, 20), flip_x=True),
            "crop": tbbox.crop(b.copy(), (1, 1, 12, 12))}


@case("gluoncv")
def voc_metric():
    from gluoncv.utils.metrics.accuracy import Accuracy
    from gluoncv.utils.metrics.voc_detection import VOC07MApMetric
    m = VOC07MApMetric(iou_thresh=0.5, class_names=["a", "b"])
    pred_b = mx.nd.array([[[0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 5, 5]]])
    pred_l = mx.nd.array([[[0], [1], [1]]])
    pred_s = mx.nd.array([[[0.9], [0.8], [0.3]]])
    gt_b = mx.nd.array([[[0, 0, 10, 10], [21, 21, 30, 30]]])
    gt_l = mx.nd.array([[[0], [1]]])
    m.update(pred_b, pred_l, pred_s, gt_b, gt_l)
    names, values = m.get()
    acc = Accuracy()
    acc.update(mx.nd.array([0, 1, 1]), mx.nd.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]]))
    return {"map": np.array(values, dtype=np.float64), "acc": np.array([acc.get()[1]])}


@case("gluoncv")
def dataloader_batchify():
    from gluoncv.data.batchify import Pad, Stack, Tuple
    rng = np.random.RandomState(3)
    data = [(rng.uniform(size=(3, 8, 8)).astype(np.float32),
             rng.uniform(size=(k + 1, 5)).astype(np.float32)) for k in range(5)]
    ds = mx.gluon.data.SimpleDataset(data)
    loader = mx.gluon.data.DataLoader(ds, batch_size=2, shuffle=False,
                                      batchify_fn=Tuple(Stack(), Pad(pad_val=-1)))
    out = {}
    for i, (x, y) in enumerate(loader):
        out[f"x{i}"], out[f"y{i}"] = x.asnumpy(), y.asnumpy()
    return out


# ------------------------------------------------------------------ GluonNLP
def _vocab():
    import gluonnlp as nlp
    text = "the quick brown fox jumps over the lazy dog the end".split()
    return nlp.Vocab(nlp.data.count_tokens(text))


@case("gluonnlp")
def vocab_and_embedding():
    import gluonnlp as nlp
    vocab = _vocab()
    emb = nlp.embedding.TokenEmbedding(
        unknown_token="<unk>", idx_to_token=["<unk>", "the", "fox"],
        idx_to_vec=mx.nd.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]]))
    emb["fox"] = mx.nd.array([5.0, 6.0])
    vocab.set_embedding(emb)
    return {"ids": np.array(vocab[["the", "fox", "cat"]]),
            "tokens": np.array(vocab.to_tokens([4, 5])),
            "emb": vocab.embedding[["the", "fox", "cat"]].asnumpy(), "len": np.array(len(vocab))}


@case("gluonnlp")
def tokenizers():
    import gluonnlp as nlp
    basic = nlp.data.BERTBasicTokenizer(lower=True)
    vocab = nlp.vocab.BERTVocab(nlp.data.count_tokens(
        "hello world un ##aff ##able ##ly running".split()))
    tok = nlp.data.BERTTokenizer(vocab, lower=True)
    text = "Hello, World! Unaffable running."
    ws = nlp.data.SpaceSplitter() if hasattr(nlp.data, "SpaceSplitter") else None
    out = {"basic": np.array(basic(text)), "wordpiece": np.array(tok("hello unaffable running"))}
    if ws is not None:
        out["split"] = np.array(ws("a b  c"))
    trans = nlp.data.BERTSentenceTransform(tok, max_seq_length=8, pair=False)
    ids, length, segs = trans(("hello running",))
    out.update(ids=np.array(ids), length=np.array(length), segs=np.array(segs))
    return out


@case("gluonnlp")
def batchify():
    import gluonnlp as nlp
    fn = nlp.data.batchify.Tuple(nlp.data.batchify.Pad(axis=0, pad_val=0, ret_length=True),
                                 nlp.data.batchify.Stack())
    (x, lens), y = fn([([1, 2, 3], 0), ([4], 1), ([5, 6], 2)])
    lists = nlp.data.batchify.List()([[1], [2, 3]])
    return {"x": x.asnumpy(), "lens": lens.asnumpy(), "y": y.asnumpy(),
            "list": np.array([len(v) for v in lists])}


@case("gluonnlp")
def samplers():
    import gluonnlp as nlp
    lengths = [5, 3, 9, 12, 2, 7, 8, 4, 11, 6]
    s = nlp.data.FixedBucketSampler(lengths, batch_size=3, num_buckets=3, shuffle=False)
    sorted_s = nlp.data.SortedBucketSampler(lengths, batch_size=4, shuffle=False)
    first = [list(b) for b in s]
    srt = [list(b) for b in sorted_s]
    return {"fixed": np.array(sum(first, [])), "fixed_n": np.array([len(b) for b in first]),
            "sorted": np.array(sum(srt, []))}


@case("gluonnlp")
def language_model():
    import gluonnlp as nlp
    vocab = _vocab()
    model = nlp.model.StandardRNN("lstm", len(vocab), 8, 8, 2, 0.0, False)
    x = mx.nd.array(np.random.RandomState(4).randint(0, len(vocab), (5, 2)))
    model.initialize()
    hidden = model.begin_state(batch_size=2, func=mx.nd.zeros)
    model(x, hidden)
    fill(model.collect_params())
    out, hidden = model(x, hidden)
    # a training step with truncated BPTT as the GluonNLP language-model scripts do
    trainer = mx.gluon.Trainer(model.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    hidden = model.begin_state(batch_size=2, func=mx.nd.zeros)
    with mx.autograd.record():
        o, _ = model(x, hidden)
        loss = loss_fn(o.reshape((-3, -1)), x.reshape((-1,))).mean()
    loss.backward()
    trainer.step(1)
    o2, _ = model(x, model.begin_state(batch_size=2, func=mx.nd.zeros))
    return {"out": out.asnumpy(), "loss": loss.asnumpy(), "after": o2.asnumpy()}


@case("gluonnlp")
def bert_encoder():
    import gluonnlp as nlp
    encoder = nlp.model.BERTEncoder(num_layers=2, units=16, hidden_size=32, max_length=16,
                                    num_heads=2, dropout=0.0, output_attention=False)
    model = nlp.model.BERTModel(encoder, vocab_size=30, token_type_vocab_size=2, units=16,
                                embed_size=16, word_embed=None, use_pooler=True,
                                use_decoder=True, use_classifier=True)
    rng = np.random.RandomState(5)
    tokens = mx.nd.array(rng.randint(0, 30, (2, 7)))
    segs = mx.nd.array(rng.randint(0, 2, (2, 7)))
    valid = mx.nd.array([7, 4])
    masked = mx.nd.array([[1, 2], [0, 3]])
    model.initialize()
    model(tokens, segs, valid, masked)
    fill(model.collect_params())
    seq, pooled, nsp, mlm = model(tokens, segs, valid, masked)
    return {"seq": seq.asnumpy(), "pooled": pooled.asnumpy(), "nsp": nsp.asnumpy(),
            "mlm": mlm.asnumpy()}


@case("gluonnlp")
def transformer():
    import gluonnlp as nlp
    enc, dec, one_step = nlp.model.transformer.get_transformer_encoder_decoder(
        num_layers=1, units=16, hidden_size=32, num_heads=2, max_src_length=16,
        max_tgt_length=16, dropout=0.0, scaled=True)
    model = nlp.model.translation.NMTModel(
        src_vocab=_vocab(), tgt_vocab=_vocab(), encoder=enc, decoder=dec,
        one_step_ahead_decoder=one_step, embed_size=16, prefix="transformer_")
    rng = np.random.RandomState(6)
    src = mx.nd.array(rng.randint(0, 10, (2, 5)))
    tgt = mx.nd.array(rng.randint(0, 10, (2, 4)))
    sl, tl = mx.nd.array([5, 3]), mx.nd.array([4, 2])
    model.initialize()
    model(src, tgt, sl, tl)
    fill(model.collect_params())
    out, _ = model(src, tgt, sl, tl)
    return {"out": out.asnumpy()}


@case("gluonnlp")
def beam_search():
    import gluonnlp as nlp
    vocab_size = 7
    rng = np.random.RandomState(7)
    table = mx.nd.array(rng.uniform(-1, 1, (vocab_size, vocab_size)).astype(np.float32))

    def decoder(step_input, states):
        logits = mx.nd.take(table, step_input) + states
        return mx.nd.log_softmax(logits), states

    scorer = nlp.model.BeamSearchScorer(alpha=0.0, K=5.0)
    sampler = nlp.model.BeamSearchSampler(beam_size=3, decoder=decoder, eos_id=1,
                                          scorer=scorer, max_length=5)
    states = mx.nd.zeros((2, vocab_size))
    samples, scores, lengths = sampler(mx.nd.array([2, 3]), states)
    return {"samples": samples.asnumpy(), "scores": scores.asnumpy(),
            "lengths": lengths.asnumpy()}


# ------------------------------------------------------------------ Keras-MXNet
def _keras_fill(model):
    rng = np.random.RandomState(8)
    model.set_weights([rng.normal(0, 0.3, w.shape).astype(np.float32)
                       for w in model.get_weights()])


def _keras_fit(model, x, y, loss="mse", optimizer="sgd", epochs=2):
    model.compile(loss=loss, optimizer=optimizer)
    _keras_fill(model)
    hist = model.fit(x, y, batch_size=4, epochs=epochs, shuffle=False, verbose=0)
    return {"loss": np.array(hist.history["loss"]), "pred": model.predict(x[:4])}


@case("keras")
def dense_sequential():
    from keras.layers import Dense
    from keras.models import Sequential
    rng = np.random.RandomState(9)
    x = rng.uniform(-1, 1, (16, 6)).astype(np.float32)
    y = rng.uniform(-1, 1, (16, 2)).astype(np.float32)
    model = Sequential([Dense(8, activation="relu", input_shape=(6,)), Dense(2)])
    return _keras_fit(model, x, y)


@case("keras")
def conv2d_sequential():
    from keras.layers import Conv2D, Dense, Flatten
    from keras.models import Sequential
    rng = np.random.RandomState(10)
    x = rng.uniform(-1, 1, (8, 3, 8, 8)).astype(np.float32)
    y = np.eye(3)[rng.randint(0, 3, 8)].astype(np.float32)
    model = Sequential([Conv2D(4, (3, 3), activation="relu", input_shape=(3, 8, 8),
                               data_format="channels_first"),
                        Flatten(), Dense(3, activation="softmax")])
    return _keras_fit(model, x, y, loss="categorical_crossentropy")


@case("keras")
def lstm_sequential():
    from keras.layers import LSTM, Dense
    from keras.models import Sequential
    rng = np.random.RandomState(11)
    x = rng.uniform(-1, 1, (8, 5, 3)).astype(np.float32)
    y = rng.uniform(-1, 1, (8, 1)).astype(np.float32)
    model = Sequential([LSTM(4, input_shape=(5, 3), unroll=True), Dense(1)])
    return _keras_fit(model, x, y)


@case("keras")
def functional():
    from keras.layers import Dense, Input, concatenate
    from keras.models import Model
    rng = np.random.RandomState(12)
    a = Input(shape=(4,))
    b = Input(shape=(3,))
    h = concatenate([Dense(5, activation="tanh")(a), Dense(5, activation="relu")(b)])
    model = Model([a, b], Dense(1)(h))
    xa = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    xb = rng.uniform(-1, 1, (8, 3)).astype(np.float32)
    y = rng.uniform(-1, 1, (8, 1)).astype(np.float32)
    model.compile(loss="mse", optimizer="adam")
    _keras_fill(model)
    hist = model.fit([xa, xb], y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    return {"loss": np.array(hist.history["loss"]), "pred": model.predict([xa, xb])}


@case("keras")
def sparse_input_dense():
    import scipy.sparse
    from keras.layers import Dense, Input
    from keras.models import Model
    rng = np.random.RandomState(13)
    dense = rng.uniform(0, 1, (8, 10)) * (rng.uniform(size=(8, 10)) < 0.3)
    x = scipy.sparse.csr_matrix(dense.astype(np.float32))
    y = rng.uniform(-1, 1, (8, 1)).astype(np.float32)
    inp = Input(shape=(10,), sparse=True)
    model = Model(inp, Dense(1)(inp))
    return _keras_fit(model, x, y)
