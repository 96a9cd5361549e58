"""mx.io.ImageRecordIter and mx.image.ImageIter over RecordIO files and image lists
(batches, labels, padding, normalisation and parts probed on MXNet 1.9.1 with the same
files)."""
import io

import numpy as np
import pytest

import sparsym as mx

PIL = pytest.importorskip("PIL.Image")


@pytest.fixture
def rec(tmp_path):
    rng = np.random.RandomState(0)
    imgs = rng.randint(0, 255, size=(5, 6, 8, 3)).astype(np.uint8)
    w = mx.recordio.MXIndexedRecordIO(str(tmp_path / "t.idx"), str(tmp_path / "t.rec"), "w")
    for i, a in enumerate(imgs):
        buf = io.BytesIO()
        PIL.fromarray(a).save(buf, format="PNG")
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), buf.getvalue()))
    w.close()
    return str(tmp_path / "t.rec"), str(tmp_path / "t.idx"), imgs


def _labels(it):
    return [(b.label[0].asnumpy().tolist(), b.pad) for b in it]


def test_image_record_iter_batches_wrap_around_like_mxnet(rec):
    path, _, imgs = rec
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2)
    assert it.provide_data[0].shape == (2, 3, 6, 8)
    assert _labels(it) == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]
    it.reset()  # MXNet: the epoch after a wrapped batch starts after the wrapped samples
    np.testing.assert_array_equal(it.next().data[0].asnumpy()[1], imgs[2].transpose(2, 0, 1))
    assert _labels(it) == [([3, 4], 0)]
    it.reset()  # that epoch did not wrap: back to the first record
    assert _labels(it) == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]
    no_round = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=3,
                                     round_batch=False)
    assert _labels(no_round) == [([0, 1, 2], 0), ([3, 4, 0], 1)]   # zero-filled, pad said


def test_normalisation_crop_resize_and_parts(rec):
    path, idx, imgs = rec
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2,
                               mean_r=10, mean_g=20, mean_b=30, std_r=2, std_g=4, std_b=8,
                               scale=0.5)
    x = imgs[0].transpose(2, 0, 1).astype("f4")
    mean, std = np.array([10, 20, 30.]).reshape(3, 1, 1), np.array([2, 4, 8.]).reshape(3, 1, 1)
    np.testing.assert_allclose(it.next().data[0].asnumpy()[0], (x - mean) / std * 0.5,
                               rtol=1e-6)
    crop = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 4), batch_size=5)
    np.testing.assert_array_equal(crop.next().data[0].asnumpy()[0],
                                  imgs[0][1:5, 2:6].transpose(2, 0, 1))
    small = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 3, 4), batch_size=5,
                                  resize=4)
    # MXNet 1.9.1's values for record 1, channel 0, after resizing the short side to 4
    assert small.next().data[0].asnumpy()[1, 0].ravel()[:8].tolist() == \
        [184, 21, 35, 95, 108, 45, 95, 78]
    for index in (path, idx):           # with and without the index file
        kw = {} if index == path else {"path_imgidx": idx}
        part = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2,
                                     num_parts=2, part_index=1, **kw)
        assert [b.label[0].asnumpy().tolist() for b in part] == [[3, 4]]


def test_shuffle_mirror_and_refusals(rec):
    path, _, imgs = rec
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=5,
                               shuffle=True, rand_mirror=True, seed=3)
    b = it.next()
    labels = b.label[0].asnumpy().astype(int)
    assert sorted(labels.tolist()) == [0, 1, 2, 3, 4]
    for row, lab in zip(b.data[0].asnumpy(), labels):
        img = imgs[lab].transpose(2, 0, 1)
        assert np.array_equal(row, img) or np.array_equal(row, img[:, :, ::-1])
    with pytest.raises(mx.base.ParamError, match="unknown parameter 'bogus'"):
        mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2, bogus=1)
    # MXNet 1.9.1 enlarges an image smaller than data_shape (aspect kept), then crops:
    # 6x8 -> 9x12 (bilinear), centre 9x9
    big = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 9, 9),
                                batch_size=2).next().data[0].asnumpy()
    want = mx.image.imresize(mx.nd.array(imgs[0], dtype="uint8"), 12, 9, interp=1).asnumpy()
    np.testing.assert_array_equal(big[0], want[:, 1:10].transpose(2, 0, 1))
    with pytest.raises(NotImplementedError, match="ImageDetRecordIter"):
        mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2)


