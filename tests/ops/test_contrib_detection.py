"""Contrib detection operators (box_nms, box_iou, bipartite_matching, box_encode/decode,
MultiBoxPrior/Target/Detection) through mx.nd.contrib / mx.sym.contrib; the expected values
were printed by MXNet 1.9.1 on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx

BOXES = np.array([[[0, 0.9, 0.1, 0.1, 0.5, 0.5], [0, 0.8, 0.12, 0.1, 0.5, 0.52],
                   [1, 0.7, 0.1, 0.1, 0.5, 0.5], [0, 0.6, 0.6, 0.6, 0.9, 0.9],
                   [2, 0.05, 0.0, 0.0, 0.2, 0.2]]])
PAD = [-1.0] * 6
ANCHORS = np.array([[[0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 1.0, 1.0], [0.1, 0.1, 0.6, 0.6],
                     [0.4, 0.0, 0.9, 0.4]]])
LABELS = np.array([[[1, 0.05, 0.05, 0.5, 0.55], [0, 0.5, 0.45, 1.0, 0.95], [-1] * 5]])


def test_box_nms_per_class_with_gradient():
    x = mx.nd.array(BOXES)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_nms(x, overlap_thresh=0.5, valid_thresh=0.1, id_index=0)
    y.backward(mx.nd.array(np.arange(30).reshape(1, 5, 6)))
    want = [BOXES[0, 0], BOXES[0, 2], BOXES[0, 3], PAD, PAD]
    np.testing.assert_allclose(y.asnumpy()[0], want, rtol=1e-6)
    g = np.zeros((5, 6))
    g[0], g[2], g[3] = np.arange(6), np.arange(6, 12), np.arange(12, 18)
    np.testing.assert_allclose(x.grad.asnumpy()[0], g)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_box_nms_force_center_output(dtype):
    out = mx.nd.contrib.box_nms(mx.nd.array(BOXES, dtype=dtype), force_suppress=True,
                                id_index=0, out_format="center")
    want = [[0, 0.9, 0.3, 0.3, 0.4, 0.4], [0, 0.6, 0.75, 0.75, 0.3, 0.3],
            [2, 0.05, 0.1, 0.1, 0.2, 0.2], PAD, PAD]
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.asnumpy()[0].astype(np.float64), want, atol=2e-3)


def test_box_nms_symbol_hides_index_output():
    sym = mx.sym.contrib.box_nms(mx.sym.var("data"))
    assert len(sym.list_outputs()) == 1
    _, out_shapes, _ = sym.infer_shape(data=(2, 4, 6))
    assert out_shapes == [(2, 4, 6)]
    with pytest.raises(mx.MXNetError):
        mx.sym.contrib.box_nms(mx.sym.var("data")).infer_shape(data=(2, 4, 3))


def test_box_iou_and_zero_gradient():
    a = mx.nd.array(ANCHORS[0])
    b = mx.nd.array(LABELS[0, :, 1:5])
    a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.box_iou(a, b)
    out.backward()
    want = [[0.743119, 0, 0], [0, 0.818182, 0], [0.61017, 0.030928, 0], [0.089744, 0, 0]]
    np.testing.assert_allclose(out.asnumpy(), want, atol=1e-5)
    assert not a.grad.asnumpy().any()  # MXNet's box_iou has a zero gradient
    assert mx.nd.contrib.box_iou(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((5, 4))).shape == (2, 3, 5)


def test_bipartite_matching():
    s = mx.nd.array([[0.3, 0.9, 0.1], [0.8, 0.2, 0.5], [0.4, 0.6, 0.7], [0.05, 0.1, 0.2]])
    rows, cols = mx.nd.contrib.bipartite_matching(s, threshold=0.15)
    np.testing.assert_array_equal(rows.asnumpy(), [1, 0, 2, -1])
    np.testing.assert_array_equal(cols.asnumpy(), [1, 0, 2])
    rows, _ = mx.nd.contrib.bipartite_matching(s, threshold=0.15, topk=1)
    np.testing.assert_array_equal(rows.asnumpy(), [1, -1, -1, -1])


def test_multibox_prior_clip():
    out = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 3)), sizes=(0.5, 0.25),
                                      ratios=(1, 4), clip=True)
    assert out.shape == (1, 18, 4)
    np.testing.assert_allclose(out.asnumpy()[0, :3], [[0, 0, 1 / 3, 0.5],
                                                      [1 / 12, 0.125, 0.25, 0.375],
                                                      [0, 0.125, 0.5, 0.375]], atol=1e-6)
    np.testing.assert_allclose(out.asnumpy()[0, -1], [0.5, 0.625, 1.0, 0.875], atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"overlap_threshold": 0.3, "negative_mining_ratio": 1,
                                     "minimum_negative_samples": 1}])
def test_multibox_target(kw):
    cls = mx.nd.array([[[0.1, 0.2, 0.9, -0.5], [0.3, 0.1, 0.2, 0.4], [0.0, 0.5, 0.1, 0.2]]])
    loc, mask, target = mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(LABELS),
                                                     cls, **kw)
    np.testing.assert_allclose(loc.asnumpy(), [[0.5, 1, -0.526803, 0, 0, -1, 0, 0, -1.5, -1,
                                                -0.526803, 0, 0, 0, 0, 0]], atol=1e-5)
    np.testing.assert_array_equal(mask.asnumpy(), [[1] * 12 + [0] * 4])
    np.testing.assert_array_equal(target.asnumpy(), [[2, 1, 2, 0]])


def test_multibox_target_checks_label_padding():
    bad = LABELS.copy()
    bad[0, 2, 1:] = 0  # a padding row must be -1 throughout
    with pytest.raises(ValueError, match="padding"):
        mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(bad),
                                     mx.nd.zeros((1, 3, 4)))


def test_multibox_detection():
    prob = mx.nd.array([[[0.1, 0.6, 0.2, 0.3], [0.7, 0.1, 0.5, 0.3], [0.2, 0.3, 0.3, 0.4]]])
    loc = mx.nd.array(np.linspace(-0.5, 0.5, 16).reshape(1, 16))
    out = mx.nd.contrib.MultiBoxDetection(prob, loc, mx.nd.array(ANCHORS), threshold=0.25,
                                          nms_threshold=0.3)
    want = [[0, 0.7, 0, 0, 0.457323, 0.463774], [-1, 0.5, 0.093193, 0.093057, 0.61014, 0.616943],
            [1, 0.4, 0.392367, 0, 0.937633, 0.435701], [1, 0.3, 0.493284, 0.493328, 0.983383,
                                                        0.990006]]
    np.testing.assert_allclose(out.asnumpy()[0], want, atol=1e-5)


def test_box_encode_decode():
    anc = mx.nd.array(ANCHORS)
    refs = mx.nd.array(LABELS[:, :, 1:5])
    tgt, mask = mx.nd.contrib.box_encode(mx.nd.array([[1, 0, 1, 1]]), mx.nd.array([[1, 0, 0, 1]]),
                                         anc, refs, mx.nd.array([0, 0.1, 0, 0.1]),
                                         mx.nd.array([.1, .1, .2, .2]))
    np.testing.assert_allclose(tgt.asnumpy()[0], [[10, 8, 0, -0.5], [0, 0, 0, 0],
                                                  [-1.5, -2, -0.526803, -0.5],
                                                  [2, 11.5, 0, 0.615718]], atol=1e-5)
    np.testing.assert_array_equal(mask.asnumpy()[0, :, 0], [1, 0, 1, 1])
    dec = mx.nd.contrib.box_decode(mx.nd.array(np.linspace(-1, 1, 16).reshape(1, 4, 4)), anc,
                                   std0=0.1, std1=0.1, std2=0.2, std3=0.2, clip=0.1,
                                   format="corner")
    np.testing.assert_allclose(dec.asnumpy()[0], [[-0.015895, -0.015063, 0.415895, 0.428397],
                                                  [0.486469, 0.486645, 0.966864, 0.980022],
                                                  [0.086099, 0.085543, 0.620568, 0.634457],
                                                  [0.403707, 0.008299, 0.956293, 0.450368]],
                               atol=1e-5)
