"""``mx.gluon.data.vision``: MNIST, FashionMNIST, CIFAR10/100, ImageRecordDataset,
ImageFolderDataset (datasets.py) and the image transforms (transforms.py)."""
from . import datasets  # noqa: F401
from . import transforms  # noqa: F401
from .datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST,  # noqa: F401
                       ImageFolderDataset, ImageRecordDataset)
