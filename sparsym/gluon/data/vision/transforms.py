"""Image transforms of ``mx.gluon.data.vision.transforms`` (MXNet 1.9.1's set): Blocks and
HybridBlocks over the ``mx.nd.image`` operators and ``mx.image``'s functions.

Images are (H, W, C) before ``ToTensor`` and (C, H, W) after; ``ToTensor``, ``Normalize``,
``Resize``, ``CropResize`` and the flips also take batches (N, H, W, C) / (N, C, H, W).

Examples
--------
>>> import sparsym as mx
>>> from sparsym.gluon.data.vision import transforms
>>> t = transforms.Compose([transforms.Resize(8), transforms.CenterCrop(6),
...                         transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
>>> t(mx.nd.zeros((10, 12, 3), dtype='uint8')).shape
(3, 6, 6)
"""
from __future__ import annotations

import random
from numbers import Number

import numpy as np

from .... import image
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation",
           "RandomResizedCrop", "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply"]


class Compose(Sequential):
    """Apply transforms in sequence; runs of consecutive HybridBlocks are grouped into one
    hybridized HybridSequential, as in MXNet.

    Parameters
    ----------
    transforms : list of Block
    """

    def __init__(self, transforms):
        super().__init__()
        run = []
        for t in list(transforms) + [None]:
            if isinstance(t, HybridBlock):
                run.append(t)
                continue
            if len(run) == 1:
                self.add(run[0])
            elif len(run) > 1:
                seq = HybridSequential()
                for h in run:
                    seq.add(h)
                seq.hybridize()
                self.add(seq)
            run = []
            if t is not None:
                self.add(t)


class Cast(HybridBlock):
    """Cast the input to ``dtype`` (default 'float32')."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """Image (H, W, C) or batch (N, H, W, C) in [0, 255] -> float32 (C, H, W) / (N, C, H, W)
    in [0, 1]."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """Normalize a tensor (C, H, W) or (N, C, H, W): ``(x[c] - mean[c]) / std[c]``.

    Parameters
    ----------
    mean, std : float or tuple of float
        One value for all channels, or one per channel.
    """

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


def _need_float32(x):
    if x.dtype != np.float32:
        raise TypeError("This transformation only supports float32. Consider calling it after "
                        "ToTensor")


class Rotate(Block):
    """Rotate a float32 tensor (C, H, W) or batch by ``rotation_degrees`` (see
    ``mx.image.imrotate``)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _need_float32(x)
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate a float32 tensor (C, H, W) or batch by an angle drawn from ``angle_limits``
    (lower, upper), with probability ``rotate_with_proba``."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        _need_float32(x)
        return image.random_rotate(x, *self._args)


def _pair(size):
    return (size, size) if isinstance(size, Number) else size


class RandomResizedCrop(Block):
    """Crop a random area (``scale`` of the image) with a random aspect ratio (``ratio``),
    then resize it to ``size`` (w, h); input (H, W, C).

    Parameters
    ----------
    size : int or tuple of (W, H)
    scale : tuple of two floats, default (0.08, 1.0)
    ratio : tuple of two floats, default (3/4, 4/3)
    interpolation : int, default 1 (bilinear)
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crop the window (x, y, width, height) of an image (H, W, C) or batch, then resize it
    to ``size`` (w, h) when given.

    Parameters
    ----------
    x, y, width, height : int
    size : int or tuple of (w, h), optional
    interpolation : int, optional (bilinear)
    """

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y = x, y
        self._width, self._height = width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


class CenterCrop(Block):
    """Crop the centre of an image (H, W, C) to ``size`` (w, h), scaling the window down to
    fit (and resizing back) when the image is smaller.

    Parameters
    ----------
    size : int or tuple of (W, H)
    interpolation : int, default 1
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resize an image (H, W, C) or batch (N, H, W, C) to ``size``.

    Parameters
    ----------
    size : int or tuple of (W, H)
        One int: both sides, or the short side when ``keep_ratio``.
    keep_ratio : bool, default False
    interpolation : int, default 1 (bilinear; 0 nearest, 2 bicubic, 3 area, 4 Lanczos-4)
    """

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(HybridBlock):
    """Flip an image left to right with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip an image top to bottom with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _Jitter(HybridBlock):
    """A factor drawn from [max(0, 1 - amount), 1 + amount] for ``F.image.<op>``."""

    _op = ""

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_Jitter):
    """Scale the brightness of an image (H, W, C) by a factor drawn from
    [max(0, 1 - brightness), 1 + brightness]."""

    _op = "random_brightness"

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_Jitter):
    """Scale the contrast of an image (H, W, C) by a factor drawn from
    [max(0, 1 - contrast), 1 + contrast]."""

    _op = "random_contrast"

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_Jitter):
    """Scale the saturation of an image (H, W, C) by a factor drawn from
    [max(0, 1 - saturation), 1 + saturation]."""

    _op = "random_saturation"

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_Jitter):
    """Shift the hue of an image (H, W, C) by factor * 360 degrees, the factor drawn from
    [max(0, 1 - hue), 1 + hue] (MXNet's rule)."""

    _op = "random_hue"

    def __init__(self, hue):
        super().__init__(hue)


class RandomColorJitter(HybridBlock):
    """Jitter brightness, contrast, saturation and hue of an image (H, W, C) in a random
    order (see ``mx.nd.image.random_color_jitter``)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """Add AlexNet's PCA lighting noise with alphas drawn from N(0, ``alpha``) to an RGB
    image (H, W, 3)."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


class RandomApply(Sequential):
    """Apply ``transforms`` (a Block) with probability ``p`` (Python's ``random``).

    Parameters
    ----------
    transforms : Block
    p : float, default 0.5
    """

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)
