"""mx.gluon.data.vision datasets read from tiny files in the real formats (no network)."""
from __future__ import annotations

import gzip
import io
import os
import struct
import tarfile

import numpy as np
import pytest

import sparsym as mx
from sparsym.gluon.data import vision
from sparsym.gluon.utils import DownloadError


def _write_mnist(root, prefix, images, labels, gz=True):
    os.makedirs(root, exist_ok=True)
    img = struct.pack(">IIII", 0x803, len(images), 28, 28) + images.tobytes()
    lab = struct.pack(">II", 0x801, len(labels)) + labels.tobytes()
    for name, raw in ((f"{prefix}-images-idx3-ubyte", img), (f"{prefix}-labels-idx1-ubyte", lab)):
        if gz:
            with gzip.open(os.path.join(root, name + ".gz"), "wb") as f:
                f.write(raw)
        else:
            with open(os.path.join(root, name), "wb") as f:
                f.write(raw)


def _mnist_arrays(n, seed):
    rng = np.random.RandomState(seed)
    return rng.randint(0, 256, (n, 28, 28)).astype(np.uint8), rng.randint(0, 10, n).astype(np.uint8)


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_reads_idx_files(tmp_path, cls):
    images, labels = _mnist_arrays(5, 0)
    _write_mnist(tmp_path, "train", images, labels)
    _write_mnist(tmp_path, "t10k", images[:2], labels[:2], gz=False)
    ds = cls(root=str(tmp_path))
    assert len(ds) == 5
    img, lab = ds[3]
    assert isinstance(img, mx.nd.NDArray) and img.shape == (28, 28, 1) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], images[3])
    assert lab == labels[3] and lab.dtype == np.int32
    test = cls(root=str(tmp_path), train=False)
    assert len(test) == 2
    np.testing.assert_array_equal(test[1][0].asnumpy()[:, :, 0], images[1])


def test_mnist_transform_and_loader(tmp_path):
    images, labels = _mnist_arrays(6, 1)
    _write_mnist(tmp_path, "train", images, labels)
    ds = vision.MNIST(root=str(tmp_path), transform=lambda d, l: (d.astype("float32") / 255, l))
    assert ds[0][0].dtype == np.float32
    t = vision.transforms.ToTensor()
    loader = mx.gluon.data.DataLoader(vision.MNIST(root=str(tmp_path)).transform_first(t),
                                      batch_size=4)
    data, label = next(iter(loader))
    assert data.shape == (4, 1, 28, 28) and label.shape == (4,)
    np.testing.assert_array_equal(label.asnumpy(), labels[:4])


def test_missing_file_names_file_url_and_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")
    with pytest.raises(DownloadError) as err:
        vision.MNIST(root=str(tmp_path / "none"))
    msg = str(err.value)
    assert "t10k" not in msg and "train-labels-idx1-ubyte.gz" in msg
    assert "http://127.0.0.1:9/gluon/dataset/mnist/train-labels-idx1-ubyte.gz" in msg
    assert str(tmp_path / "none") in msg


def test_default_root_honours_mxnet_home(tmp_path, monkeypatch):
    import importlib
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    mod = importlib.reload(vision.datasets)
    try:
        images, labels = _mnist_arrays(2, 2)
        _write_mnist(tmp_path / "datasets" / "mnist", "train", images, labels)
        assert len(mod.MNIST()) == 2
    finally:
        monkeypatch.delenv("MXNET_HOME")
        importlib.reload(vision.datasets)


def test_bad_idx_file_is_a_clear_error(tmp_path):
    images, labels = _mnist_arrays(3, 0)
    _write_mnist(tmp_path, "train", images, labels)
    with gzip.open(tmp_path / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 0x801, 7) + labels.tobytes())
    with pytest.raises(ValueError, match="header announces"):
        vision.MNIST(root=str(tmp_path))


def _cifar_records(n, n_labels, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, (n, n_labels)).astype(np.uint8)
    chw = rng.randint(0, 256, (n, 3, 32, 32)).astype(np.uint8)
    return np.concatenate([labels, chw.reshape(n, -1)], axis=1).tobytes(), labels, chw


