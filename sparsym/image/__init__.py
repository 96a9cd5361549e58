"""``mx.image``: image functions and augmenters over NDArrays (sparsym/image/image.py)."""
from . import image  # noqa: F401
from .image import (center_crop, color_normalize, copyMakeBorder, fixed_crop,  # noqa: F401
                    imdecode, imread, imresize, imrotate, random_crop, random_rotate,
                    random_size_crop, resize_short, scale_down)
from . import augmenters  # noqa: F401
from .augmenters import (Augmenter, BrightnessJitterAug, CastAug, CenterCropAug,  # noqa: F401
                         ColorJitterAug, ColorNormalizeAug, ContrastJitterAug, CreateAugmenter,
                         ForceResizeAug, HorizontalFlipAug, HueJitterAug, LightingAug,
                         RandomCropAug, RandomGrayAug, RandomOrderAug, RandomSizedCropAug,
                         ResizeAug, SaturationJitterAug, SequentialAug)


from . import detection  # noqa: F401
from .detection import (CreateDetAugmenter, CreateMultiRandCropAugmenter,  # noqa: F401
                        DetAugmenter, DetBorrowAug, DetHorizontalFlipAug, DetRandomCropAug,
                        DetRandomPadAug, DetRandomSelectAug)


def __getattr__(name):
    # the iterators live with the other iterators in sparsym.io, which imports this package
    if name == "ImageIter":
        from ..io.image_iters import ImageIter
        return ImageIter
    if name == "ImageDetIter":
        from ..io.det_iter import ImageDetIter
        return ImageDetIter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
