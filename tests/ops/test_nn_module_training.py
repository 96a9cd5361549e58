"""A small CNN (Convolution, BatchNorm, Activation, Pooling, Dropout, FullyConnected,
SoftmaxOutput) trains with Module.fit on a toy image task; BatchNorm's aux states update."""
import numpy as np

import sparsym as mx


def _toy_images(n, rng):
    """Label 1: a bright 3x3 patch in the top half; label 0: in the bottom half."""
    x = rng.normal(0, 0.3, size=(n, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 2, size=n)
    for i in range(n):
        r = rng.integers(0, 2) + (0 if y[i] else 4)
        c = rng.integers(0, 6)
        x[i, 0, r:r + 3, c:c + 3] += 1.5
    return x, y.astype(np.float32)


def _net():
    x = mx.sym.var("data")
    h = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=6, name="conv")
    h = mx.sym.BatchNorm(h, fix_gamma=False, name="bn")
    h = mx.sym.Activation(h, act_type="relu")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = mx.sym.Dropout(mx.sym.Flatten(h), p=0.2)
    h = mx.sym.FullyConnected(h, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def test_cnn_with_batchnorm_trains_with_module_fit():
    rng = np.random.default_rng(0)
    x, y = _toy_images(256, rng)
    train = mx.io.NDArrayIter(x, y, batch_size=32, shuffle=True)
    mod = mx.mod.Module(_net())
    mod.fit(train, num_epoch=4, optimizer="adam", optimizer_params={"learning_rate": 0.01},
            initializer=mx.init.Xavier(), eval_metric="acc")
    arg, aux = mod.get_params()
    assert sorted(aux) == ["bn_moving_mean", "bn_moving_var"]
    assert np.abs(aux["bn_moving_mean"].asnumpy()).sum() > 0
    assert not np.allclose(aux["bn_moving_var"].asnumpy(), 1.0)
    xt, yt = _toy_images(128, np.random.default_rng(1))
    score = dict(mod.score(mx.io.NDArrayIter(xt, yt, batch_size=32), "acc"))
    assert score["accuracy"] > 0.9, score
