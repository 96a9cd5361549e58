"""Image iterators over RecordIO files and image lists: ``mx.image.ImageIter`` (augmenter
lists) and MXNet's ``mx.io.ImageRecordIter`` family (resize, crop, mirror, normalise).

Images decode through :func:`sparsym.image.imdecode` (Pillow); labels come from the
records' headers or from an image list. ``mx.image.ImageDetIter`` (sparsym.io.det_iter)
reads detection labels; the C++ ``ImageDetRecordIter`` is not supported and raises
NotImplementedError.
"""
from __future__ import annotations

import logging
import os
import random
from numbers import Number

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..base import ParamError
from ..image import image as _img
from ..image.augmenters import CreateAugmenter
from ._affine_aug import AFFINE_DEFAULTS, affine_active, check_affine, random_affine
from ._color_aug import COLOR_DEFAULTS, check_color, color_active, color_augment
from ._crop_aug import CROP_DEFAULTS, check_crop, crop
from .io import DataBatch, DataDesc, DataIter

__all__ = ["ImageIter", "ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter",
           "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter", "ImageDetRecordIter"]

_LAST_BATCH = ("pad", "discard", "roll_over")


class ImageIter(DataIter):
    """Batches of images from a RecordIO file (``path_imgrec``, with ``path_imgidx`` for
    random access), an image list file (``path_imglist``: ``index<TAB>label...<TAB>path``
    lines, images under ``path_root``) or a Python ``imglist``, run through ``aug_list``
    (default ``CreateAugmenter(data_shape, **kwargs)``) into (batch, C, H, W) float32.

    Parameters
    ----------
    batch_size : int
    data_shape : tuple of int
        (3, H, W).
    label_width : int, default 1
    path_imgrec, path_imglist, path_root, path_imgidx : str, optional
    shuffle : bool, default False
        Needs ``path_imgidx`` (or a list) to reorder records.
    part_index, num_parts : int, default 0, 1
        Read only this part of the data (for data-parallel workers).
    aug_list : list of Augmenter, optional
    imglist : list, optional
        ``[label(s)..., path]`` entries.
    data_name, label_name : str
    dtype : str, default 'float32'
        The labels' dtype.
    last_batch_handle : {'pad', 'discard', 'roll_over'}, default 'pad'
    **kwargs
        Passed to ``CreateAugmenter`` when ``aug_list`` is None.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad",
                 **kwargs):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ParamError("ImageIter needs path_imgrec, path_imglist or imglist")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise ParamError(f"ImageIter: {dtype} label not supported")
        if last_batch_handle not in _LAST_BATCH:
            raise ParamError(f"ImageIter: last_batch_handle must be one of {_LAST_BATCH}, "
                             f"got {last_batch_handle!r}")
        self.check_data_shape(data_shape)
        self.imgrec, self.imgidx = None, None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        self.imglist, keys = self._read_imglist(path_imglist, imglist, dtype)
        self.path_root = path_root or ""
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape)]
        self.provide_label = [DataDesc(label_name, (batch_size, label_width)
                                       if label_width > 1 else (batch_size,), dtype)]
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = keys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ParamError("ImageIter: shuffle and num_parts > 1 over a .rec file need "
                                 "its index (path_imgidx)")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ParamError(f"part_index must be in [0, {num_parts}), got {part_index}")
            n = len(self.seq) // num_parts
            self.seq = self.seq[part_index * n:(part_index + 1) * n]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.last_batch_handle = last_batch_handle
        self.num_image = None if self.seq is None else len(self.seq)
        self.cur = 0
        self._allow_read = True
        self._cache = None          # roll_over: (data, label, filled) of the short batch
        self.reset()

    @staticmethod
    def _read_imglist(path_imglist, imglist, dtype):
        """({key: (label NDArray, path)}, keys) from a list file or a Python list."""
        if path_imglist:
            out, keys = {}, []
            with open(path_imglist) as f:
                for line in f:
                    parts = line.strip().split("\t")
                    if len(parts) < 3:
                        continue
                    key = int(parts[0])
                    out[key] = (nd.array([float(v) for v in parts[1:-1]], dtype=dtype),
                                parts[-1])
                    keys.append(key)
            return out, keys
        if isinstance(imglist, list):
            out, keys = {}, []
            for i, item in enumerate(imglist, 1):
                if len(item) > 2:
                    label = nd.array(item[:-1], dtype=dtype)
                elif isinstance(item[0], Number):
                    label = nd.array([item[0]], dtype=dtype)
                else:
                    label = nd.array(item[0], dtype=dtype)
                out[str(i)] = (label, item[-1])
                keys.append(str(i))
            return out, keys
        return None, None

    def check_data_shape(self, data_shape):
        """Refuse a data shape other than (3, H, W)."""
        if len(data_shape) != 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if data_shape[0] != 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def reset(self):
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Reset, dropping a rolled-over partial batch."""
        self._cache = None
        self.reset()

    def next_sample(self):
        """(label, encoded image) of the next sample; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            s = self.imgrec.read()
            if s is None:
                if self.last_batch_handle != "discard":
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(s)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            return (header.label if self.imglist is None else self.imglist[idx][0]), img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def read_image(self, fname):
        """The encoded bytes of ``path_root/fname``."""
        with open(os.path.join(self.path_root, fname), "rb") as f:
            return f.read()

    def imdecode(self, s):
        """Decode one sample; a broken image raises RuntimeError naming it."""
        try:
            return _img.imdecode(s)
        except Exception as err:  # noqa: BLE001 (reported with the sample's position)
            raise RuntimeError(f"Broken image at sample {self.cur}: {err}") from err

    def augmentation_transform(self, data):
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """(H, W, C) -> (C, H, W)."""
        return nd.transpose(datum, axes=(2, 0, 1))

    def _new_label(self):
        """The label array of a new batch."""
        return nd.zeros(self.provide_label[0].shape, dtype=self.dtype)

    def _batchify(self, data, label, start=0):
        """Fill ``data``/``label`` from row ``start``; returns the rows filled."""
        i = start
        try:
            while i < self.batch_size:
                lab, s = self.next_sample()
                img = self.imdecode(s)
                if img.ndim == 0 or img.shape[0] == 0:
                    logging.debug("Invalid image, skipping")
                    continue
                data[i] = self.postprocess_data(self.augmentation_transform(img))
                label[i] = lab
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        c, h, w = self.data_shape
        if self._cache is not None:
            data, label, filled = self._cache
        else:
            data = nd.zeros((self.batch_size, c, h, w))
            label = self._new_label()
            filled = self._batchify(data, label)
        pad = self.batch_size - filled
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache is None:
                self._cache = (data, label, filled)
                raise StopIteration
            self._batchify(data, label, filled)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache = None
        return DataBatch([data], [label], pad=pad)


class _RecordSource:
    """Random access to the records of a .rec file: through its index when given, else
    through offsets found by one pass over the file."""

    def __init__(self, path_imgrec, path_imgidx):
        if path_imgidx:
            self.rec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
            self.keys = list(self.rec.keys)
            self.read = self.rec.read_idx
            return
        self.rec = recordio.MXRecordIO(path_imgrec, "r")
        offsets = []
        while True:
            pos = self.rec._f.tell()        # the reader's own offset (tell() is for writers)
            if self.rec.read() is None:
                break
            offsets.append(pos)
        self.keys = offsets
        self.read = self._read_at

    def _read_at(self, pos):
        self.rec._f.seek(pos)
        return self.rec.read()


# MXNet ImageRecordIter parameters sparsym implements, with their defaults
_SUPPORTED = dict(label_width=1, shuffle=False, seed=0, rand_crop=False, rand_mirror=False,
                  resize=-1, mean_r=0.0, mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=1.0,
                  std_g=1.0, std_b=1.0, std_a=1.0, scale=1.0, round_batch=True, num_parts=1,
                  part_index=0, data_name="data", label_name="softmax_label",
                  dtype="float32", inter_method=1, path_imgidx=None, path_imglist=None,
                  preprocess_threads=4, prefetch_buffer=4, verbose=True, shuffle_chunk_size=0,
                  shuffle_chunk_seed=0, seed_aug=None, ctx="cpu", num_threads=None,
                  pad=0, fill_value=255, mean_img="", mirror=False, max_random_contrast=0.0,
                  max_random_illumination=0.0, device_id=0, aug_seq="aug_default",
                  **AFFINE_DEFAULTS, **CROP_DEFAULTS, **COLOR_DEFAULTS)


class ImageRecordIter(DataIter):
    """MXNet's ImageRecordIter: images of a RecordIO file as (batch, C, H, W) batches.

    Each image goes through MXNet 1.9.1's default augmenter, in its order: decode, resize
    the shorter side to ``resize`` (when > 0); a random affine warp when any of the
    rotation, shear, aspect-ratio, scale or image-size parameters is set (one matrix per
    image, output of size ``scale * (W, H)`` clamped to ``[min_img_size, max_img_size]``,
    uncovered pixels ``fill_value``; the warp maps integer pixel coordinates, as OpenCV's
    does); ``pad`` pixels of ``fill_value`` on every side; a crop: with
    ``random_resized_crop``, up to ten draws of an area share in ``[min_random_area,
    max_random_area]`` and a width / height ratio, the first box that fits cut at a random
    place and resized to ``data_shape``; else with ``min/max_crop_size``, a square of random
    side (random place with ``rand_crop``, else centred) resized to ``data_shape``; else a
    crop to ``data_shape`` (random with ``rand_crop``, else centred) after enlarging an
    image with fewer rows or columns (aspect kept); then the colour changes: brightness,
    contrast and saturation factors in ``1 +- value`` in a random order, whole offsets in
    ``+-random_h/s/l`` to OpenCV's 8-bit HLS channels, PCA lighting noise of standard
    deviation ``pca_noise``; mirroring (``mirror``, or at random with ``rand_mirror``);
    and the normalisation ``((x - mean) * c + i) * scale / std`` per channel, with a random
    contrast ``c`` in ``1 +- max_random_contrast`` and illumination ``i`` in
    ``+-max_random_illumination``. With ``mean_img``, ``mean`` is that file's (C, H, W)
    image (MXNet's ``nd.save`` format, key ``mean_img``); when the file does not exist it
    is first computed, as MXNet does, as the mean of every output of the part under the
    ``mean_r/g/b`` normalisation, and saved. The last batch wraps around to the first
    samples when ``round_batch`` (``pad`` counts them, and the next epoch starts after
    them, as MXNet's); otherwise it is zero-filled (MXNet leaves those rows uninitialised
    and reports ``pad=0``; here ``pad`` says how many).

    Parameters
    ----------
    path_imgrec : str
    data_shape : tuple of int
        (C, H, W); C is 3 (colour) or 1 (grayscale: no colour options).
    batch_size : int
    label_width : int, default 1
    shuffle : bool, default False
    seed : int, default 0
        Seeds the shuffling and the random augmentations.
    rand_crop, rand_mirror, mirror : bool, default False
    resize : int, default -1
    pad : int, default 0
    fill_value : int, default 255
    mean_img : str, default ''
    max_rotate_angle : int, default 0
        Rotate by a random whole angle in ``[-max_rotate_angle, max_rotate_angle]`` degrees.
    rotate : int, default -1
        When > 0, rotate by exactly this angle (degrees, counter-clockwise).
    max_shear_ratio : float, default 0
        Shear by a random ratio in ``[-max_shear_ratio, max_shear_ratio]``.
    max_aspect_ratio : float, default 0
        Stretch by a random width / height ratio in ``1 +- max_aspect_ratio`` (< 1), or in
        ``[min_aspect_ratio, max_aspect_ratio]`` when ``min_aspect_ratio`` is given (the
        crop's ratio with ``random_resized_crop``).
    min_aspect_ratio : float, optional
    min_random_scale, max_random_scale : float, default 1
        Scale the image by a random factor in this range.
    min_img_size, max_img_size : float, default 0, 1e10
        Bounds on the warped image's sides.
    random_resized_crop : bool, default False
        Excludes ``rand_crop``, the crop sizes and the random scale (as in MXNet).
    min_random_area, max_random_area : float, default 1
    min_crop_size, max_crop_size : int, default -1
    brightness, contrast, saturation : float, default 0
    random_h, random_s, random_l : int, default 0
    pca_noise : float, default 0
    max_random_contrast, max_random_illumination : float, default 0
    inter_method : int, default 1
        Interpolation of resizes and warp: 0 nearest, 1 bilinear, 2 cubic, 3 area (the
        warp uses bilinear), 4 Lanczos (the warp uses cubic), 9 auto, 10 random.
    mean_r, mean_g, mean_b, std_r, std_g, std_b, scale : float
    round_batch : bool, default True
    num_parts, part_index : int, default 1, 0
    path_imgidx : str, optional
        The index (random access without a first pass over the file).
    data_name, label_name : str

    Deterministic options give MXNet's pixels (OpenCV's resize, warp, 8-bit HLS and grey
    arithmetic; MXNet's contrast and saturation blend with the grey of its BGR image taken
    as RGB, which is kept). The random draws come from ``seed``, so a run is reproducible,
    but they are not MXNet's draws.
    """

    _out_dtype = np.float32
    _normalise = True

    def __init__(self, path_imgrec, data_shape, batch_size, **kwargs):
        super().__init__(batch_size)
        params = dict(_SUPPORTED)
        for k, v in kwargs.items():
            if k not in params:
                raise ParamError(f"ImageRecordIter: unknown parameter {k!r}")
            params[k] = v
        if params["aug_seq"] != "aug_default":
            raise ParamError(f"ImageRecordIter: aug_seq={params['aug_seq']!r}: only MXNet's "
                             "'aug_default' augmenter exists")
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise ParamError(f"ImageRecordIter: data_shape must be (1 or 3, H, W), got "
                             f"{data_shape}")
        if params["path_imglist"]:
            raise ParamError("ImageRecordIter: path_imglist is not supported; labels come "
                             "from the records (use mx.image.ImageIter for image lists)")
        check_affine(params)
        check_crop(params)
        check_color(params, data_shape[0])
        for k in ("max_random_contrast", "max_random_illumination"):
            if params[k] < 0:
                raise ParamError(f"ImageRecordIter: {k} must be >= 0, got {params[k]}")
        self.p = params
        self._affine = affine_active(params)
        self._color = color_active(params)
        self.data_shape = data_shape
        self._src = _RecordSource(path_imgrec, params["path_imgidx"])
        keys = self._src.keys
        parts, part = int(params["num_parts"]), int(params["part_index"])
        if not 0 <= part < parts:
            raise ParamError(f"part_index must be in [0, {parts}), got {part}")
        per = -(-len(keys) // parts)            # ceil: the first parts take one more
        self._keys = keys[part * per:(part + 1) * per]
        if not self._keys:
            raise ParamError(f"ImageRecordIter: {path_imgrec} has no records for part {part}")
        self._rng = np.random.RandomState(params["seed"])
        lw = int(params["label_width"])
        self.provide_data = [DataDesc(params["data_name"], (batch_size,) + data_shape,
                                      self._out_dtype)]
        self.provide_label = [DataDesc(params["label_name"],
                                       (batch_size, lw) if lw > 1 else (batch_size,))]
        chan = data_shape[0]
        self._mean = np.array([params["mean_r"], params["mean_g"], params["mean_b"]][:chan]
                              if chan == 3 else [params["mean_r"]], np.float32)[:, None, None]
        self._std = np.array([params["std_r"], params["std_g"], params["std_b"]][:chan]
                             if chan == 3 else [params["std_r"]], np.float32)[:, None, None]
        self.reset()
        if params["mean_img"] and self._normalise:
            self._mean = self._mean_image(params["mean_img"])
            self.reset()

    def _mean_image(self, path):
        """The mean image of ``path``, or the one computed over the part and saved there."""
        if os.path.exists(path):
            if self.p["verbose"]:
                logging.info("Load mean image from %s", path)
            arrays = nd.load(path)
            arrays = list(arrays.values()) if isinstance(arrays, dict) else list(arrays)
            if len(arrays) != 1:
                raise ParamError(f"ImageRecordIter: {path}: Invalid mean image file format "
                                 f"(expected one array, got {len(arrays)})")
            mean = arrays[0].asnumpy().astype(np.float32)
            if mean.shape != self.data_shape:
                raise ParamError(f"ImageRecordIter: the mean image {path} has shape "
                                 f"{mean.shape}, data_shape is {self.data_shape}")
            return mean
        if self.p["verbose"]:
            logging.info("Cannot find %s: create mean image, this will take some time...",
                         path)
        total = np.zeros(self.data_shape, np.float64)
        for i in range(len(self._order)):
            total += self._sample(i)[0]
        mean = (total / len(self._order)).astype(np.float32)
        nd.save(path, {"mean_img": nd.array(mean)})
        if self.p["verbose"]:
            logging.info("Save mean image to %s..", path)
        return mean

    def reset(self):
        overflow = getattr(self, "_overflow", 0)
        self._overflow = 0
        if overflow:
            # MXNet's round_batch: after a last batch that wrapped around, the next epoch
            # goes on after the samples that batch took from the start (no rewind)
            self._cur = overflow
            return
        self._order = list(range(len(self._keys)))
        if self.p["shuffle"]:
            self._rng.shuffle(self._order)
        self._cur = 0

    def _sample(self, i):
        header, buf = recordio.unpack(self._src.read(self._keys[self._order[i]]))
        img = _img.imdecode(buf, flag=1 if self.data_shape[0] == 3 else 0).asnumpy()
        c, h, w = self.data_shape
        if self.p["resize"] > 0:
            img = _img.resize_short(nd.array(img, dtype=np.uint8), self.p["resize"],
                                    interp=self.p["inter_method"]).asnumpy()
        if self._affine:
            img = random_affine(img, self.p, self._rng)
        if self.p["pad"] > 0:
            p = int(self.p["pad"])
            img = np.pad(img, ((p, p), (p, p), (0, 0)), constant_values=self.p["fill_value"])
        img = crop(img, self.p, (h, w), self._rng)
        if self._color:
            img = color_augment(img, self.p, self._rng)
        if (self.p["rand_mirror"] and self._rng.randint(2)) or self.p["mirror"]:
            img = img[:, ::-1]
        x = img.transpose(2, 0, 1).astype(np.float32)
        if self._normalise:
            # MXNet's random contrast and illumination: ((x - mean) * c + i) * scale / std
            p = self.p
            c = np.float32(self._rng.rand() * p["max_random_contrast"] * 2
                           - p["max_random_contrast"] + 1) * np.float32(p["scale"])
            i = np.float32(self._rng.rand() * p["max_random_illumination"] * 2
                           - p["max_random_illumination"]) * np.float32(p["scale"])
            x = (x - self._mean) * (c / self._std) + i / self._std
        return x, header.label

    def next(self):
        n = len(self._order)
        if self._cur >= n:
            raise StopIteration
        bs, lw = self.batch_size, int(self.p["label_width"])
        data = np.zeros((bs,) + self.data_shape, self._out_dtype)
        label = np.zeros((bs, lw), np.float32)
        take = min(bs, n - self._cur)
        rows = list(range(self._cur, self._cur + take))
        pad = bs - take
        if pad and self.p["round_batch"]:
            rows += [i % n for i in range(pad)]     # wrap around to the first samples
            self._overflow = pad
        for r, i in enumerate(rows):
            x, lab = self._sample(i)
            data[r] = x
            label[r] = np.asarray(lab, np.float32).reshape(-1)[:lw]
        self._cur += bs
        return DataBatch([nd.array(data, dtype=self._out_dtype)],
                         [nd.array(label if lw > 1 else label[:, 0])], pad=pad)


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter without normalisation: raw uint8 pixels."""

    _out_dtype = np.uint8
    _normalise = False


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter without normalisation, as int8 (MXNet's quantized input)."""

    _out_dtype = np.int8
    _normalise = False


ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter


def ImageDetRecordIter(*args, **kwargs):  # noqa: N802 (MXNet's name)
    """MXNet's detection record iterator: not supported here (NotImplementedError)."""
    raise NotImplementedError(
        "mx.io.ImageDetRecordIter is not supported: use mx.image.ImageDetIter (same .rec "
        "files and labels, augmenters from mx.image.CreateDetAugmenter).")
