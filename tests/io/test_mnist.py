"""mx.io.MNISTIter over tiny idx-ubyte files written here (plain and gzip)."""
import gzip
import struct

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import FormatError, ParamError


def write_mnist(tmp_path, n=10, rows=4, cols=3, gz=False, seed=0):
    rs = np.random.RandomState(seed)
    img = rs.randint(0, 256, size=(n, rows, cols)).astype(np.uint8)
    lab = (np.arange(n) % 10).astype(np.uint8)
    opener = gzip.open if gz else open
    suffix = ".gz" if gz else ""
    ip, lp = tmp_path / ("img-idx3-ubyte" + suffix), tmp_path / ("lab-idx1-ubyte" + suffix)
    with opener(ip, "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, rows, cols) + img.tobytes())
    with opener(lp, "wb") as f:
        f.write(struct.pack(">II", 2049, n) + lab.tobytes())
    return str(ip), str(lp), img, lab


@pytest.mark.parametrize("gz", [False, True])
def test_batches_match_files(tmp_path, gz):
    ip, lp, img, lab = write_mnist(tmp_path, gz=gz)
    it = mx.io.MNISTIter(image=ip, label=lp, batch_size=3, shuffle=False, silent=True)
    assert isinstance(it, mx.io.MXDataIter)
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (3, 1, 4, 3)
    assert it.provide_label[0].name == "softmax_label" and it.provide_label[0].shape == (3,)
    batches = list(it)
    assert len(batches) == 3  # 10 images: the incomplete last batch is dropped, like MXNet
    for k, b in enumerate(batches):
        rows = slice(3 * k, 3 * k + 3)
        x = b.data[0].asnumpy()
        assert x.dtype == np.float32 and b.pad == 0
        np.testing.assert_array_equal(x[:, 0], img[rows] / np.float32(256))  # MXNet: 1/256
        np.testing.assert_array_equal(b.label[0].asnumpy(), lab[rows])
        np.testing.assert_array_equal(b.index, np.arange(10)[rows])


def test_flat_shuffle_seed_and_reset(tmp_path):
    ip, lp, img, lab = write_mnist(tmp_path)
    it = mx.io.MNISTIter(image=ip, label=lp, batch_size=4, flat=True, seed=3,
                         data_shape=(12,))  # unknown keywords are ignored, as in MXNet
    assert it.provide_data[0].shape == (4, 12)
    first = [b.label[0].asnumpy().tolist() for b in it]
    assert len(first) == 2 and len({x for b in first for x in b}) == 8
    it.reset()
    b = it.next()
    assert b.label[0].asnumpy().tolist() == first[0]  # the order is kept across epochs
    rows = b.index.astype(np.int64)
    np.testing.assert_array_equal(b.data[0].asnumpy(), img[rows].reshape(4, 12) / 256.0)
    other = mx.io.MNISTIter(image=ip, label=lp, batch_size=4, seed=4, silent=True)
    assert [x.label[0].asnumpy().tolist() for x in other] != first


def test_parts_and_named_outputs(tmp_path):
    ip, lp, _, _ = write_mnist(tmp_path)
    got = []
    for p in range(3):
        it = mx.io.MNISTIter(image=ip, label=lp, batch_size=1, shuffle=False, silent=True,
                             num_parts=3, part_index=p, data_name="x", label_name="y")
        assert it.provide_data[0].name == "x" and it.provide_label[0].name == "y"
        got.append([int(b.label[0].asscalar()) for b in it])
    assert got == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]
    it = mx.io.MNISTIter(image=ip, label=lp, batch_size=2, shuffle=False, silent=True)
    assert it.iter_next()
    assert it.getdata().shape == (2, 1, 4, 3) and it.getlabel().asnumpy().tolist() == [0, 1]
    assert it.getpad() == 0


def test_bad_input(tmp_path):
    ip, lp, _, _ = write_mnist(tmp_path)
    with pytest.raises(ParamError, match="batch_size"):
        mx.io.MNISTIter(image=ip, label=lp, batch_size=0)
    with pytest.raises(ParamError, match="shuffle"):
        mx.io.MNISTIter(image=ip, label=lp, shuffle="abc")
    with pytest.raises(ParamError, match="part_index"):
        mx.io.MNISTIter(image=ip, label=lp, num_parts=2, part_index=5)
    with pytest.raises(mx.MXNetError, match="larger than the number of images"):
        mx.io.MNISTIter(image=ip, label=lp, batch_size=11)
    with pytest.raises(mx.MXNetError, match="cannot open image file"):
        mx.io.MNISTIter(image=str(tmp_path / "none"), label=lp)
    with pytest.raises(FormatError, match="not an idx3-ubyte"):
        mx.io.MNISTIter(image=lp, label=lp)
    (tmp_path / "short").write_bytes(struct.pack(">IIII", 2051, 5, 4, 3) + b"\0" * 7)
    with pytest.raises(FormatError, match="truncated"):
        mx.io.MNISTIter(image=str(tmp_path / "short"), label=lp)
    (tmp_path / "lab9").write_bytes(struct.pack(">II", 2049, 9) + bytes(9))
    with pytest.raises(FormatError, match="10 images but"):
        mx.io.MNISTIter(image=ip, label=str(tmp_path / "lab9"))
    with pytest.raises(NotImplementedError, match="float64"):
        mx.io.MNISTIter(image=ip, label=lp, dtype="float64")


def test_mxnet_style_training_script(tmp_path):
    """An MXNet 1.x MNIST script (MLP, Module.fit on MNISTIter) runs unchanged."""
    n, side = 240, 6
    rs = np.random.RandomState(0)
    lab = rs.randint(0, 2, size=n).astype(np.uint8)
    img = rs.randint(0, 60, size=(n, side, side)).astype(np.uint8)
    img[lab == 1, :, : side // 2] += 150  # class 1: a bright left half
    with open(tmp_path / "train-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, side, side) + img.tobytes())
    with open(tmp_path / "train-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + lab.tobytes())
    train_iter = mx.io.MNISTIter(image=str(tmp_path / "train-images-idx3-ubyte"),
                                 label=str(tmp_path / "train-labels-idx1-ubyte"),
                                 batch_size=20, shuffle=True, flat=True, silent=True)
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data=data, num_hidden=16, name="fc1")
    act = mx.sym.Activation(data=fc1, act_type="relu")
    fc2 = mx.sym.FullyConnected(data=act, num_hidden=2, name="fc2")
    net = mx.sym.SoftmaxOutput(data=fc2, name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train_iter, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
            eval_metric="acc", num_epoch=4)
    score = dict(mod.score(train_iter, ["acc"]))
    assert score["accuracy"] > 0.95
