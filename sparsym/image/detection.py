"""Detection augmenters (``mx.image.detection``): each maps ``(image, label)`` to a new pair,
where ``label`` is a NumPy array of objects, one row ``[class, xmin, ymin, xmax, ymax, ...]``
with corners relative to the image (0..1). MXNet 1.9 semantics, including its random
draws from Python's ``random`` module. ``ImageDetIter`` lives in sparsym.io.det_iter.
"""
from __future__ import annotations

import logging
import random
import warnings
from math import sqrt
from numbers import Number

import numpy as np

from .. import ndarray as nd
from .augmenters import (
    Augmenter,
    CastAug,
    ColorJitterAug,
    ColorNormalizeAug,
    ForceResizeAug,
    HueJitterAug,
    LightingAug,
    RandomGrayAug,
    ResizeAug,
)
from .image import copyMakeBorder, fixed_crop

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter"]


class DetAugmenter:
    """Base class of detection augmenters: ``aug(src, label) -> (src, label)``."""

    # same keyword bookkeeping and JSON form as the image augmenters
    __init__ = Augmenter.__init__
    dumps = Augmenter.dumps

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """Apply an image-only :class:`~sparsym.image.Augmenter`; the label is unchanged."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError("Borrowing from invalid Augmenter")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Apply one augmenter of ``aug_list`` picked at random, or none with ``skip_prob``."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError("Allow DetAugmenter in list only")
        self.aug_list = list(aug_list)
        self.skip_prob = skip_prob if self.aug_list else 1

    def dumps(self):
        return [self.__class__.__name__.lower(), [a.dumps() for a in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Mirror the image and the boxes left-right with probability ``p``."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            xmin = 1.0 - label[:, 3]
            label[:, 3] = 1.0 - label[:, 1]
            label[:, 1] = xmin
        return src, label


def _pair(value, what, cls):
    """A (low, high) range from a range or one number (a fixed value)."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if not isinstance(value, Number):
        raise TypeError(f"{cls}: {what} must be a number or a (min, max) pair, got {value!r}")
    logging.info("Using fixed %s: %s in %s", what, value, cls)
    return (value, value)


def _ranges_ok(cls, aspect_ratio_range, area_range, area_floor):
    """Whether the ranges are usable (the area's upper bound above ``area_floor``); MXNet
    warns and disables the augmenter otherwise."""
    if area_range[1] <= area_floor or area_range[0] > area_range[1]:
        warnings.warn(f"Skip {cls} due to invalid area_range: {area_range}", stacklevel=3)
        return False
    if aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
        warnings.warn(f"Skip {cls} due to invalid aspect_ratio_range: {aspect_ratio_range}",
                      stacklevel=3)
        return False
    return True


def _window_draws(aug, height, width):
    """MXNet's window search shared by the crop and pad augmenters: up to max_attempts
    draws of (ratio, h from the smallest area, h from the largest area, min area, max
    area); nothing when the augmenter is disabled or the image empty."""
    if not aug.enabled or height <= 0 or width <= 0:
        return
    min_area = aug.area_range[0] * height * width
    max_area = aug.area_range[1] * height * width
    for _ in range(aug.max_attempts):
        ratio = random.uniform(*aug.aspect_ratio_range)
        if ratio <= 0:
            continue
        yield (ratio, int(round(sqrt(min_area / ratio))), int(round(sqrt(max_area / ratio))),
               min_area, max_area)