def test_image_iter_last_batch_modes_and_lists(rec, tmp_path):
    path, idx, imgs = rec
    kw = dict(batch_size=2, data_shape=(3, 4, 4), path_imgrec=path, path_imgidx=idx)
    it = mx.image.ImageIter(**kw)
    assert _labels(it) == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]
    it.reset()
    np.testing.assert_array_equal(it.next().data[0].asnumpy()[0],
                                  imgs[0][1:5, 2:6].transpose(2, 0, 1))
    roll = mx.image.ImageIter(last_batch_handle="roll_over", **kw)
    assert _labels(roll) == [([0, 1], 0), ([2, 3], 0)]
    roll.reset()
    assert _labels(roll) == [([4, 0], 1), ([1, 2], 0), ([3, 4], 0)]
    assert _labels(mx.image.ImageIter(last_batch_handle="discard", **kw)) == \
        [([0, 1], 0), ([2, 3], 0)]
    for i in range(2):
        PIL.fromarray(imgs[i]).save(tmp_path / f"{i}.png")
    lst = mx.image.ImageIter(batch_size=2, data_shape=(3, 4, 4), path_root=str(tmp_path),
                             imglist=[[1.0, "0.png"], [2.0, "1.png"]])
    assert _labels(lst) == [([1, 2], 0)]
    with pytest.raises(mx.base.ParamError, match="need its index"):
        mx.image.ImageIter(batch_size=2, data_shape=(3, 4, 4), path_imgrec=path, shuffle=True)


def test_mean_img_pad_and_fill_value_like_mxnet(rec, tmp_path):
    """MXNet 1.9.1 on the same file (probed): a missing mean_img is computed as the mean of
    every output under the mean_r/g/b, scale and std normalisation, saved as
    {'mean_img': (C, H, W)}, then subtracted before scale / std; a present one is read; pad
    surrounds the image with fill_value before the crop."""
    path, _, imgs = rec
    mean_path = str(tmp_path / "mean.nd")
    std = np.array([2.0, 1.0, 1.0], np.float32).reshape(3, 1, 1)
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 6), batch_size=2,
                               mean_img=mean_path, scale=0.5, std_r=2)
    crops = imgs[:, 1:5, 1:7].transpose(0, 3, 1, 2).astype(np.float32)
    saved = mx.nd.load(mean_path)
    assert list(saved) == ["mean_img"]
    mean = saved["mean_img"].asnumpy()
    np.testing.assert_allclose(mean, crops.mean(0) * 0.5 / std, rtol=1e-5)
    np.testing.assert_allclose(it.next().data[0].asnumpy(), (crops[:2] - mean) * 0.5 / std,
                               rtol=1e-5, atol=1e-4)
    loaded = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 6), batch_size=2,
                                   mean_img=mean_path)
    np.testing.assert_allclose(loaded.next().data[0].asnumpy(), crops[:2] - mean, rtol=1e-5)
    with pytest.raises(mx.base.ParamError, match="mean image .* has shape"):
        mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2,
                              mean_img=mean_path)
    padded = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 10), batch_size=2,
                                   pad=1, fill_value=7).next().data[0].asnumpy()
    want = np.full((3, 8, 10), 7.0, np.float32)
    want[:, 1:7, 1:9] = imgs[0].transpose(2, 0, 1)
    np.testing.assert_array_equal(padded[0], want)
    cropped = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 6, 8), batch_size=2,
                                    pad=2, fill_value=3).next().data[0].asnumpy()
    np.testing.assert_array_equal(cropped[0], imgs[0].transpose(2, 0, 1))


def _square_rec(tmp_path, n=7):
    """Five n x n RGB images (and the .rec path holding them)."""
    rng = np.random.RandomState(0)
    rng.randint(0, 255, size=(5, 6, 8, 3))          # the draws of the ``rec`` fixture
    imgs = rng.randint(0, 255, size=(5, n, n, 3)).astype(np.uint8)
    w = mx.recordio.MXRecordIO(str(tmp_path / "sq.rec"), "w")
    for i, a in enumerate(imgs):
        buf = io.BytesIO()
        PIL.fromarray(a).save(buf, format="PNG")
        w.write(mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), buf.getvalue()))
    w.close()
    return str(tmp_path / "sq.rec"), imgs


