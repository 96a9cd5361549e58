"""mx.metric: values recorded from MXNet 1.9.1 on the same inputs; auc, log_loss; create."""
from __future__ import annotations

import math

import numpy as np
import pytest

import sparsym as mx


def _inputs():
    """The inputs the MXNet values were recorded on (RandomState(0), drawn in this order)."""
    rng = np.random.RandomState(0)
    pred = rng.rand(6, 3).astype("float32")
    pred /= pred.sum(1, keepdims=True)
    label = np.array([0, 2, 1, 1, 0, 2], dtype="float32")
    pred2 = rng.rand(6, 3).astype("float32")
    pred2 /= pred2.sum(1, keepdims=True)
    label2 = np.array([1, 1, 0, 2, 2, 0], dtype="float32")
    bp = rng.rand(6, 2).astype("float32")
    bp /= bp.sum(1, keepdims=True)
    bl = np.array([0, 1, 1, 0, 1, 1], dtype="float32")
    bp2 = rng.rand(6, 2).astype("float32")
    bp2 /= bp2.sum(1, keepdims=True)
    bl2 = np.array([1, 1, 0, 0, 0, 1], dtype="float32")
    reg_p = rng.rand(6, 1).astype("float32")
    reg_l = rng.rand(6).astype("float32")
    return dict(cls=[(label, pred), (label2, pred2)], bin=[(bl, bp), (bl2, bp2)],
                reg=[(reg_l, reg_p), (reg_l * 2, reg_p)],
                pear=[(reg_l, reg_p[:, 0]), (reg_l ** 2, reg_p[:, 0])],
                loss=[(None, reg_p), (None, reg_p * 3)])


# (factory, input set, name, MXNet 1.9.1 value)
MXNET = [
    (lambda: mx.metric.create("acc"), "cls", "accuracy", 0.25),
    (lambda: mx.metric.create("top_k_accuracy", top_k=2), "cls", "top_k_accuracy_2", 2 / 3),
    (lambda: mx.metric.create("f1"), "bin", "f1", 0.5357142857142858),
    (lambda: mx.metric.F1(average="micro"), "bin", "f1", 0.5454545454545454),
    (lambda: mx.metric.create("mcc"), "bin", "mcc", 0.22360679774997896),
    (lambda: mx.metric.MCC(average="micro"), "bin", "mcc", 0.23904572186687875),
    (lambda: mx.metric.Perplexity(ignore_label=None), "cls", "perplexity", 2.969117773405604),
    (lambda: mx.metric.Perplexity(ignore_label=1), "cls", "perplexity", 2.987822400552765),
    (lambda: mx.metric.create("mae"), "reg", "mae", 0.5620110780000687),
    (lambda: mx.metric.create("mse"), "reg", "mse", 0.6456821635365486),
    (lambda: mx.metric.create("rmse"), "reg", "rmse", 0.7399042546749115),
    (lambda: mx.metric.create("ce"), "cls", "cross-entropy", 1.0882649024327595),
    (lambda: mx.metric.create("nll_loss"), "cls", "nll-loss", 1.0882649024327595),
    (lambda: mx.metric.create("pearsonr"), "pear", "pearsonr", 0.3816345383092269),
    (lambda: mx.metric.create("pcc"), "cls", "pcc", -0.12909944487358058),
    (lambda: mx.metric.create("loss"), "loss", "loss", 0.5430548985799154),
]


@pytest.mark.parametrize("factory,kind,name,value", MXNET, ids=[m[2] + str(i) for i, m in
                                                                 enumerate(MXNET)])
def test_matches_mxnet(factory, kind, name, value):
    m = factory()
    for lab, pred in _inputs()[kind]:
        m.update([mx.nd.array(lab)] if lab is not None else [], [mx.nd.array(pred)])
    got_name, got = m.get()
    assert got_name == name
    assert got == pytest.approx(value, rel=1e-5)
    assert m.get_global()[1] == pytest.approx(value, rel=1e-5)
    m.reset()
    assert math.isnan(m.get()[1])


def test_custom_and_np_metrics():
    def fe(label, pred):
        return float(np.abs(label - pred.argmax(1)).sum())

    for m in (mx.metric.create(fe), mx.metric.np(fe)):
        for lab, pred in _inputs()["cls"]:
            m.update([mx.nd.array(lab)], [mx.nd.array(pred)])
        assert m.get() == ("fe", 5.5)  # MXNet 1.9.1
    m = mx.metric.CustomMetric(lambda lab, p: (3.0, 2))
    m.update([mx.nd.zeros(2)], [mx.nd.zeros(2)])
    assert m.get()[0].startswith("custom(") and m.get()[1] == 1.5


def test_pearson_micro_is_the_pooled_correlation():
    sets = _inputs()["pear"]
    m = mx.metric.PearsonCorrelation(average="micro")
    for lab, pred in sets:
        m.update([mx.nd.array(lab)], [mx.nd.array(pred)])
    a = np.concatenate([s[0] for s in sets])
    b = np.concatenate([s[1] for s in sets])
    assert m.get()[1] == pytest.approx(np.corrcoef(a, b)[0, 1], rel=1e-6)


