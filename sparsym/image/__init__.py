"""``mx.image``: image functions and augmenters over NDArrays (sparsym/image/image.py)."""
from . import image  # noqa: F401
from .image import (center_crop, color_normalize, copyMakeBorder, fixed_crop,  # noqa: F401
                    imdecode, imread, imresize, imrotate, random_crop, random_rotate,
                    random_size_crop, resize_short, scale_down)
