"""ImageRecordIter's crop and colour options against MXNet 1.9.1 (outputs recorded by
tests/io/make_mxnet_image_aug_fixtures.py from the same images): deterministic options
exactly, random ones by the structure every output of MXNet's has (one factor, offset or
window per image) and by their ranges."""
import io
import json
from pathlib import Path

import numpy as np
import pytest

import sparsym as mx
from sparsym.io import _color_aug

PIL = pytest.importorskip("PIL.Image")
FIX = np.load(Path(__file__).resolve().parents[1] / "fixtures" / "mxnet"
              / "image_record_aug.npz")
CASES = json.loads(str(FIX["meta"]))
IMGS = FIX["images"]                     # red, grey, gradient, random (16x16 RGB)
SEEDS = [int(k.split("/")[1]) for k in FIX.files if k.startswith("contrast/")]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("aug")
    w = mx.recordio.MXIndexedRecordIO(str(folder / "a.idx"), str(folder / "a.rec"), "w")
    for i, a in enumerate(IMGS):
        buf = io.BytesIO()
        PIL.fromarray(a).save(buf, format="PNG")
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0),
                                        buf.getvalue()))
    w.close()
    return str(folder / "a.rec")


def _run(path, name, seed=0, **extra):
    kw = dict(CASES[name], **extra)
    shape = tuple(kw.pop("data_shape", (3, 16, 16)))
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=shape, batch_size=4, seed=seed,
                               **kw)
    return it.next().data[0].asnumpy()


def _both(path, name, seeds=None):
    """MXNet's outputs and ours for the case's seeds."""
    seeds = SEEDS if seeds is None else seeds
    return ([FIX[f"{name}/{s}"] for s in SEEDS]
            + [_run(path, name, s) for s in seeds])


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("det_")))
def test_deterministic_options_match_mxnet(path, name):
    # the HLS round trip (offsets that truncate to 0), enlarging an image smaller than
    # data_shape before the crop, a fixed-size crop resized to data_shape, mirror
    np.testing.assert_array_equal(_run(path, name), FIX[f"{name}/0"])


@pytest.mark.parametrize("name", ["contrast", "saturation"])
def test_contrast_and_saturation_blend_with_mxnets_grey(path, name):
    # MXNet takes the grey of its BGR image as if RGB: red 200 weighs 0.114, grey 23 (not
    # 60); R = 200 a + 23 (1 - a), G = B = 23 (1 - a), a in [0.5, 1.5]
    factors = []
    for out in _both(path, name, seeds=range(12)):
        r, g, b = out[0, :, 0, 0]
        a = (r - 23) / 177 if r < 255 else None
        assert g == b and g <= 12
        if a is not None:
            assert 0.5 - 0.01 <= a <= 1.5 + 0.01
            assert abs(g - max(0.0, 23 * (1 - a))) <= 1
            factors.append(a)
        np.testing.assert_array_equal(out[1], IMGS[1].transpose(2, 0, 1))   # grey: kept
    assert max(factors) - min(factors) > 0.2


def test_brightness_scales_each_image_by_its_own_factor(path):
    # each image draws its own factor a in [0.5, 1.5]: out = round(a x), clipped
    factors = []
    for out in _both(path, "brightness", seeds=range(12)):
        a = out[1, 0, 0, 0] / 100.0          # grey 100 -> round(100 a)
        assert 0.495 <= a <= 1.505
        grad = IMGS[2].transpose(2, 0, 1).astype(np.float64)
        ok = out[2] < 255
        a2 = (out[2][ok] * grad[ok]).sum() / (grad[ok] ** 2).sum()
        assert 0.49 <= a2 <= 1.51
        assert np.all(np.abs(out[2][ok] - grad[ok] * a2) <= 0.5 + 0.004 * grad[ok])
        factors.append(a)
    assert max(factors) - min(factors) > 0.2


def test_pca_noise_adds_one_offset_per_channel(path):
    offsets = []
    for out in _both(path, "pca_noise", seeds=range(20)):
        src = IMGS[3].transpose(2, 0, 1).astype(np.float64)
        d = out[3] - src
        for c in range(3):
            keep = (out[3][c] > 0) & (out[3][c] < 255)
            # trunc(v + offset): one offset, truncation toward zero moves by at most one
            assert d[c][keep].max() - d[c][keep].min() <= 1
        offsets.append(d[:, 8, 8])
    spread = np.std(offsets, axis=0)
    assert (spread > 0.3).all() and (spread < 10).all()   # about 0.1 x (31, 32, 32)


