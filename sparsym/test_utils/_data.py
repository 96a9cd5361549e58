"""Environment, data and download helpers of mx.test_utils."""
from __future__ import annotations

import bz2
import contextlib
import gzip
import logging
import os
import struct
import sys
import zipfile

import numpy as np

from ..io import DataIter

_MODEL_URL = "http://data.mxnet.io/models/"
_MODELS = {  # MXNet's default download_model table: name -> (symbol path, params path)
    "imagenet1k-inception-bn": "imagenet/inception-bn/Inception-BN-{}",
    "imagenet1k-resnet-18": "imagenet/resnet/18-layers/resnet-18-{}",
    "imagenet1k-resnet-34": "imagenet/resnet/34-layers/resnet-34-{}",
    "imagenet1k-resnet-50": "imagenet/resnet/50-layers/resnet-50-{}",
    "imagenet1k-resnet-101": "imagenet/resnet/101-layers/resnet-101-{}",
    "imagenet1k-resnet-152": "imagenet/resnet/152-layers/resnet-152-{}",
    "imagenet1k-resnext-50": "imagenet/resnext/50-layers/resnext-50-{}",
    "imagenet1k-resnext-101": "imagenet/resnext/101-layers/resnext-101-{}",
    "imagenet1k-resnext-101-64x4d": "imagenet/resnext/101-layers/resnext-101-64x4d-{}",
    "imagenet11k-resnet-152": "imagenet-11k/resnet-152/resnet-152-{}",
    "imagenet11k-place365ch-resnet-152": "imagenet-11k-place365-ch/resnet-152-{}",
    "imagenet11k-place365ch-resnet-50": "imagenet-11k-place365-ch/resnet-50-{}",
}


def _default_model_info():
    info = {}
    for name, path in _MODELS.items():
        params = "0126.params" if "inception-bn" in path else "0000.params"
        info[name] = {"symbol": _MODEL_URL + path.format("symbol.json"),
                      "params": _MODEL_URL + path.format(params)}
    return info


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the duration of a ``with`` block.

    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of None
    unsets the variable. The previous values are restored on exit, also after an error.

    Examples
    --------
    >>> import os
    >>> from sparsym.test_utils import environment
    >>> with environment('MXNET_STORAGE_FALLBACK_LOG_VERBOSE', '0'):
    ...     os.environ['MXNET_STORAGE_FALLBACK_LOG_VERBOSE']
    '0'
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env = args[0]
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        env = {args[0]: args[1]}

    def apply(values):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    snapshot = {k: os.environ.get(k) for k in env}
    apply(env)
    try:
        yield
    finally:
        apply(snapshot)


