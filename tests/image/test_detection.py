"""Detection augmenters and ImageDetIter, probed on MXNet 1.9.1 (same draws from Python's
random module give the same crops, pads and flips)."""
import io
import random

import numpy as np
import pytest

import sparsym as mx

PIL = pytest.importorskip("PIL.Image")
LAB = np.array([[0, 0.1, 0.1, 0.5, 0.6], [1, 0.4, 0.3, 0.9, 0.95]])


def _img(h=40, w=50):
    return mx.nd.array(np.arange(h * w * 3).reshape(h, w, 3) % 255, dtype="uint8")


def test_flip_borrow_and_select():
    img = _img()
    s, lab = mx.image.DetHorizontalFlipAug(1.0)(img, LAB.copy())
    np.testing.assert_array_equal(s.asnumpy(), img.asnumpy()[:, ::-1])
    np.testing.assert_allclose(lab[:, [1, 3]], [[0.5, 0.9], [0.1, 0.6]])
    s, lab = mx.image.DetBorrowAug(mx.image.ForceResizeAug((10, 8)))(img, LAB.copy())
    assert s.shape == (8, 10, 3) and np.array_equal(lab, LAB)
    skip = mx.image.DetRandomSelectAug([mx.image.DetHorizontalFlipAug(1.0)], skip_prob=1)
    assert skip(img, LAB.copy())[0] is img
    with pytest.raises(TypeError):
        mx.image.DetBorrowAug(lambda x: x)
    with pytest.raises(ValueError):
        mx.image.DetRandomSelectAug([mx.image.ForceResizeAug((2, 2))])


def test_random_crop_matches_mxnet():
    random.seed(5)
    s, lab = mx.image.DetRandomCropAug(min_object_covered=0.3)(_img(), LAB.copy())
    assert s.shape == (31, 34, 3)  # MXNet 1.9.1 with the same seed
    np.testing.assert_allclose(lab, [[0, 0.1471, 0, 0.7353, 0.5161],
                                     [1, 0.5882, 0.129, 1, 0.9677]], atol=1e-4)
    h, w = s.shape[:2]
    windows = [(y, x) for y in range(40 - h + 1) for x in range(50 - w + 1)
               if np.array_equal(_img().asnumpy()[y:y + h, x:x + w], s.asnumpy())]
    assert windows  # a window of the image


def test_random_pad_matches_mxnet():
    random.seed(5)
    s, lab = mx.image.DetRandomPadAug(pad_val=(1, 2, 3))(_img(), LAB.copy())
    assert s.shape == (68, 76, 3)
    np.testing.assert_allclose(lab, [[0, 0.3947, 0.2206, 0.6579, 0.5147],
                                     [1, 0.5921, 0.3382, 0.9211, 0.7206]], atol=1e-4)
    np.testing.assert_array_equal(s.asnumpy()[0, 0], [1, 2, 3])
    # the image sits at the offset the label implies
    x0, y0 = round(0.3947 * 76 - 0.1 * 50), round(0.2206 * 68 - 0.1 * 40)
    np.testing.assert_array_equal(s.asnumpy()[y0:y0 + 40, x0:x0 + 50], _img().asnumpy())


def test_create_det_augmenter_order():
    names = [type(a).__name__ for a in mx.image.CreateDetAugmenter(
        (3, 10, 10), resize=12, rand_crop=0.5, rand_pad=0.5, rand_gray=0.1, rand_mirror=True,
        mean=True, std=True, brightness=0.1, hue=0.1, pca_noise=0.1)]
    assert names == ["DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
                     "DetRandomSelectAug"] + ["DetBorrowAug"] * 7
    multi = mx.image.CreateMultiRandCropAugmenter([0.1, 0.5], area_range=[(0.1, 1.0)])
    assert len(multi.aug_list) == 2 and multi.aug_list[1].min_object_covered == 0.5


@pytest.fixture
def det_list(tmp_path):
    rng = np.random.RandomState(0)
    lines = []
    for i in range(5):
        buf = io.BytesIO()
        PIL.fromarray(rng.randint(0, 255, (20, 30, 3)).astype(np.uint8)).save(buf, "PNG")
        (tmp_path / f"img{i}.png").write_bytes(buf.getvalue())
        objs = [[i % 2, 0.1, 0.2, 0.6, 0.7, 0], [1, 0.3, 0.3, 0.9, 0.8, 1]][:1 + (i % 3 > 0)]
        lab = [2, 6] + [v for o in objs for v in o]
        lines.append("\t".join([str(i)] + [f"{v:g}" for v in lab] + [f"img{i}.png"]))
    (tmp_path / "det.lst").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_image_det_iter_pads_labels_with_minus_one(det_list):
    it = mx.image.ImageDetIter(2, (3, 12, 12), path_imglist=str(det_list / "det.lst"),
                               path_root=str(det_list))
    assert it.label_shape == (2, 6) and it.provide_label[0].shape == (2, 2, 6)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    first = batches[0].label[0].asnumpy()
    np.testing.assert_allclose(first[0], [[0, .1, .2, .6, .7, 0], [-1] * 6], rtol=1e-6)
    np.testing.assert_allclose(first[1, 1], [1, .3, .3, .9, .8, 1], rtol=1e-6)
    assert batches[0].data[0].shape == (2, 3, 12, 12)
    other = mx.image.ImageDetIter(2, (3, 12, 12), path_root=str(det_list),
                                  imglist=[[[2, 6, 0, .1, .1, .5, .5, 0], "img0.png"]])
    assert other.label_shape == (1, 6)
    it.sync_label_shape(other)
    assert other.label_shape == (2, 6)
    with pytest.raises(ValueError, match="reduce label count"):
        it.reshape(None, (1, 6))
    it.reshape(None, (4, 6))
    it.reset()
    b = it.next()
    assert b.label[0].shape == (2, 4, 6) and (b.label[0].asnumpy()[:, 2:] == -1).all()
    with pytest.raises(RuntimeError, match="Label shape is invalid"):
        mx.image.ImageDetIter(1, (3, 8, 8), imglist=[[[1, 2, 3], "img0.png"]],
                              path_root=str(det_list))