def _batch(path, shape, **kw):
    return mx.io.ImageRecordIter(path_imgrec=path, data_shape=shape, batch_size=5,
                                 **kw).next().data[0].asnumpy()


def test_affine_options_at_neutral_values_change_nothing(rec):
    path, _, imgs = rec
    neutral = dict(max_rotate_angle=0, rotate=-1, max_shear_ratio=0.0, max_aspect_ratio=0.0,
                   min_random_scale=1.0, max_random_scale=1.0, min_img_size=0.0,
                   max_img_size=1e10, inter_method=1)
    want = imgs.transpose(0, 3, 1, 2).astype(np.float32)
    np.testing.assert_array_equal(_batch(path, (3, 6, 8)), want)
    np.testing.assert_array_equal(_batch(path, (3, 6, 8), rand_crop=True, rand_mirror=True,
                                         seed=3, **neutral),
                                  _batch(path, (3, 6, 8), rand_crop=True, rand_mirror=True,
                                         seed=3))
    # rotate=0 is no rotation (MXNet uses rotate only when > 0)
    np.testing.assert_array_equal(_batch(path, (3, 6, 8), rotate=0), want)


def test_rotate_is_opencvs_warp_like_mxnet(rec, tmp_path):
    """Probed on MXNet 1.9.1 with the same files: its warp maps integer pixel coordinates
    (not pixel centres), so rotate=90 on an n x n image moves src[x, n - y] to (y, x) and
    the first row, which comes from column n, is fill_value; rotate=180 moves
    src[h - y, w - x] to (y, x). Bilinear rotate=45 agrees within one grey level (OpenCV's
    fixed-point weights)."""
    sq, simgs = _square_rec(tmp_path)
    n = simgs.shape[1]
    got = _batch(sq, (3, n, n), rotate=90, fill_value=7)
    want = np.full((5, n, n, 3), 7.0, np.float32)
    for y in range(1, n):
        want[:, y, :] = simgs[:, :, n - y]
    np.testing.assert_array_equal(got, want.transpose(0, 3, 1, 2))
    path, _, imgs = rec
    got = _batch(path, (3, 6, 8), rotate=180, fill_value=9)
    want = np.full((5, 6, 8, 3), 9.0, np.float32)
    want[:, 1:, 1:] = imgs[:, :0:-1, :0:-1]
    np.testing.assert_array_equal(got, want.transpose(0, 3, 1, 2))
    mxnet_45 = [[0, 37, 36, 73, 68, 0, 0], [38, 168, 110, 164, 213, 137, 0],
                [110, 159, 124, 205, 137, 133, 85], [151, 210, 109, 168, 153, 84, 147],
                [112, 149, 91, 137, 134, 192, 69], [57, 172, 196, 211, 90, 138, 104],
                [25, 155, 213, 210, 167, 65, 0]]
    got = _batch(sq, (3, n, n), rotate=45, fill_value=0)[0, 0]
    np.testing.assert_allclose(got, mxnet_45, atol=1)


def test_random_rotation_is_seeded_and_bounded(tmp_path):
    """A flat grey image rotated by a random angle in [-30, 30] degrees: the centre stays
    grey, corners take fill_value for non-zero angles, and a seed fixes the draws."""
    w = mx.recordio.MXRecordIO(str(tmp_path / "g.rec"), "w")
    for i in range(5):
        buf = io.BytesIO()
        PIL.fromarray(np.full((9, 9, 3), 100, np.uint8)).save(buf, format="PNG")
        w.write(mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), buf.getvalue()))
    w.close()
    path = str(tmp_path / "g.rec")
    kw = dict(max_rotate_angle=30, fill_value=0, inter_method=1)
    a = np.concatenate([_batch(path, (3, 9, 9), seed=s, **kw) for s in range(6)])
    np.testing.assert_array_equal(a[:, :, 2:7, 2:7], 100)
    assert (a[:, :, 0, 0] < 100).sum() > len(a) * 3 // 2    # most corners are filled
    assert a.min() >= 0 and a.max() <= 100
    np.testing.assert_array_equal(_batch(path, (3, 9, 9), seed=4, **kw), a[20:25])
    sheared = [_batch(path, (3, 9, 9), seed=s, max_shear_ratio=0.3, fill_value=0)
               for s in (1, 1, 2)]
    np.testing.assert_array_equal(sheared[0], sheared[1])
    assert not np.array_equal(sheared[0], sheared[2])
    assert (sheared[0] < 100).any()