def _shift_candidates(src_px, out_px, rh, rs, rl):
    """(dh, ds, dl) whose HLS shift of one pixel gives ``out_px``."""
    hls = _color_aug._rgb_to_hls(src_px.reshape(1, 1, 3)).astype(np.int32)[0, 0]
    dh, ds, dl = np.meshgrid(np.arange(-rh, rh + 1), np.arange(-rs, rs + 1),
                             np.arange(-rl, rl + 1), indexing="ij")
    grid = np.stack([hls[0] + dh, hls[1] + dl, hls[2] + ds], -1).reshape(-1, 1, 3)
    grid = np.clip(grid, 0, [180, 255, 255]).astype(np.uint8)
    rgb = _color_aug._hls_to_rgb(grid)[:, 0]
    hit = (rgb == out_px).all(1)
    return np.stack([dh.ravel(), ds.ravel(), dl.ravel()], 1)[hit]


def test_hls_offsets_are_one_shift_per_image(path):
    # every output (MXNet's and ours) is the image shifted in HLS by one (dh, ds, dl) within
    # [-30, 30] x [-40, 40] x [-20, 20]
    for out in _both(path, "hls"):
        img, got = IMGS[2], out[2].transpose(1, 2, 0).astype(np.uint8)
        cands = _shift_candidates(img[5, 9], got[5, 9], 30, 40, 20)
        ok = False
        for dh, ds, dl in cands:
            hls = _color_aug._rgb_to_hls(img).astype(np.int32) + [dh, dl, ds]
            back = _color_aug._hls_to_rgb(np.clip(hls, 0, [180, 255, 255]).astype(np.uint8))
            if np.array_equal(back, got):
                ok = True
                break
        assert ok


def test_random_resized_crop_is_a_resized_window(path):
    # area 0.25 of 16x16 at ratio 1: an 8x8 window at a random place, resized to 10x10
    windows = [mx.image.imresize(mx.nd.array(IMGS[3][y:y + 8, x:x + 8], dtype="uint8"), 10, 10,
                                 interp=1).asnumpy().transpose(2, 0, 1)
               for y in range(9) for x in range(9)]
    places = set()
    for out in _both(path, "resized_crop", seeds=range(8)):
        hit = [i for i, w in enumerate(windows) if np.array_equal(w, out[3])]
        assert hit
        places.add(hit[0])
    assert len(places) > 2


def test_random_contrast_and_illumination_in_the_normalisation(path):
    # ((x - mean) * c + i) * scale / std, c in 1 +- 0.3, i in +- 20: mean_r 10, std_g 2,
    # scale 0.5
    cs = []
    for out in _both(path, "norm_jitter", seeds=range(12)):
        x = IMGS[2].transpose(2, 0, 1).astype(np.float64)
        c, i = np.polyfit((x[0] - 10).ravel(), out[2][0].ravel() / 0.5, 1)
        assert 0.7 - 1e-4 <= c <= 1.3 + 1e-4 and -20 - 1e-3 <= i <= 20 + 1e-3
        np.testing.assert_allclose(out[2][1], (x[1] * c + i) * 0.5 / 2, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(out[2][2], (x[2] * c + i) * 0.5, rtol=1e-5, atol=1e-4)
        cs.append(c)
    assert max(cs) - min(cs) > 0.1


def test_colour_options_are_seeded_and_need_colour(path):
    kw = dict(brightness=0.3, contrast=0.3, saturation=0.3, pca_noise=0.1, random_h=10,
              random_s=10, random_l=10, max_random_contrast=0.2, max_random_illumination=5)
    runs = [mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=4,
                                  seed=s, **kw).next().data[0].asnumpy() for s in (4, 4, 5)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])
    raw = mx.io.ImageRecordUInt8Iter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=4,
                                     seed=4, brightness=0.3).next().data[0]
    assert raw.dtype == np.uint8
    with pytest.raises(mx.base.ParamError, match="need colour images"):
        mx.io.ImageRecordIter(path_imgrec=path, data_shape=(1, 16, 16), batch_size=4,
                              saturation=0.2)
    # min_aspect_ratio: the warp's ratio is drawn from [min, max]
    wide = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=4,
                                 min_aspect_ratio=1.5, max_aspect_ratio=1.5, fill_value=0)
    assert not np.array_equal(wide.next().data[0].asnumpy()[2], IMGS[2].transpose(2, 0, 1))