@contextlib.contextmanager
def discard_stderr():
    """Send error output to /dev/null inside the block: file descriptor 2 (C-level
    writes) and, when it is another descriptor, the one behind ``sys.stderr``."""
    fds = {2}
    try:
        fds.add(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # an in-memory sys.stderr
        pass
    sys.stderr.flush()
    with open(os.devnull, "w") as bit_bucket:
        saved = {fd: os.dup(fd) for fd in fds}
        try:
            for fd in fds:
                os.dup2(bit_bucket.fileno(), fd)
            yield
        finally:
            sys.stderr.flush()
            for fd, old in saved.items():
                os.dup2(old, fd)
                os.close(old)


class DummyIter(DataIter):
    """An iterator that returns the first batch of ``real_iter`` forever (speed tests).

    Parameters
    ----------
    real_iter : DataIter
    """

    def __init__(self, real_iter):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator; never raises StopIteration."""
        return self.the_batch

    def __next__(self):
        return self.next()


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` to ``fname`` (default: the URL's last part) in ``dirname``.

    An existing file is kept unless ``overwrite``. Failed attempts (errors or a status
    other than 200) are retried ``retries`` times, then the last error is raised.

    Returns
    -------
    str
        The file name.
    """
    import requests
    assert retries >= 0, "Number of retries should be at least 0"
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        logging.info("%s exists, skipping download", fname)
        return fname
    while retries + 1 > 0:
        try:
            r = requests.get(url, stream=True, timeout=60)
            if r.status_code != 200:
                raise OSError(f"failed to open {url} (HTTP {r.status_code})")
            with open(fname, "wb") as f:
                for chunk in r.iter_content(chunk_size=1024):
                    if chunk:
                        f.write(chunk)
            break
        except Exception:
            retries -= 1
            if retries <= 0:
                raise
            print("download failed, retrying, {} attempt{} left".format(
                retries, "s" if retries > 1 else ""))
    logging.info("downloaded %s into %s successfully", url, fname)
    return fname


def download_model(model_name, dst_dir="./", meta_info=None):
    """Download ``model_name``'s symbol and params; returns (path prefix, 0), or
    (None, 0) for an unknown model."""
    meta_info = dict(_default_model_info() if meta_info is None else meta_info)
    if model_name not in meta_info:
        return (None, 0)
    os.makedirs(dst_dir, exist_ok=True)
    meta = dict(meta_info[model_name])
    assert "symbol" in meta, "missing symbol url"
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    assert "params" in meta, "mssing parameter file url"
    download(meta["params"], prefix + "-0000.params")
    return (prefix, 0)


def _read_mnist_gz(label_url, image_url):
    with gzip.open(download(label_url)) as f:
        struct.unpack(">II", f.read(8))
        label = np.frombuffer(f.read(), dtype=np.int8)
    with gzip.open(download(image_url), "rb") as f:
        _, _, rows, cols = struct.unpack(">IIII", f.read(16))
        image = np.frombuffer(f.read(), dtype=np.uint8).reshape(len(label), rows, cols)
    return label, image.reshape(image.shape[0], 1, 28, 28).astype(np.float32) / 255


def get_mnist():
    """Download MNIST; a dict of train_data, train_label, test_data, test_label."""
    path = "http://data.mxnet.io/data/mnist/"
    train_lbl, train_img = _read_mnist_gz(path + "train-labels-idx1-ubyte.gz",
                                          path + "train-images-idx3-ubyte.gz")
    test_lbl, test_img = _read_mnist_gz(path + "t10k-labels-idx1-ubyte.gz",
                                        path + "t10k-images-idx3-ubyte.gz")
    return {"train_data": train_img, "train_label": train_lbl,
            "test_data": test_img, "test_label": test_lbl}


def get_mnist_pkl():
    """Download data/mnist.pkl.gz (not read here: sparsym never unpickles)."""
    os.makedirs("data", exist_ok=True)
    if not os.path.exists("data/mnist.pkl.gz"):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _fetch_zip(url, wanted):
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(p) for p in wanted):
        with zipfile.ZipFile(download(url, dirname="data")) as zf:
            zf.extractall("data")


def get_mnist_ubyte():
    """Download and unpack the MNIST ubyte files into ./data."""
    _fetch_zip("http://data.mxnet.io/mxnet/data/mnist.zip",
               ["data/train-images-idx3-ubyte", "data/train-labels-idx1-ubyte",
                "data/t10k-images-idx3-ubyte", "data/t10k-labels-idx1-ubyte"])


def get_cifar10():
    """Download and unpack CIFAR-10 (RecordIO) into ./data/cifar."""
    _fetch_zip("http://data.mxnet.io/mxnet/data/cifar10.zip",
               ["data/cifar/train.rec", "data/cifar/test.rec", "data/cifar/train.lst",
                "data/cifar/test.lst"])


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, val) MNISTIter over ./data's MNIST ubyte files (downloaded if missing)."""
    from .. import io
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = dict(input_shape=input_shape, batch_size=batch_size, flat=flat,
                  num_parts=num_parts, part_index=part_index)
    train = io.MNISTIter(image="data/train-images-idx3-ubyte",
                         label="data/train-labels-idx1-ubyte", shuffle=True, **common)
    val = io.MNISTIter(image="data/t10k-images-idx3-ubyte",
                       label="data/t10k-labels-idx1-ubyte", **common)
    return train, val


def get_zip_data(data_dir, url, data_origin_name):
    """Download ``url`` into ``data_dir`` and extract it, unless already there."""
    origin = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(origin):
        download(url, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(origin) as zf:
            zf.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download a .bz2 file into ``data_dir`` and decompress it to ``data_name``."""
    data_name = os.path.join(data_dir, data_name)
    origin = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(data_name):
        download(url, fname=data_origin_name, dirname=data_dir, overwrite=False)
        with bz2.BZ2File(origin, "rb") as src, open(data_name, "wb") as dst:
            for line in src:
                dst.write(line)
        os.remove(origin)


def get_im2rec_path(home_env="MXNET_HOME"):
    """Path of tools/im2rec.py under $MXNET_HOME or the package; IOError when absent."""
    import sparsym
    root = os.environ.get(home_env, os.path.dirname(sparsym.__file__))
    for path in (os.path.join(root, "tools", "im2rec.py"),
                 os.path.join(root, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(path):
            return path
    raise OSError("Could not find path to tools/im2rec.py")
