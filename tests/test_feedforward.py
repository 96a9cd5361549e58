"""mx.model.FeedForward (MXNet's legacy model API) and the rest of mx.model."""
import warnings

import numpy as np
import pytest

import sparsym as mx


def _data(n=100):
    rs = np.random.RandomState(0)
    x = rs.randn(n, 5).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.float32)


def _net():
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _model(**kw):
    with pytest.warns(DeprecationWarning, match="FeedForward has been deprecated"):
        return mx.model.FeedForward(_net(), **kw)


def test_fit_predict_score_save_load(tmp_path):
    x, y = _data()
    model = _model(num_epoch=5, numpy_batch_size=30, learning_rate=0.5,
                   initializer=mx.init.Xavier())
    epochs = []
    model.fit(x, y, eval_data=(x, y), epoch_end_callback=lambda e, s, a, b: epochs.append(e))
    assert epochs == [0, 1, 2, 3, 4]
    assert sorted(model.arg_params) == ["fc_bias", "fc_weight"] and model.aux_params == {}
    p = model.predict(x)
    assert isinstance(p, np.ndarray) and p.shape == (100, 2) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(axis=1), 1, rtol=1e-5)
    assert model.score(mx.io.NDArrayIter(x, y, batch_size=30)) > 0.9
    out, data, label = model.predict(mx.io.NDArrayIter(x, y, batch_size=30), return_data=True)
    assert out.shape == (100, 2)  # the padding of the last batch is dropped
    np.testing.assert_array_equal(data, x)
    np.testing.assert_array_equal(label, y)
    assert model.predict(x, num_batch=2).shape == (60, 2)
    prefix = str(tmp_path / "ff")
    model.save(prefix)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loaded = mx.model.FeedForward.load(prefix, 5)
    assert loaded.begin_epoch == 5
    np.testing.assert_allclose(loaded.predict(x), p, rtol=1e-6)


def test_create_epoch_size_and_optimizer_object():
    x, y = _data(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model = mx.model.FeedForward.create(_net(), x, y, num_epoch=2, numpy_batch_size=20,
                                            learning_rate=0.1)
    assert isinstance(model, mx.model.FeedForward) and model.predict(x).shape == (60, 2)
    batches = []
    model = _model(num_epoch=2, epoch_size=2, numpy_batch_size=20,
                   optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 20))
    model.fit(x, y, batch_end_callback=lambda p: batches.append((p.epoch, p.nbatch)))
    assert batches == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_errors():
    x, y = _data(10)
    model = _model(num_epoch=1)
    with pytest.raises(ValueError, match="y must be specified"):
        model.fit(x)
    with pytest.raises(TypeError, match="X must be DataIter"):
        model.fit("abc", y)
    with pytest.raises(ValueError, match="not equal"):
        model.fit(x, y[:5])
    with pytest.raises(ValueError, match="does not use: \\['foo'\\]"):
        _model(arg_params={"foo": mx.nd.ones(1)})
    kept = _model(arg_params={"foo": mx.nd.ones(1)}, allow_extra_params=True)
    assert kept.arg_params == {}
    with pytest.raises(mx.MXNetError, match="num_epoch"):
        _model().fit(x, y)
    with pytest.raises(NotImplementedError, match="DataParallelExecutorManager"):
        mx.model.DataParallelExecutorManager(_net(), [mx.cpu()], None, [], [], [])


def test_module_names():
    for name in ("BatchEndParam", "Context", "DataDesc", "LogValidationMetricsCallback",
                 "Uniform", "cpu", "get_updater", "save_checkpoint", "load_checkpoint",
                 "load_params"):
        assert hasattr(mx.model, name), name
    assert mx.model.nd is mx.nd and mx.model.sym is mx.sym and mx.model.kvs is mx.kv
    assert mx.model.BASE_ESTIMATOR is object and isinstance(mx.model.SKLEARN_INSTALLED, bool)


def test_callback_save_checkpoint_is_models():
    assert mx.callback.save_checkpoint is mx.model.save_checkpoint