def test_cifar10_binary_batches(tmp_path):
    chws, labs = [], []
    for i, name in enumerate(["data_batch_%d.bin" % k for k in range(1, 6)] + ["test_batch.bin"]):
        raw, lab, chw = _cifar_records(2, 1, i)
        (tmp_path / name).write_bytes(raw)
        chws.append(chw)
        labs.append(lab[:, 0])
    ds = vision.CIFAR10(root=str(tmp_path))
    assert len(ds) == 10
    img, lab = ds[3]
    assert img.shape == (32, 32, 3) and img.dtype == np.uint8 and lab.dtype == np.int32
    np.testing.assert_array_equal(img.asnumpy(), chws[1][1].transpose(1, 2, 0))
    assert lab == labs[1][1]
    test = vision.CIFAR10(root=str(tmp_path), train=False)
    np.testing.assert_array_equal(test[0][0].asnumpy(), chws[5][0].transpose(1, 2, 0))


def test_cifar100_from_archive_fine_and_coarse(tmp_path):
    raw_train, lab_train, chw = _cifar_records(3, 2, 5)
    raw_test, _, _ = _cifar_records(1, 2, 6)
    with tarfile.open(tmp_path / "cifar-100-binary.tar.gz", "w:gz") as tar:
        for name, raw in (("train.bin", raw_train), ("test.bin", raw_test)):
            info = tarfile.TarInfo("cifar-100-binary/" + name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    coarse = vision.CIFAR100(root=str(tmp_path))
    fine = vision.CIFAR100(root=str(tmp_path), fine_label=True)
    assert [coarse[i][1] for i in range(3)] == list(lab_train[:, 0])
    assert [fine[i][1] for i in range(3)] == list(lab_train[:, 1])
    np.testing.assert_array_equal(fine[2][0].asnumpy(), chw[2].transpose(1, 2, 0))
    assert len(vision.CIFAR100(root=str(tmp_path), train=False)) == 1


def test_cifar_truncated_batch(tmp_path):
    raw, _, _ = _cifar_records(2, 1, 0)
    for name in ["data_batch_%d.bin" % k for k in range(1, 6)] + ["test_batch.bin"]:
        (tmp_path / name).write_bytes(raw[:-5])
    with pytest.raises(ValueError, match="whole number"):
        vision.CIFAR10(root=str(tmp_path))


def _png(arr):
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_image_folder_dataset(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.RandomState(0)
    imgs = {}
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for k in range(2):
            arr = rng.randint(0, 256, (5, 7, 3)).astype(np.uint8)
            (tmp_path / cls / f"{k}.png").write_bytes(_png(arr))
            imgs[(cls, k)] = arr
    (tmp_path / "dog" / "notes.txt").write_text("x")
    (tmp_path / "README").write_text("x")
    with pytest.warns(UserWarning):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 4
    img, lab = ds[2]
    assert lab == 1 and img.shape == (5, 7, 3) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy(), imgs[("dog", 0)])
    with pytest.warns(UserWarning):
        gray = vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0]
    assert gray.shape == (5, 7, 1)


def test_image_record_dataset(tmp_path):
    pytest.importorskip("PIL")
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    arrs = []
    for i in range(3):
        arr = np.random.RandomState(i).randint(0, 256, (4, 6, 3)).astype(np.uint8)
        arrs.append(arr)
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), _png(arr)))
    w.close()
    ds = vision.ImageRecordDataset(rec)
    assert len(ds) == 3
    img, lab = ds[1]
    np.testing.assert_array_equal(img.asnumpy(), arrs[1])
    assert lab == 1.0
    t = vision.ImageRecordDataset(rec, transform=lambda d, l: (d.shape, l + 1))
    assert t[2] == ((4, 6, 3), 3.0)


def test_decoding_without_pillow_says_pip_install(tmp_path, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("no PIL")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_pil)
    with pytest.raises(NotImplementedError, match="pip install pillow"):
        mx.image.imdecode(b"\x89PNG....")
