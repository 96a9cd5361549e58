"""mx.contrib's module aliases, contrib.io.DataLoaderIter and the small gluon names MXNet
scripts import (gluon.tensor_types, gluon.block.SymbolBlock)."""
import numpy as np
import pytest

import sparsym as mx


def test_contrib_ndarray_and_symbol_are_the_contrib_front_ends():
    import sparsym.contrib.ndarray as cnd
    import sparsym.contrib.symbol as csym
    assert cnd is mx.nd.contrib and mx.contrib.ndarray is mx.nd.contrib
    assert csym is mx.sym.contrib and mx.contrib.sym is mx.sym.contrib
    x = mx.nd.array([[1., 2.], [3., 4.]])
    assert cnd.index_copy(x, mx.nd.array([1]), mx.nd.array([[9., 9.]])).asnumpy()[1].tolist() \
        == [9., 9.]


def test_gluon_names():
    from sparsym.gluon.block import SymbolBlock
    assert SymbolBlock is mx.gluon.SymbolBlock
    assert isinstance(mx.nd.zeros(1), mx.gluon.tensor_types)
    assert isinstance(mx.sym.var("x"), mx.gluon.tensor_types)
    from sparsym.contrib.autograd import zeros_like
    assert zeros_like(mx.nd.ones((2, 3))).shape == (2, 3)


def test_dataloader_iter_pads_the_last_batch_and_trains_a_module():
    from sparsym.contrib.io import DataLoaderIter
    rng = np.random.RandomState(0)
    x = rng.uniform(size=(10, 3)).astype("float32")
    y = (x.sum(1) > 1.5).astype("float32")
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, y), batch_size=4)
    it = DataLoaderIter(loader)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    assert it.provide_data[0].shape == (4, 3) and it.provide_label[0].name == "softmax_label"
    np.testing.assert_array_equal(batches[2].data[0].asnumpy()[:2], x[8:])
    np.testing.assert_array_equal(batches[2].data[0].asnumpy()[2:], 0)
    it.reset()
    assert len(list(it)) == 3
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2),
                               name="softmax")
    mod = mx.mod.Module(net)
    mod.fit(it, num_epoch=2, optimizer_params={"learning_rate": 0.1})
    assert mod.score(it, "acc")[0][0] == "accuracy"


def test_dataloader_iter_wants_pairs():
    from sparsym.contrib.io import DataLoaderIter
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(np.zeros((4, 2))), batch_size=2)
    with pytest.raises(ValueError, match=r"\(data, label\) batches"):
        DataLoaderIter(loader)


def test_tensorboard_callback_writes_prefixed_scalars(monkeypatch, tmp_path):
    import sys
    import types

    from sparsym.contrib import tensorboard
    written = []

    class Writer:
        def __init__(self, logdir):
            self.logdir = logdir

        def add_scalar(self, tag, value, global_step):
            written.append((tag, value, global_step))

    monkeypatch.setitem(sys.modules, "mxboard", types.SimpleNamespace(SummaryWriter=Writer))
    cb = tensorboard.LogMetricsCallback(str(tmp_path), prefix="train")
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0.1, 0.9], [0.2, 0.8]])])
    cb(mx.model.BatchEndParam(epoch=3, nbatch=0, eval_metric=metric, locals=None))
    assert written == [("train-accuracy", 0.5, 3)]
    for name in tensorboard._WRITERS:
        monkeypatch.setitem(sys.modules, name, None)     # none importable
    with pytest.raises(ImportError, match="pip install mxboard"):
        tensorboard.LogMetricsCallback(str(tmp_path))


