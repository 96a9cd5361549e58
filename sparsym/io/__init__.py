"""Data iterators (mx.io)."""
from .io import DataBatch, DataDesc, DataIter, MXDataIter, NDArrayIter  # noqa: F401
from .text_iters import CSVIter, LibSVMIter  # noqa: F401
from .mnist import MNISTIter  # noqa: F401
from .wrappers import PrefetchingIter, ResizeIter  # noqa: F401
from .image_iters import (ImageDetRecordIter, ImageRecordInt8Iter, ImageRecordIter,  # noqa: F401
                          ImageRecordIter_v1, ImageRecordUInt8Iter, ImageRecordUInt8Iter_v1)
from . import io, utils  # noqa: F401
from . import det_iter  # noqa: F401  (installs mx.image.detection.ImageDetIter)