def test_scale_and_img_size_bounds(rec):
    path, _, imgs = rec
    # scale 2 doubles the image: even pixels are the source pixels
    big = _batch(path, (3, 12, 16), min_random_scale=2.0, max_random_scale=2.0)
    np.testing.assert_array_equal(big[:, :, ::2, ::2], imgs.transpose(0, 3, 1, 2))
    assert (big[:, :, 1:-1:2, ::2] != big[:, :, :-2:2, ::2]).any()
    # max_img_size caps the output (centred), min_img_size grows it (pads around)
    small = _batch(path, (3, 4, 4), max_img_size=4)
    np.testing.assert_array_equal(small, imgs[:, 1:5, 2:6].transpose(0, 3, 1, 2))
    # a 4x4 warp output is enlarged to 6x6, then 8 wide, before the 6x8 crop (MXNet's rule)
    assert _batch(path, (3, 6, 8), max_img_size=4).shape == (5, 3, 6, 8)
    grown = _batch(path, (3, 10, 10), min_img_size=10, fill_value=1)
    want = np.ones((5, 10, 10, 3), np.float32)
    want[:, 2:8, 1:9] = imgs
    np.testing.assert_array_equal(grown, want.transpose(0, 3, 1, 2))
    aspect = [_batch(path, (3, 6, 8), max_aspect_ratio=0.4, seed=s, fill_value=0)
              for s in (5, 5)]
    np.testing.assert_array_equal(aspect[0], aspect[1])
    assert not np.array_equal(aspect[0], imgs.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("kw, match", [
    (dict(max_rotate_angle=-1), "max_rotate_angle must be >= 0"),
    (dict(max_rotate_angle=2.5), "max_rotate_angle must be an integer"),
    (dict(max_shear_ratio=-0.1), "max_shear_ratio must be >= 0"),
    (dict(max_aspect_ratio=1.5), r"max_aspect_ratio must be in \[0, 1\)"),
    (dict(min_random_scale=2.0), "min_random_scale <= max_random_scale"),
    (dict(min_img_size=5, max_img_size=4), "min_img_size <= max_img_size"),
    (dict(inter_method=7), "invalid inter_method"),
    (dict(random_h=1.5), "random_h must be an integer"),
    (dict(brightness=-0.1), "brightness must be >= 0"),
    (dict(random_resized_crop=True, rand_crop=True), "conflicts with"),
    (dict(random_resized_crop=True, min_random_area=0.5, max_random_area=0.2),
     "min_random_area <= max_random_area"),
    (dict(min_aspect_ratio=1.5, max_aspect_ratio=1.2), "min_aspect_ratio <= max_aspect_ratio"),
    (dict(max_crop_size=5), "1 <= min_crop_size <= max_crop_size"),
    (dict(aug_seq="other"), "aug_default"),
])
def test_invalid_augmentation_values_raise(rec, kw, match):
    with pytest.raises(mx.base.ParamError, match=match):
        mx.io.ImageRecordIter(path_imgrec=rec[0], data_shape=(3, 6, 8), batch_size=2, **kw)


def test_warp_interpolation_methods(rec):
    """inter_method picks the warp's interpolation: nearest keeps source values, 9 (auto)
    is cubic for a warp that enlarges both sides, 10 draws a method from the seed."""
    path, _, imgs = rec
    kw = dict(min_random_scale=1.5, max_random_scale=1.5)
    near = _batch(path, (3, 9, 12), inter_method=0, **kw)
    assert np.isin(near[0], np.append(imgs[0], 255)).all()
    lin, cub = (_batch(path, (3, 9, 12), inter_method=m, **kw) for m in (1, 2))
    assert not np.array_equal(lin, cub)
    np.testing.assert_array_equal(_batch(path, (3, 9, 12), inter_method=9, **kw), cub)
    np.testing.assert_array_equal(_batch(path, (3, 9, 12), inter_method=10, seed=2, **kw),
                                  _batch(path, (3, 9, 12), inter_method=10, seed=2, **kw))
