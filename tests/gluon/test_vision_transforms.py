"""mx.gluon.data.vision.transforms: MXNet 1.9.1's transforms over the image ops."""
from __future__ import annotations

import random

import numpy as np
import pytest

import sparsym as mx
from sparsym.gluon.data.vision import transforms as T


def _img(h=10, w=12, seed=0):
    return mx.nd.array(np.random.RandomState(seed).randint(0, 256, (h, w, 3)), dtype="uint8")


def test_to_tensor_normalize_pipeline():
    x = _img()
    t = T.Compose([T.ToTensor(), T.Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.5))])
    got = t(x).asnumpy()
    want = (x.asnumpy().transpose(2, 0, 1) / 255.0 - np.array([0.5, 0.4, 0.3])[:, None, None]) \
        / np.array([0.2, 0.25, 0.5])[:, None, None]
    assert got.dtype == np.float32 and got.shape == (3, 10, 12)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    batch = mx.nd.stack(x, x)
    assert T.ToTensor()(batch).shape == (2, 3, 10, 12)
    assert T.Normalize(0.5, 0.2)(T.ToTensor()(batch)).shape == (2, 3, 10, 12)


def test_compose_groups_hybrid_runs():
    t = T.Compose([T.Resize(8), T.CenterCrop(6), T.ToTensor(), T.Normalize(0.5, 0.25)])
    kinds = [type(b).__name__ for b in t._children.values()]
    assert kinds == ["Resize", "CenterCrop", "HybridSequential"]
    out = t(_img())
    assert out.shape == (3, 6, 6)
    ref = T.Normalize(0.5, 0.25)(T.ToTensor()(T.CenterCrop(6)(T.Resize(8)(_img()))))
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)


def test_resize_crop_transforms():
    x = _img(9, 13)
    assert T.Resize((7, 5))(x).shape == (5, 7, 3)
    assert T.Resize(5, keep_ratio=True)(x).shape == (5, 7, 3)
    np.testing.assert_array_equal(T.Resize((7, 5), interpolation=0)(x).asnumpy(),
                                  mx.nd.image.resize(x, (7, 5), interp=0).asnumpy())
    assert T.Resize((7, 5))(mx.nd.stack(x, x)).shape == (2, 5, 7, 3)
    np.testing.assert_array_equal(T.CropResize(2, 1, 4, 3)(x).asnumpy(),
                                  x.asnumpy()[1:4, 2:6])
    assert T.CropResize(2, 1, 4, 3, size=(8, 6))(x).shape == (6, 8, 3)
    np.testing.assert_array_equal(T.CenterCrop(5)(x).asnumpy(), x.asnumpy()[2:7, 4:9])
    assert T.CenterCrop((20, 20))(x).shape == (20, 20, 3)  # smaller image: scaled back up
    random.seed(0)
    for _ in range(5):
        assert T.RandomResizedCrop((6, 4))(x).shape == (4, 6, 3)


def test_random_colour_and_flip_transforms():
    mx.random.seed(1)
    x = _img()
    for t in (T.RandomBrightness(0.3), T.RandomContrast(0.3), T.RandomSaturation(0.3),
              T.RandomHue(0.1), T.RandomColorJitter(0.2, 0.2, 0.2, 0.05),
              T.RandomLighting(0.1), T.RandomFlipLeftRight(), T.RandomFlipTopBottom()):
        y = t(x)
        assert y.shape == x.shape and y.dtype == np.uint8, type(t).__name__
    flips = {T.RandomFlipLeftRight()(x).asnumpy()[0, 0, 0] for _ in range(30)}
    assert flips == {x.asnumpy()[0, 0, 0], x.asnumpy()[0, -1, 0]}
    np.testing.assert_array_equal(T.RandomBrightness(0)(x).asnumpy(), x.asnumpy())
    assert T.Cast("float16")(x).dtype == np.float16


def test_rotation_transforms():
    x = mx.nd.array(np.random.RandomState(0).rand(3, 8, 8).astype(np.float32))
    np.testing.assert_allclose(T.Rotate(0)(x).asnumpy(), x.asnumpy(), atol=1e-5)
    r = T.Rotate(90)(x).asnumpy()
    np.testing.assert_allclose(r, np.rot90(x.asnumpy(), k=1, axes=(1, 2)), atol=1e-4)
    assert T.RandomRotation((-10, 10), zoom_in=True)(mx.nd.stack(x, x)).shape == (2, 3, 8, 8)
    with pytest.raises(TypeError, match="float32"):
        T.Rotate(10)(mx.nd.zeros((3, 4, 4), dtype="uint8"))
    with pytest.raises(ValueError, match="ordered tuple"):
        T.RandomRotation((10, -10))


def test_random_apply():
    x = _img()
    flip = T.Compose([T.RandomFlipTopBottom()])
    assert T.RandomApply(flip, p=0.0)(x) is x
    random.seed(0)
    outs = [T.RandomApply(T.Compose([T.Cast()]), p=0.5)(x).dtype for _ in range(20)]
    assert set(outs) == {np.float32, np.uint8}


def test_dataloader_with_transform_first():
    data = mx.gluon.data.ArrayDataset(
        mx.nd.array(np.random.RandomState(0).randint(0, 256, (6, 8, 8, 3)), dtype="uint8"),
        np.arange(6, dtype=np.int32))
    t = T.Compose([T.RandomResizedCrop(6), T.RandomFlipLeftRight(), T.ToTensor(),
                   T.Normalize(0.5, 0.25)])
    loader = mx.gluon.data.DataLoader(data.transform_first(t), batch_size=3)
    shapes = [(d.shape, lab.shape) for d, lab in loader]
    assert shapes == [((3, 3, 6, 6), (3,)), ((3, 3, 6, 6), (3,))]


def test_hybridized_random_transforms_draw_per_call():
    x = mx.nd.array(np.arange(18).reshape(2, 3, 3), dtype="uint8")
    t = T.Compose([T.RandomFlipLeftRight(), T.RandomBrightness(0.5), T.ToTensor()])
    assert [type(b).__name__ for b in t._children.values()] == ["HybridSequential"]
    firsts = {tuple(t(x).asnumpy()[0, 0].round(4)) for _ in range(10)}
    assert len(firsts) > 2