def test_auc_and_log_loss_against_sklearn():
    from sklearn.metrics import log_loss, roc_auc_score
    rng = np.random.RandomState(4)
    ys, ps = [], []
    auc, ll = mx.metric.create("auc"), mx.metric.create("log_loss")
    for _ in range(3):
        y = rng.randint(0, 2, 50).astype(np.float32)
        p = np.clip(rng.rand(50) * 0.6 + y * 0.3, 0.01, 0.99).astype(np.float32)
        p[:5] = p[5]  # ties
        ys.append(y)
        ps.append(p)
        auc.update([mx.nd.array(y)], [mx.nd.array(p)])
        ll.update([mx.nd.array(y)], [mx.nd.array(np.stack([1 - p, p], 1))])  # two columns
    y, p = np.concatenate(ys), np.concatenate(ps)
    assert auc.get()[1] == pytest.approx(roc_auc_score(y, p), rel=1e-9)
    assert ll.get()[1] == pytest.approx(log_loss(y, p), rel=1e-5)
    auc.reset()
    assert math.isnan(auc.get()[1])


def test_create_forms_and_composite():
    comp = mx.metric.create(["acc", mx.metric.MSE(), lambda lab, p: 0.0])
    assert isinstance(comp, mx.metric.CompositeEvalMetric)
    lab, pred = _inputs()["cls"][0]
    comp.update([mx.nd.array(lab)], [mx.nd.array(pred)])
    names, values = comp.get()
    assert names[:2] == ["accuracy", "mse"] and len(values) == 3
    cfg = mx.metric.create(["acc", "mse"]).get_config()
    assert [c["metric"] for c in cfg["metrics"]] == ["Accuracy", "MSE"]
    with pytest.raises(NotImplementedError):  # as in MXNet: a custom metric has no config
        comp.get_config()
    acc = mx.metric.Accuracy()
    assert mx.metric.create(acc) is acc
    assert mx.metric.create("top_k_acc", top_k=3).top_k == 3
    for m in ("torch", "caffe"):
        assert mx.metric.create(m).name == m
    with pytest.raises(ValueError, match="is not registered. Please register with metric.register"):
        mx.metric.create("nope")
    with pytest.raises(TypeError):
        mx.metric.create(3)


def test_update_dict_and_label_shape_check():
    m = mx.metric.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict({"lab": mx.nd.array([1, 0]), "x": mx.nd.array([0, 0])},
                  {"out": mx.nd.array([[0, 1], [0, 1]]), "y": mx.nd.zeros((2, 2))})
    assert m.get()[1] == 0.5
    with pytest.raises(ValueError, match="does not match shape of predictions"):
        mx.metric.Accuracy().update([mx.nd.array([1])], [])


def test_mxnet_texts_and_composite_index():
    comp = mx.metric.create(["acc", "f1"])
    assert type(comp.get_metric(1)).__name__ == "F1"
    with pytest.raises(ValueError, match="Metric index 5 is out of range 0 and 2"):
        comp.get_metric(5)
    with pytest.raises(ValueError, match="_BinaryClassificationMetrics currently only supports"):
        mx.metric.F1().update([mx.nd.array([0, 1, 2])], [mx.nd.array(np.eye(3))])
    mcc = mx.metric.MCC()
    mcc.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    assert mcc.get() == ("mcc", 1.0) and mcc.num_inst == 1.0


def test_mse_in_batch_dtype_and_custom_metric_python_numbers():
    m = mx.metric.MSE()
    m.update([mx.nd.array([1, 2, 3])], [mx.nd.array([1.5, 2, 2])])
    # float32 batches: MXNet's figure is the float32 mean
    assert m.get()[1] == float(np.float32(1.25) / np.float32(3))
    cm = mx.metric.CustomMetric(lambda lab, p: np.abs(lab - p.argmax(axis=1)).sum(), name="c")
    cm.update([mx.nd.array([0, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.]])])
    value = cm.get()[1]
    assert type(value) is float and value == 1.0


def test_create_from_config_dict_and_json():
    """MXNet's registry creates a metric again from get_config() (a dict, or its JSON)."""
    import json
    for m in (mx.metric.create("acc", axis=0), mx.metric.create("perplexity", -1),
              mx.metric.create("nll_loss"), mx.metric.F1(average="micro"),
              mx.metric.create(["acc", "f1"])):
        cfg = m.get_config()
        for src in (cfg, json.dumps(cfg)):
            m2 = mx.metric.create(src)
            assert type(m2) is type(m) and m2.get_config() == cfg
    m = mx.metric.create('["top_k_accuracy", {"top_k": 3}]')
    assert m.top_k == 3 and m.name == "top_k_accuracy_3"
    with pytest.raises(ValueError):
        mx.metric.create({"axis": 0})
