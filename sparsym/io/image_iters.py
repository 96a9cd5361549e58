"""MXNet's image record iterators, which need an image codec and augmenters in C++.

sparsym has no image pipeline: each name exists so that MXNet code imports, and raises a
NotImplementedError naming itself when called. ``mx.recordio`` reads and writes the
``.rec`` files themselves (and decodes images with Pillow when it is installed).
"""
from __future__ import annotations

__all__ = ["ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter",
           "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter", "ImageDetRecordIter"]


def _unsupported(name):
    def creator(*args, **kwargs):
        raise NotImplementedError(
            f"mx.io.{name} is not supported: sparsym has no image decoding and augmentation "
            "pipeline. Read the .rec file with mx.recordio.MXIndexedRecordIO (unpack_img "
            "decodes with Pillow) and feed arrays through mx.io.NDArrayIter.")

    creator.__name__ = creator.__qualname__ = name
    creator.__doc__ = (f"MXNet's ``{name}`` (image records decoded and augmented in C++): "
                       "not supported here, raises NotImplementedError.")
    return creator


ImageRecordIter = _unsupported("ImageRecordIter")
ImageRecordIter_v1 = _unsupported("ImageRecordIter_v1")
ImageRecordUInt8Iter = _unsupported("ImageRecordUInt8Iter")
ImageRecordUInt8Iter_v1 = _unsupported("ImageRecordUInt8Iter_v1")
ImageRecordInt8Iter = _unsupported("ImageRecordInt8Iter")
ImageDetRecordIter = _unsupported("ImageDetRecordIter")
