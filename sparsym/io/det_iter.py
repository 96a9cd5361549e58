"""``mx.image.ImageDetIter``: object-detection batches (images and padded box labels)."""
from __future__ import annotations

import logging

import numpy as np

from .. import ndarray as nd
from ..image import detection as _detection
from ..image.detection import CreateDetAugmenter
from .image_iters import ImageIter
from .io import DataDesc

__all__ = ["ImageDetIter"]


class ImageDetIter(ImageIter):
    """Images with object labels, as MXNet's ImageDetIter.

    A raw label is ``[header_width, object_width, header..., objects...]``; each object
    is ``object_width`` values ``[class, xmin, ymin, xmax, ymax, ...]`` (corners relative
    to the image). Batches carry labels shaped (batch, max objects, object_width), rows
    past an image's objects filled with -1; the maximum is found by a pass over the data
    at construction (:meth:`reshape` and :meth:`sync_label_shape` change it).

    Parameters
    ----------
    batch_size, data_shape, path_imgrec, path_imglist, path_root, path_imgidx, shuffle,
    part_index, num_parts, imglist, data_name, last_batch_handle
        As :class:`~sparsym.image.ImageIter`'s.
    aug_list : list of DetAugmenter, optional
        Default ``CreateDetAugmenter(data_shape, **kwargs)``.
    label_name : str, default 'label'
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (batch_size,) + self.label_shape)]

    @staticmethod
    def _parse_label(label):
        """Objects (n, object_width) of a raw label, boxes with no area dropped."""
        raw = (label.asnumpy() if isinstance(label, nd.NDArray)
               else np.asarray(label, dtype=np.float32)).ravel()
        if raw.size < 7:
            raise RuntimeError(f"Label shape is invalid: {raw.shape}")
        header, width = int(raw[0]), int(raw[1])
        if width <= 0 or (raw.size - header) % width != 0:
            raise RuntimeError(f"Label shape {raw.shape} inconsistent with annotation width "
                               f"{width}.")
        out = raw[header:].reshape(-1, width)
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])
        if not valid.any():
            raise RuntimeError("Encounter sample with no valid label.")
        return out[valid]

    @staticmethod
    def _check_valid_label(label):
        if label.ndim != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label} received.")
        # MXNet's np.logical_and(a, b, c) reads c as its output array: only the class
        # and the x extent count
        if not ((label[:, 0] >= 0) & (label[:, 3] > label[:, 1])).any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self):
        """(most objects in one image, object width), by one pass over the labels."""
        max_count, width = 0, 5
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                objs = self._parse_label(label)
                max_count, width = max(max_count, objs.shape[0]), objs.shape[1]
        except StopIteration:
            pass
        self.reset()
        return (max_count, width)

    def check_label_shape(self, label_shape):
        """Refuse fewer objects than the data has, or another object width."""
        if len(label_shape) != 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"Attempts to reduce label count from {self.label_shape[0]} to "
                             f"{label_shape[0]}, not allowed.")
        if label_shape[1] != self.provide_label[0].shape[2]:
            raise ValueError("label_shape object width inconsistent: "
                             f"{self.provide_label[0].shape[2]} vs {label_shape[1]}.")

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) and/or the label shape (objects, width)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [DataDesc(self.provide_data[0].name,
                                          (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [DataDesc(self.provide_label[0].name,
                                           (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` (another ImageDetIter, e.g. validation) the same
        label shape, the larger object count of the two; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise TypeError("Synchronize with invalid iterator.")
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise ValueError(f"object width mismatch: {mine[1]} vs {theirs[1]}")
        count = max(mine[0], theirs[0])
        if count > mine[0]:
            self.reshape(None, (count, mine[1]))
        if count > theirs[0]:
            it.reshape(None, (count, theirs[1]))
        if verbose and count > min(mine[0], theirs[0]):
            logging.info("Resized label_shape to (%d, %d).", count, mine[1])
        return it

    def augmentation_transform(self, data, label):
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def _new_label(self):
        """Rows past an image's objects stay -1."""
        return nd.full(self.provide_label[0].shape, -1)

    def _batchify(self, data, label, start=0):
        i = start
        try:
            while i < self.batch_size:
                raw, s = self.next_sample()
                img = self.imdecode(s)
                try:
                    if img.ndim == 0 or img.shape[0] == 0:
                        raise RuntimeError("Data shape is wrong")
                    img, objs = self.augmentation_transform(img, self._parse_label(raw))
                    self._check_valid_label(objs)
                except RuntimeError as err:
                    logging.debug("Invalid image, skipping: %s", err)
                    continue
                data[i] = self.postprocess_data(img)
                n = objs.shape[0]
                label[i][0:n] = nd.array(objs)
                if n < label[i].shape[0]:
                    label[i][n:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i


_detection._INSTALLED["ImageDetIter"] = ImageDetIter  # MXNet's mx.image.detection name
