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


def _run_lm(model, x):
    """Initialize a language model, fill its parameters, run it on ``x`` from zero state."""
    model.initialize()
    hidden = model.begin_state(batch_size=x.shape[1], func=mx.nd.zeros)
    model(x, hidden)
    fill(model.collect_params())
    return model(x, hidden)


@case("gluonnlp")
def language_model():
    import gluonnlp as nlp
    vocab = _vocab()
    model = nlp.model.StandardRNN("lstm", len(vocab), 8, 8, 2, 0.0, False)
    x = mx.nd.array(np.random.RandomState(4).randint(0, len(vocab), (5, 2)))
    out, hidden = _run_lm(model, x)
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


# ------------------------------------------------------------------ more everyday uses
@case("gluoncv")
def ssd_train_step():
    from gluoncv import model_zoo
    from gluoncv.loss import SSDMultiBoxLoss
    from gluoncv.model_zoo.ssd.target import SSDTargetGenerator
    # batch 2: with one image BatchNorm's variance over the 1x1 maps is 0 (nan gradients)
    x = _image((2, 3, 128, 128))
    net = _ready(model_zoo.get_model("ssd_512_mobilenet1.0_voc", pretrained=False,
                                     pretrained_base=False), x)
    gt_boxes = mx.nd.array([[[10, 20, 60, 90], [70, 30, 120, 100]]] * 2)
    gt_ids = mx.nd.array([[[3], [7]]] * 2)
    target = SSDTargetGenerator(iou_thresh=0.5, stds=(0.1, 0.1, 0.2, 0.2))
    loss_fn = SSDMultiBoxLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.001})
    with mx.autograd.train_mode():
        cls_preds, box_preds, anchors = net(x)
    cls_t, box_t, _ = target(anchors, cls_preds, gt_boxes, gt_ids)
    with mx.autograd.record():
        cls_preds, box_preds, _ = net(x)
        total, cls_loss, box_loss = loss_fn(cls_preds, box_preds, cls_t, box_t)
    mx.autograd.backward(total)
    trainer.step(2)
    # (random weights give nan gradients in both engines here, so the step is not compared)
    return {"cls_t": cls_t.asnumpy(), "box_t": box_t.asnumpy(),
            "cls_loss": cls_loss[0].asnumpy(), "box_loss": box_loss[0].asnumpy()}


@case("gluoncv")
def fcn_train_step_and_segmentation_metric():
    from gluoncv import model_zoo
    from gluoncv.loss import MixSoftmaxCrossEntropyLoss
    from gluoncv.utils.metrics import SegmentationMetric
    x = _image((1, 3, 48, 48))
    net = _ready(model_zoo.get_model("fcn_resnet50_voc", pretrained=False, pretrained_base=False,
                                     base_size=48, crop_size=48), x)
    label = mx.nd.array(np.random.RandomState(14).randint(-1, 21, (1, 48, 48)))
    loss_fn = MixSoftmaxCrossEntropyLoss(aux=True)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.001})
    with mx.autograd.record():
        outs = net(x)
        loss = loss_fn(*outs, label)
    mx.autograd.backward(loss)
    trainer.step(1)
    # the prediction in training mode (batch statistics): an inference-mode one reads the
    # moving statistics, which a training-mode forward moves here and not in MXNet (see
    # docs/migrating_from_mxnet.md, BatchNorm)
    metric = SegmentationMetric(21)
    with mx.autograd.train_mode():
        train_pred = net(x)[0]
    metric.update(label, train_pred)
    pix_acc, miou = metric.get()
    return {"loss": loss.asnumpy(), "train_pred": train_pred.asnumpy()[:, :, ::8, ::8],
            "metric": np.array([pix_acc, miou])}


@case("gluoncv")
def box_coders_and_nms():
    from gluoncv.nn.bbox import BBoxCenterToCorner, BBoxCornerToCenter
    from gluoncv.nn.coder import NormalizedBoxCenterDecoder, NormalizedBoxCenterEncoder
    rng = np.random.RandomState(15)
    corners = np.sort(rng.uniform(0, 50, (1, 6, 4)).astype(np.float32).reshape(1, 6, 2, 2),
                      axis=2).transpose(0, 1, 3, 2).reshape(1, 6, 4)
    corners = mx.nd.array(corners[..., [0, 2, 1, 3]])
    center = BBoxCornerToCenter(split=False)(corners)
    back = BBoxCenterToCorner(split=False)(center)
    anchors = center.copy()
    enc = NormalizedBoxCenterEncoder(stds=(0.1, 0.1, 0.2, 0.2))
    samples = mx.nd.array([[1, 1, 0, -1, 1, 0]])
    matches = mx.nd.array([[0, 1, 2, 3, 4, 5]])
    targets, masks = enc(samples, matches, corners[:, ::-1], corners)
    dec = NormalizedBoxCenterDecoder(stds=(0.1, 0.1, 0.2, 0.2))(targets, anchors)
    scores = mx.nd.array(rng.uniform(size=(1, 6, 1)).astype(np.float32))
    dets = mx.nd.concat(mx.nd.zeros((1, 6, 1)), scores, corners, dim=-1)
    nms = mx.nd.contrib.box_nms(dets, overlap_thresh=0.3, valid_thresh=0.01, topk=5,
                                coord_start=2, score_index=1, id_index=0)
    return {"center": center.asnumpy(), "back": back.asnumpy(), "targets": targets.asnumpy(),
            "masks": masks.asnumpy(), "decoded": dec.asnumpy(), "nms": nms.asnumpy()}


