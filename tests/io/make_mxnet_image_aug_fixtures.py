"""Record MXNet 1.9.1's ImageRecordIter outputs for the augmentation options whose result
is deterministic, and samples of the random ones, into
tests/fixtures/mxnet/image_record_aug.npz::

    ~/mxref/bin/python tests/io/make_mxnet_image_aug_fixtures.py

The images are written as PNG (lossless) by a small encoder here, so any decoder reads
the same pixels.
"""
import json
import os
import struct
import tempfile
import zlib

import mxnet as mx
import numpy as np


def images():
    """A red, a grey, a gradient and a random 16x16 RGB image."""
    yy, xx = np.mgrid[0:16, 0:16]
    return np.stack([np.tile(np.array([200, 0, 0], np.uint8), (16, 16, 1)),
                     np.full((16, 16, 3), 100, np.uint8),
                     np.stack([xx * 16, yy * 16, (xx + yy) * 8], -1).astype(np.uint8),
                     np.random.RandomState(0).randint(0, 256, (16, 16, 3)).astype(np.uint8)])


def png(img):
    """An 8-bit RGB PNG of ``img`` (H, W, 3)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    h, w = img.shape[:2]
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def write_rec(folder, imgs):
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(folder, "a.idx"),
                                        os.path.join(folder, "a.rec"), "w")
    for i, im in enumerate(imgs):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), png(im)))
    rec.close()
    return os.path.join(folder, "a.rec")


# name -> ImageRecordIter options; "det_" cases are deterministic, the others are random
CASES = {
    "det_hls_roundtrip": dict(random_h=1, random_s=1, random_l=1),
    "det_enlarge": dict(data_shape=(3, 20, 24)),
    "det_enlarge_cubic": dict(data_shape=(3, 20, 24), inter_method=2),
    "det_crop_size": dict(data_shape=(3, 12, 12), max_crop_size=8, min_crop_size=8),
    "det_mirror": dict(mirror=True),
    "contrast": dict(contrast=0.5),
    "saturation": dict(saturation=0.5),
    "brightness": dict(brightness=0.5),
    "pca_noise": dict(pca_noise=0.1),
    "hls": dict(random_h=30, random_s=40, random_l=20),
    "resized_crop": dict(data_shape=(3, 10, 10), random_resized_crop=True,
                         min_random_area=0.25, max_random_area=0.25),
    "norm_jitter": dict(max_random_contrast=0.3, max_random_illumination=20, mean_r=10,
                        std_g=2, scale=0.5),
}
SEEDS = range(6)


def main():
    imgs = images()
    out = {"images": imgs}
    with tempfile.TemporaryDirectory() as folder:
        path = write_rec(folder, imgs)
        for name, kw in CASES.items():
            kw = dict(kw)
            shape = kw.pop("data_shape", (3, 16, 16))
            for seed in ([0] if name.startswith("det_") else SEEDS):
                it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=shape, batch_size=4,
                                           seed=seed, **kw)
                out[f"{name}/{seed}"] = it.next().data[0].asnumpy()
    out["meta"] = np.array(json.dumps(CASES))
    dest = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet",
                        "image_record_aug.npz")
    np.savez_compressed(dest, **out)


if __name__ == "__main__":
    main()
