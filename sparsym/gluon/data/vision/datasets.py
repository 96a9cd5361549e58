"""Vision datasets of ``mx.gluon.data.vision``: MNIST, FashionMNIST, CIFAR10, CIFAR100 (read
from their standard files under ``root``), ImageRecordDataset and ImageFolderDataset.

Items are ``(image, label)``: the image an NDArray (H, W, C) uint8, as MXNet 1.9.1 returns it;
the label a NumPy int32 scalar (MNIST, CIFAR), the record's float label (ImageRecordDataset)
or the class index (ImageFolderDataset). Files are parsed as raw bytes (idx and CIFAR's binary
batches): nothing is unpickled.

A missing file is downloaded from MXNet's repository when the machine has network access;
otherwise the error names the file, its URL and the folder to put it in. A file already in
place is read as it is (MXNet also checks its SHA-1 and fetches it again on a mismatch).
"""
from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings

import numpy as np

from .... import ndarray as nd
from .... import recordio
from ....base import MXNetError, data_dir
from ...utils import DownloadError, download
from .. import dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]


class DatasetFormatError(MXNetError, ValueError):
    """A dataset file whose bytes do not follow its format."""


def _repo_file_url(namespace, filename):
    """MXNet's URL of a dataset file: ``$MXNET_GLUON_REPO/gluon/dataset/<ns>/<file>``."""
    repo = os.environ.get("MXNET_GLUON_REPO",
                          "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    if not repo.endswith("/"):
        repo += "/"
    return f"{repo}gluon/dataset/{namespace}/{filename}"


def _fetch(root, namespace, filename, sha1):
    """The path of ``root/filename``, downloaded first when it is missing."""
    path = os.path.join(root, filename)
    if os.path.exists(path):
        return path
    url = _repo_file_url(namespace, filename)
    try:
        return download(url, path=root, sha1_hash=sha1, retries=1)
    except DownloadError as err:
        raise DownloadError(
            f"dataset file {filename!r} is not in {root} and could not be downloaded from "
            f"{url} ({err}). Download it on a machine with network access and put it in "
            f"{root} (or pass root=<folder holding it>)") from err


class _DownloadedDataset(dataset.Dataset):
    """Arrays read once from files under ``root``; items ``(data[i], label[i])``."""

    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._data = None
        self._label = None
        self._root = os.path.expanduser(root)
        os.makedirs(self._root, exist_ok=True)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError


def _read_maybe_gz(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def _read_idx(path, magic, ndim):
    """The array of an idx file (MNIST's big-endian format): ``magic`` 0x801 labels (1-D),
    0x803 images (3-D), unsigned bytes."""
    raw = _read_maybe_gz(path)
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise DatasetFormatError(f"{path}: {len(raw)} bytes, too short for an idx header")
    got_magic, *dims = struct.unpack(">" + "I" * (1 + ndim), raw[:head])
    if got_magic != magic:
        raise DatasetFormatError(f"{path}: idx magic number {got_magic:#x}, expected "
                                 f"{magic:#x}")
    count = int(np.prod(dims))
    if len(raw) - head != count:
        raise DatasetFormatError(f"{path}: header announces {dims} ({count} bytes), "
                                 f"{len(raw) - head} follow")
    return np.frombuffer(raw, np.uint8, offset=head).reshape(dims)


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: items (image NDArray (28, 28, 1) uint8, int32 label).

    Reads ``{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz`` (or the same names without
    ``.gz``) from ``root``.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/mnist
    train : bool, default True
        The training (60000) or the test (10000) set.
    transform : callable, default None
        ``transform(data, label) -> item``.
    """

    _namespace = "mnist"
    _files = {"train": (("train-images-idx3-ubyte.gz", "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d"),
                        ("train-labels-idx1-ubyte.gz", "2a80914081dc54586dbdf242f9805a6b8d2a15fc")),
              "test": (("t10k-images-idx3-ubyte.gz", "c3a25af1f52dad7f726cce8cacb138654b760d48"),
                       ("t10k-labels-idx1-ubyte.gz", "763e7fa3757d93b0cdec073cef058b2004252c17"))}

    def __init__(self, root=os.path.join(data_dir(), "datasets", "mnist"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _path(self, name, sha1):
        plain = os.path.join(self._root, name[:-3])
        if not os.path.exists(os.path.join(self._root, name)) and os.path.exists(plain):
            return plain  # the files as yann.lecun.com serves them once gunzipped
        return _fetch(self._root, self._namespace, name, sha1)

    def _get_data(self):
        (data_name, data_sha), (label_name, label_sha) = \
            self._files["train" if self._train else "test"]
        label = _read_idx(self._path(label_name, label_sha), 0x801, 1).astype(np.int32)
        data = _read_idx(self._path(data_name, data_sha), 0x803, 3)
        if len(data) != len(label):
            raise DatasetFormatError(f"{self._root}: {len(data)} images but {len(label)} "
                                     "labels")
        self._data = nd.array(data[:, :, :, None], dtype=np.uint8)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, MNIST's drop-in replacement: items (image NDArray
    (28, 28, 1) uint8, int32 label).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/fashion-mnist
    train : bool, default True
    transform : callable, default None
    """

    _namespace = "fashion-mnist"
    _files = {"train": (("train-images-idx3-ubyte.gz", "0cf37b0d40ed5169c6b3aba31069a9770ac9043d"),
                        ("train-labels-idx1-ubyte.gz", "236021d52f1e40852b06a4c3008d8de8aef1e40b")),
              "test": (("t10k-images-idx3-ubyte.gz", "626ed6a7c06dd17c0eec72fa3be1740f146a2863"),
                       ("t10k-labels-idx1-ubyte.gz", "17f9ab60e7257a1620f4ad76bbbaf857c3920701"))}

    def __init__(self, root=os.path.join(data_dir(), "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: items (image NDArray (32, 32, 3) uint8, int32 label).

    Reads the binary version's batches (``data_batch_1.bin`` ... ``data_batch_5.bin``,
    ``test_batch.bin``: records of 1 label byte + 3072 CHW pixel bytes) from ``root``, or
    extracts them from ``cifar-10-binary.tar.gz`` there. The Python (pickle) version is not
    read, as in MXNet.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar10
    train : bool, default True
    transform : callable, default None
    """

    _namespace = "cifar10"
    _archive = ("cifar-10-binary.tar.gz", "fab780a1e191a7eda0f345501ccd62d20f7ed891")
    _train_files = ("data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                    "data_batch_4.bin", "data_batch_5.bin")
    _test_files = ("test_batch.bin",)
    _n_labels = 1

    def __init__(self, root=os.path.join(data_dir(), "datasets", "cifar10"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self):
        return 0

    def _read_batch(self, path):
        raw = np.fromfile(path, dtype=np.uint8)
        rec = 3072 + self._n_labels
        if raw.size % rec:
            raise DatasetFormatError(f"{path}: {raw.size} bytes is not a whole number of "
                                     f"{rec}-byte records")
        raw = raw.reshape(-1, rec)
        images = raw[:, self._n_labels:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_column()].astype(np.int32)

    def _find(self, name):
        """``root/name``, or the file of that name anywhere under root (the archives hold a
        folder, e.g. ``cifar-10-batches-bin/``)."""
        direct = os.path.join(self._root, name)
        if os.path.exists(direct):
            return direct
        for dirpath, _, files in os.walk(self._root):
            if name in files:
                return os.path.join(dirpath, name)
        return None

    def _extract(self):
        archive = os.path.join(self._root, self._archive[0])
        if not os.path.exists(archive):
            archive = _fetch(self._root, self._namespace, *self._archive)
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if not (member.isfile() or member.isdir()) or member.name.startswith("/") \
                        or ".." in member.name.split("/"):
                    raise DatasetFormatError(f"{archive}: refusing to extract {member.name!r}")
            tar.extractall(self._root)

    def _get_data(self):
        names = self._train_files if self._train else self._test_files
        if any(self._find(n) is None for n in names):
            self._extract()
        missing = [n for n in names if self._find(n) is None]
        if missing:
            raise DatasetFormatError(f"{self._root}: {self._archive[0]} holds no {missing}")
        data, label = zip(*(self._read_batch(self._find(n)) for n in names))
        self._data = nd.array(np.concatenate(data), dtype=np.uint8)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100: items (image NDArray (32, 32, 3) uint8, int32 label), the coarse (20
    super-classes) or fine (100 classes) label.

    Reads ``train.bin`` / ``test.bin`` (records of coarse label, fine label, 3072 CHW pixel
    bytes) from ``root`` or from ``cifar-100-binary.tar.gz`` there.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar100
    fine_label : bool, default False
    train : bool, default True
    transform : callable, default None
    """

    _namespace = "cifar100"
    _archive = ("cifar-100-binary.tar.gz", "a0bb982c76b83111308126cc779a992fa506b90b")
    _train_files = ("train.bin",)
    _test_files = ("test.bin",)
    _n_labels = 2

    def __init__(self, root=os.path.join(data_dir(), "datasets", "cifar100"), fine_label=False,
                 train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self):
        return 1 if self._fine_label else 0


class ImageRecordDataset(dataset.RecordFileDataset):
    """Images and labels of a RecordIO file (``filename`` and its ``.idx`` index), decoded
    with Pillow: items (image NDArray (H, W, C) uint8, label).

    Parameters
    ----------
    filename : str
        The .rec file; its index is the same name ending in .idx.
    flag : {0, 1}, default 1
        0: grayscale (one channel); 1: RGB.
    transform : callable, default None
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        from .... import image
        header, img = recordio.unpack(super().__getitem__(idx))
        data = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(data, header.label)
        return data, header.label


class ImageFolderDataset(dataset.Dataset):
    """Images in class folders (``root/<class>/<image>``), decoded with Pillow: items
    (image NDArray (H, W, C) uint8, class index).

    Parameters
    ----------
    root : str
    flag : {0, 1}, default 1
        0: grayscale (one channel); 1: RGB.
    transform : callable, default None

    Attributes
    ----------
    synsets : list of str
        The class names, sorted; ``synsets[i]`` is label ``i``.
    items : list of (str, int)
        Every image file and its label.
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support "
                                  f"{', '.join(self._exts)}", stacklevel=3)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        from .... import image
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