def _areas(boxes):
    """Areas of (xmin, ymin, xmax, ymax) rows (empty boxes: 0)."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


class DetRandomCropAug(DetAugmenter):
    """Crop a random window that covers more than ``min_object_covered`` of every object it
    touches; objects left with less than ``min_eject_coverage`` of their area are dropped,
    the others clipped to the window.

    Parameters
    ----------
    min_object_covered : float, default 0.1
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
        Window width / height.
    area_range : (float, float) or float, default (0.05, 1.0)
        Window area as a fraction of the image's.
    min_eject_coverage : float, default 0.3
    max_attempts : int, default 50
        Windows drawn before giving up (the image is then left as it is).
    """

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _pair(aspect_ratio_range, "aspect ratio", "DetRandomCropAug")
        area_range = _pair(area_range, "area range", "DetRandomCropAug")
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = _ranges_ok("DetRandomCropAug", aspect_ratio_range, area_range, 0.0)

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _covers_enough(self, label, box, width, height):
        """Whether the window ``box`` (pixels) covers every object it touches enough."""
        x0, y0, x1, y1 = box
        if (x1 - x0) * (y1 - y0) < 2:
            return False
        areas = _areas(label[:, 1:5])
        objs = label[areas * width * height > 2, 1:5]
        if not len(objs):
            return False
        win = np.array([x0 / width, y0 / height, x1 / width, y1 / height])
        inter = np.concatenate([np.maximum(objs[:, :2], win[:2]),
                                np.minimum(objs[:, 2:], win[2:])], axis=1)
        cover = _areas(inter) / _areas(objs)
        cover = cover[cover > 0]
        return cover.size > 0 and cover.min() > self.min_object_covered

    def _update_labels(self, label, box, height, width):
        """Boxes relative to the window (x, y, w, h), clipped; None if none survives."""
        x, y, w, h = box[0] / width, box[1] / height, box[2] / width, box[3] / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - y) / h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _areas(out[:, 1:5]) * w * h / _areas(label[:, 1:5])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (coverage > self.min_eject_coverage)
        return out[keep] if keep.any() else None

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new label) of an accepted window, or () after max_attempts."""
        for ratio, h, max_h, min_area, max_area in _window_draws(self, height, width):
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers_enough(label, (x, y, x + w, y + h), width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``.

    Parameters
    ----------
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
    area_range : (float, float) or float, default (1.0, 3.0)
        Canvas area as a multiple of the image's (the upper bound must exceed 1).
    max_attempts : int, default 50
    pad_val : tuple of int, default (128, 128, 128)
    """

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            if not isinstance(pad_val, Number):
                raise TypeError(f"DetRandomPadAug: pad_val must be numbers, got {pad_val!r}")
            pad_val = (pad_val,)
        aspect_ratio_range = _pair(aspect_ratio_range, "aspect ratio", "DetRandomPadAug")
        area_range = _pair(area_range, "area range", "DetRandomPadAug")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = _ranges_ok("DetRandomPadAug", aspect_ratio_range, area_range, 1.0)

    def __call__(self, src, label):
        height, width = src.shape[0], src.shape[1]
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = tuple(float(v) for v in self.pad_val)
            if len(values) == 1:
                values = values * src.shape[2]
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 0, values=values)
        return src, label

    @staticmethod
    def _update_labels(label, box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + box[0]) / box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + box[1]) / box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new label) of the canvas, or () when no draw pads enough."""
        for ratio, h, max_h, _, _ in _window_draws(self, height, width):
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = min(max(h, height), max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue  # a marginal pad does not help
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),  # noqa: N802
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A :class:`DetRandomSelectAug` over several :class:`DetRandomCropAug`: each parameter
    is one value or a list (one per crop augmenter; length-1 lists are repeated)."""
    params = [p if isinstance(p, list) else [p] for p in
              (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
               max_attempts)]
    num = max(len(p) for p in params)
    for k, p in enumerate(params):
        if len(p) != num:
            if len(p) != 1:
                raise ValueError("CreateMultiRandCropAugmenter: parameter lists must have "
                                 f"one length or length 1, got lengths {[len(q) for q in params]}")
            params[k] = p * num
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,  # noqa: N802
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2,
                       min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                       area_range=(0.05, 3.0), min_eject_coverage=0.3, max_attempts=50,
                       pad_val=(127, 127, 127)):
    """MXNet's default detection pipeline: optional resize, random crop (probability
    ``rand_crop``), mirror, random pad (probability ``rand_pad``), a forced resize to
    ``data_shape`` (C, H, W), float32, colour jitter, PCA lighting, gray, normalisation
    (``mean``/``std`` True: ImageNet's)."""
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                    area_range, min_eject_coverage,
                                                    max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:  # padding as late as possible: less to compute on
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                           [-0.5836, -0.6948, 0.4203]])
        auglist.append(DetBorrowAug(LightingAug(pca_noise, eigval, eigvec)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = np.array([123.68, 116.28, 103.53]) if mean is True else mean
    std = np.array([58.395, 57.12, 57.375]) if std is True else std
    for what, v in (("mean", mean), ("std", std)):
        if v is not None and not (isinstance(v, np.ndarray) and v.shape[0] in (1, 3)):
            raise ValueError(f"CreateDetAugmenter: {what} must be True or an array of 1 or 3 "
                             f"values, got {v!r}")
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


# MXNet defines ImageDetIter in this module; it lives with the other iterators in
# sparsym/io/det_iter.py (built on this module), which installs it here when imported
_INSTALLED: dict = {}


def __getattr__(name):
    if name == "ImageDetIter" and name in _INSTALLED:
        return _INSTALLED[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