@case("gluonnlp")
def masked_loss_and_clipping():
    import gluonnlp as nlp
    rng = np.random.RandomState(16)
    pred = mx.nd.array(rng.normal(size=(2, 4, 5)).astype(np.float32))
    label = mx.nd.array(rng.randint(0, 5, (2, 4)))
    valid = mx.nd.array([4, 2])
    loss = nlp.loss.MaskedSoftmaxCELoss()(pred, label, valid)
    acc = nlp.metric.MaskedAccuracy()
    acc.update([label], [pred.argmax(axis=-1)], [mx.nd.array([[1, 1, 1, 1], [1, 1, 0, 0]])])
    a = mx.nd.array(rng.normal(size=(3, 3)).astype(np.float32))
    b = mx.nd.array(rng.normal(size=(4,)).astype(np.float32))
    p1, p2 = mx.gluon.Parameter("p1", shape=(3, 3)), mx.gluon.Parameter("p2", shape=(4,))
    for p, v in ((p1, a), (p2, b)):
        p.initialize()
        p.set_data(v)
        p.grad()[:] = v * 10
    norm = nlp.utils.clip_grad_global_norm([p1, p2], 1.0)
    norm = norm.asscalar() if hasattr(norm, "asscalar") else norm
    return {"loss": loss.asnumpy(), "acc": np.array([acc.get()[1]]), "norm": np.array([norm]),
            "g1": p1.grad().asnumpy(), "g2": p2.grad().asnumpy()}


@case("gluonnlp")
def tsv_dataset_and_transforms():
    import gluonnlp as nlp
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "data.tsv")
        with open(path, "w") as f:
            f.write("text\tlabel\nthe quick fox\t1\na lazy dog sleeps here\t0\n")
        ds = nlp.data.TSVDataset(path, num_discard_samples=1,
                                 field_separator=nlp.data.Splitter("\t"))
        rows = [list(r) for r in ds]
    vocab = _vocab()
    clip = nlp.data.ClipSequence(3)
    pad = nlp.data.PadSequence(5, pad_val=0)
    ids = [pad(clip(vocab[r[0].split()])) for r in rows]
    return {"rows": np.array(rows), "ids": np.array(ids)}


@case("gluonnlp")
def awd_lstm_and_attention():
    import gluonnlp as nlp
    vocab = _vocab()
    model = nlp.model.AWDRNN("lstm", len(vocab), embed_size=8, hidden_size=8, num_layers=2,
                             tie_weights=True, dropout=0, weight_drop=0, drop_h=0, drop_i=0,
                             drop_e=0)
    x = mx.nd.array(np.random.RandomState(17).randint(0, len(vocab), (4, 2)))
    out, _ = _run_lm(model, x)
    cell = nlp.model.attention_cell.MultiHeadAttentionCell(
        nlp.model.attention_cell.DotProductAttentionCell(scaled=True), query_units=8,
        key_units=8, value_units=8, num_heads=2, use_bias=True)
    q = mx.nd.array(np.random.RandomState(18).normal(size=(2, 3, 8)).astype(np.float32))
    k = mx.nd.array(np.random.RandomState(19).normal(size=(2, 5, 8)).astype(np.float32))
    cell.initialize()
    cell(q, k)
    fill(cell.collect_params())
    mask = mx.nd.array(np.tril(np.ones((3, 5)))[None].repeat(2, axis=0))
    att, weights = cell(q, k, None, mask)
    return {"lm": out.asnumpy(), "att": att.asnumpy(), "weights": weights.asnumpy()}


@case("keras")
def evaluate_and_rebuild():
    from keras.layers import Dense
    from keras.models import Sequential
    rng = np.random.RandomState(20)
    x = rng.uniform(-1, 1, (16, 5)).astype(np.float32)
    y = (rng.uniform(size=(16, 1)) > 0.5).astype(np.float32)
    model = Sequential([Dense(6, activation="relu", input_shape=(5,)),
                        Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", optimizer="rmsprop", metrics=["accuracy"])
    _keras_fill(model)
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    ev = model.evaluate(x, y, batch_size=8, verbose=0)
    # Keras 2.2.4's HDF5 save/load needs h5py < 3 (no wheels for Python >= 3.10): the
    # architecture goes through JSON and the weights through get/set_weights
    from keras.models import model_from_json
    back = model_from_json(model.to_json())
    back.set_weights(model.get_weights())
    pred = back.predict(x[:4])
    return {"eval": np.array(ev), "pred": pred}


@case("keras")
def embedding_gru():
    from keras.layers import GRU, Dense, Embedding
    from keras.models import Sequential
    rng = np.random.RandomState(21)
    x = rng.randint(0, 20, (8, 6))
    y = rng.uniform(-1, 1, (8, 1)).astype(np.float32)
    model = Sequential([Embedding(20, 4, input_length=6), GRU(5, unroll=True), Dense(1)])
    return _keras_fit(model, x, y)
